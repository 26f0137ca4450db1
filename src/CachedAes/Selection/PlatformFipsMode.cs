using System;
using System.Globalization;
using System.IO;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.OpenSsl;

namespace CachedCryptography.Selection;

/// <summary>
/// Whether the platform runs in FIPS mode, asked before the CPU intrinsics backend may replace the platform's
/// library: in FIPS mode the platform's (validated) library stays, whatever was requested.
/// </summary>
/// <remarks>
/// <para>Linux: the kernel's flag <c>/proc/sys/crypto/fips_enabled</c> (<c>1</c> in FIPS mode; absent on kernels built
/// without FIPS support) and, on OpenSSL 3, <c>EVP_default_properties_is_fips_enabled</c> of the default library context
/// (what a FIPS-mode <c>openssl.cnf</c> sets, whatever the kernel says). Either one is FIPS mode. OpenSSL 1.1 is not
/// asked (its FIPS mode needs a separately built FIPS library, which the .NET runtime does not use).</para>
/// <para>Windows: <c>BCryptGetFipsAlgorithmMode</c>, the "use FIPS compliant algorithms" policy. macOS has no FIPS mode
/// switch (its libraries are validated as they are), so nothing is asked there: the request is granted.</para>
/// <para>When an answer cannot be read (an error reading the kernel's flag, OpenSSL 3 failing to answer, a failed
/// Windows call), the platform counts as in FIPS mode: the request was for leaving the validated library, so doubt keeps
/// it. A process with no libcrypto at all asks only the kernel: no OpenSSL configuration can apply to it.</para>
/// </remarks>
internal static class PlatformFipsMode
{
    /// <summary>The kernel's FIPS flag on Linux.</summary>
    internal const string LinuxKernelFlag = "/proc/sys/crypto/fips_enabled";

    /// <summary>What was asked and what it said.</summary>
    /// <param name="Enabled">True in FIPS mode, or when the answer could not be read.</param>
    /// <param name="Detail">What was asked and each answer, for diagnostics.</param>
    internal readonly record struct Verdict(bool Enabled, string Detail);

    /// <summary>Asks this platform.</summary>
    public static Verdict Check()
    {
        if (OperatingSystem.IsLinux())
        {
            return FromLinux(ReadKernelFlag(), ReadOpenSslFlag());
        }

        if (OperatingSystem.IsWindows())
        {
            int status = BCrypt.BCryptGetFipsAlgorithmMode(out byte enabled);
            return FromWindows(status, enabled);
        }

        return new(false, OperatingSystem.IsMacOS()
            ? "macOS has no FIPS mode switch: nothing to check"
            : "no FIPS mode check on this platform");
    }

    /// <summary>
    /// The Linux verdict from the kernel flag file's text (null when the file does not exist; a text starting with
    /// <c>error:</c> when it could not be read) and OpenSSL's answer (null when OpenSSL 3 was not asked; a text saying why).
    /// </summary>
    internal static Verdict FromLinux(string? kernelFlag, (int? Enabled, string Detail) openSsl)
    {
        string? trimmed = kernelFlag?.Trim();
        bool kernelUnreadable = trimmed is not null && trimmed.StartsWith("error:", StringComparison.Ordinal);
        bool kernelFips = trimmed == "1";
        string kernel = trimmed is null ? $"{LinuxKernelFlag} absent" : $"{LinuxKernelFlag} = {trimmed}";
        bool openSslFips = openSsl.Enabled is int answer && answer != 0;
        return new(kernelFips || kernelUnreadable || openSslFips, $"{kernel}; {openSsl.Detail}");
    }

    /// <summary>The Windows verdict from <c>BCryptGetFipsAlgorithmMode</c>'s status and answer.</summary>
    internal static Verdict FromWindows(int status, byte enabled) =>
        status != BCrypt.STATUS_SUCCESS
            ? new(true, string.Create(CultureInfo.InvariantCulture, $"BCryptGetFipsAlgorithmMode failed with NTSTATUS 0x{status:x8}"))
            : new(enabled != 0, $"BCryptGetFipsAlgorithmMode = {(enabled != 0 ? "TRUE" : "FALSE")}");

    private static string? ReadKernelFlag()
    {
        try
        {
            return File.ReadAllText(LinuxKernelFlag);
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            return null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return $"error: {e.GetType().Name}";
        }
    }

    /// <summary>
    /// OpenSSL's answer, from <paramref name="version"/> (<c>OpenSSL_version_num</c>, after loading the runtime's
    /// libcrypto) and <paramref name="isFipsEnabled"/> (<c>EVP_default_properties_is_fips_enabled</c> of the default
    /// library context): null when OpenSSL is not asked (no libcrypto in this process, or OpenSSL 1.1), 1 when OpenSSL 3
    /// says FIPS or could not answer, else 0; and a text saying what happened.
    /// </summary>
    internal static (int? Enabled, string Detail) AskOpenSsl(Func<nuint> version, Func<int> isFipsEnabled)
    {
        nuint number;
        try
        {
            number = version();
        }
        catch (Exception e) when (e is PlatformNotSupportedException or DllNotFoundException or EntryPointNotFoundException)
        {
            // No libcrypto agreeing with the runtime's, or a runtime without OpenSSL at all: nothing in this process runs
            // OpenSSL, so no OpenSSL configuration applies, and the kernel's flag decides alone.
            return (null, $"OpenSSL not asked: {e.GetType().Name}: {e.Message}");
        }

        if (number < 0x3000_0000)
        {
            return (null, "OpenSSL 1.1: not asked");
        }

        try
        {
            int enabled = isFipsEnabled();
            return (enabled, $"OpenSSL EVP_default_properties_is_fips_enabled = {enabled}");
        }
#pragma warning disable CA1031 // any failure to answer is an answer: doubt keeps the platform's library
        catch (Exception e)
#pragma warning restore CA1031
        {
            return (1, $"OpenSSL 3 EVP_default_properties_is_fips_enabled could not be asked ({e.GetType().Name}: {e.Message}): counted as FIPS mode");
        }
    }

    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    private static (int? Enabled, string Detail) ReadOpenSslFlag() =>
        AskOpenSsl(
            () =>
            {
                Libcrypto.EnsureResolver();
                return Libcrypto.OpenSSL_version_num();
            },
            () => Libcrypto.EVP_default_properties_is_fips_enabled(IntPtr.Zero));
}
