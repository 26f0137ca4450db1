using System;
using System.Diagnostics.CodeAnalysis;
using System.IO;
using System.Runtime.Versioning;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.OpenSsl;

/// <summary>Linux's row of the process's backend table: <see cref="OpenSslBackend"/>, and Linux's FIPS mode.</summary>
/// <remarks>
/// <para>FIPS mode: the kernel's flag <c>/proc/sys/crypto/fips_enabled</c> (<c>1</c> in FIPS mode; absent on kernels
/// built without FIPS support) and, on OpenSSL 3, <c>EVP_default_properties_is_fips_enabled</c> of the default library
/// context (what a FIPS-mode <c>openssl.cnf</c> sets, whatever the kernel says). Either one is FIPS mode. OpenSSL 1.1 is
/// not asked (its FIPS mode needs a separately built FIPS library, which the .NET runtime does not use).</para>
/// <para>When an answer cannot be read (an error reading the kernel's flag, OpenSSL 3 failing to answer), the platform
/// counts as in FIPS mode. A process with no libcrypto at all asks only the kernel: no OpenSSL configuration can apply
/// to it.</para>
/// </remarks>
internal sealed class OpenSslPlatform : PlatformBackend
{
    /// <summary>The kernel's FIPS flag on Linux.</summary>
    internal const string KernelFipsFlag = "/proc/sys/crypto/fips_enabled";

    /// <inheritdoc />
    public override bool IsCurrentPlatform => OperatingSystem.IsLinux();

    /// <inheritdoc />
    [SupportedOSPlatform("linux")]
    protected override bool TryCreateHere([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason) =>
        OpenSslBackend.TryCreate(out backend, out reason);

    /// <inheritdoc />
    public override FipsMode CheckFipsMode() => FromLinux(ReadKernelFlag(), ReadOpenSslFlag());

    /// <summary>
    /// The verdict from the kernel flag file's text (null when the file does not exist; a text starting with
    /// <c>error:</c> when it could not be read) and OpenSSL's answer (null when OpenSSL 3 was not asked; a text saying why).
    /// </summary>
    internal static FipsMode FromLinux(string? kernelFlag, (int? Enabled, string Detail) openSsl)
    {
        string? trimmed = kernelFlag?.Trim();
        bool kernelUnreadable = trimmed is not null && trimmed.StartsWith("error:", StringComparison.Ordinal);
        bool kernelFips = trimmed == "1";
        string kernel = trimmed is null ? $"{KernelFipsFlag} absent" : $"{KernelFipsFlag} = {trimmed}";
        bool openSslFips = openSsl.Enabled is int answer && answer != 0;
        return new(kernelFips || kernelUnreadable || openSslFips, $"{kernel}; {openSsl.Detail}");
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

    private static string? ReadKernelFlag()
    {
        try
        {
            return File.ReadAllText(KernelFipsFlag);
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

    private static (int? Enabled, string Detail) ReadOpenSslFlag() =>
        AskOpenSsl(
            () =>
            {
                Libcrypto.EnsureResolver();
                return Libcrypto.OpenSSL_version_num();
            },
            () => Libcrypto.EVP_default_properties_is_fips_enabled(IntPtr.Zero));
}
