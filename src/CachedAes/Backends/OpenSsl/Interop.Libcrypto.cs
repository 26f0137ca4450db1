using System;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Backends.OpenSsl;

internal static unsafe partial class Libcrypto
{
    /// <summary>
    /// The name every <c>LibraryImport</c> in this folder uses. It is not a file name: <see cref="EnsureResolver"/>
    /// maps it to the libcrypto that the .NET runtime itself uses (see <see cref="Load"/>).
    /// </summary>
    internal const string Name = "cachedaes-libcrypto";

    /// <summary>The environment variable through which the runtime's OpenSSL shim picks a <c>libssl.so.&lt;value&gt;</c> first.</summary>
    internal const string RuntimeOverrideVariable = "CLR_OPENSSL_VERSION_OVERRIDE";

    // The runtime's shim ignores an override longer than this (its MaxVersionStringLength).
    private const int MaxOverrideLength = 32;

    private static readonly Lazy<Loaded> s_library = new(Load);

    /// <summary>The file that was loaded (for example <c>libcrypto.so.3</c>), or null when none was.</summary>
    public static string? LoadedFile => s_library.Value.File;

    /// <summary>
    /// The sonames to try, in order, for the libcrypto whose <c>OPENSSL_VERSION_NUMBER</c> is
    /// <paramref name="runtimeVersion"/> (what the runtime reports) when the runtime's override variable holds
    /// <paramref name="runtimeOverride"/>. The runtime loads <c>libssl.so.&lt;override&gt;</c> first when the variable is set,
    /// else <c>libssl.so.3</c> then <c>libssl.so.1.1</c>, and takes libcrypto from libssl's dependency, which OpenSSL
    /// names with the same suffix; so the override's suffix comes first, then the one for the runtime's major version.
    /// </summary>
    internal static IReadOnlyList<string> Candidates(long runtimeVersion, string? runtimeOverride)
    {
        var names = new List<string>(2);
        if (!string.IsNullOrEmpty(runtimeOverride) && runtimeOverride.Length <= MaxOverrideLength && runtimeOverride.IndexOf('/') < 0)
        {
            names.Add("libcrypto.so." + runtimeOverride);
        }

        // OPENSSL_VERSION_NUMBER: 0xMNN00PP0 from 3.0 on (M = major), 0xMNNFFPPS before (1.1.x = 0x101xxxxx).
        long major = runtimeVersion >> 28;
        string? byVersion = major >= 3
            ? "libcrypto.so." + major.ToString(CultureInfo.InvariantCulture)
            : (runtimeVersion >> 20) == 0x101 ? "libcrypto.so.1.1" : null;
        if (byVersion is not null && !names.Contains(byVersion))
        {
            names.Add(byVersion);
        }

        return names;
    }

    /// <summary>
    /// Loads the libcrypto build the runtime already uses, so that the process never holds two. The runtime's version
    /// comes from <see cref="SafeEvpPKeyHandle.OpenSslVersion"/> (reading it makes the runtime load its OpenSSL if it had
    /// not yet); each candidate soname is loaded (the dynamic loader returns the object already in the process when the
    /// soname matches) and kept only if its <c>OpenSSL_version_num()</c> is the runtime's exactly. A candidate that is
    /// a different build is unloaded at once, before anything but that version query ran. If no candidate agrees (for
    /// example the runtime uses a libcrypto under a name this code does not guess), CachedAes does not use OpenSSL at
    /// all: the backend is unavailable and every call takes the stock path, which uses the runtime's OpenSSL.
    /// </summary>
    private static Loaded Load()
    {
        if (!OperatingSystem.IsLinux())
        {
            return new(IntPtr.Zero, null, "libcrypto is only used on Linux");
        }

        long runtimeVersion;
        try
        {
            runtimeVersion = SafeEvpPKeyHandle.OpenSslVersion;
        }
        catch (PlatformNotSupportedException)
        {
            return new(IntPtr.Zero, null, "the .NET runtime itself found no usable OpenSSL");
        }

        IReadOnlyList<string> candidates = Candidates(runtimeVersion, Environment.GetEnvironmentVariable(RuntimeOverrideVariable));
        var tried = new List<string>(candidates.Count);
        foreach (string candidate in candidates)
        {
            if (!NativeLibrary.TryLoad(candidate, out IntPtr handle))
            {
                tried.Add($"{candidate} (not found)");
                continue;
            }

            ulong version = NativeLibrary.TryGetExport(handle, "OpenSSL_version_num", out IntPtr export)
                ? ((delegate* unmanaged<nuint>)export)()
                : 0;
            if (version == (ulong)runtimeVersion)
            {
                return new(handle, candidate, null);
            }

            NativeLibrary.Free(handle);
            tried.Add(string.Create(CultureInfo.InvariantCulture, $"{candidate} (OPENSSL_VERSION_NUMBER 0x{version:x}: a different build, unloaded)"));
        }

        return new(IntPtr.Zero, null, string.Create(
            CultureInfo.InvariantCulture,
            $"no libcrypto matching the runtime's OpenSSL (OPENSSL_VERSION_NUMBER 0x{runtimeVersion:x}) could be loaded; tried: {(tried.Count == 0 ? "nothing" : string.Join(", ", tried))}"));
    }

    /// <summary>
    /// Registers the resolver for <see cref="Name"/> (once per process) and loads the library.
    /// </summary>
    /// <exception cref="PlatformNotSupportedException">No libcrypto agreeing with the runtime's could be loaded.</exception>
    public static void EnsureResolver()
    {
        Loaded loaded = s_library.Value;
        if (loaded.Handle == IntPtr.Zero)
        {
            throw new PlatformNotSupportedException($"CachedAes needs OpenSSL's libcrypto on Linux, but {loaded.Error}.");
        }

        _ = s_registered.Value;
    }

    private static readonly Lazy<bool> s_registered = new(() =>
    {
        NativeLibrary.SetDllImportResolver(typeof(Libcrypto).Assembly, Resolve);
        return true;
    });

    private static IntPtr Resolve(string libraryName, Assembly assembly, DllImportSearchPath? searchPath) =>
        libraryName == Name ? s_library.Value.Handle : IntPtr.Zero;

    /// <summary><c>unsigned long OpenSSL_version_num(void)</c> (1.1.0 and later); <c>unsigned long</c> is 64-bit on Linux.</summary>
    [LibraryImport(Name)]
    internal static partial nuint OpenSSL_version_num();

    /// <summary>
    /// <c>int EVP_default_properties_is_fips_enabled(OSSL_LIB_CTX *libctx)</c> (OpenSSL 3.0 and later): 1 when the
    /// library context's default properties ask for FIPS implementations (<c>fips=yes</c>, as a FIPS-mode system
    /// configuration sets them), else 0. <see cref="IntPtr.Zero"/> is the default library context, the one the .NET
    /// runtime and CachedAes use.
    /// </summary>
    [LibraryImport(Name)]
    internal static partial int EVP_default_properties_is_fips_enabled(IntPtr libraryContext);

    private readonly record struct Loaded(IntPtr Handle, string? File, string? Error);
}
