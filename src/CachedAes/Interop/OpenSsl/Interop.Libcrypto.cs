using System;
using System.Reflection;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.OpenSsl;

internal static partial class Libcrypto
{
    /// <summary>
    /// The name every <c>LibraryImport</c> in this folder uses. It is not a file name: <see cref="EnsureResolver"/>
    /// maps it to <c>libcrypto.so.3</c> or, on older distributions, <c>libcrypto.so.1.1</c>.
    /// </summary>
    internal const string Name = "cachedaes-libcrypto";

    private static readonly string[] s_candidates = ["libcrypto.so.3", "libcrypto.so.1.1"];

    private static readonly Lazy<(IntPtr Handle, string? File)> s_library = new(Load);

    /// <summary>The file that was loaded (for example <c>libcrypto.so.3</c>), or null when none was found.</summary>
    public static string? LoadedFile => s_library.Value.File;

    private static (IntPtr, string?) Load()
    {
        foreach (string candidate in s_candidates)
        {
            if (NativeLibrary.TryLoad(candidate, out IntPtr handle))
            {
                return (handle, candidate);
            }
        }

        return (IntPtr.Zero, null);
    }

    /// <summary>
    /// Registers the resolver for <see cref="Name"/> (once per process) and loads the library.
    /// </summary>
    /// <exception cref="PlatformNotSupportedException">Neither libcrypto.so.3 nor libcrypto.so.1.1 can be loaded.</exception>
    public static void EnsureResolver()
    {
        if (s_library.Value.Handle == IntPtr.Zero)
        {
            throw new PlatformNotSupportedException(
                "CachedAes needs OpenSSL's libcrypto on Linux, but neither libcrypto.so.3 nor libcrypto.so.1.1 could be loaded.");
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
}
