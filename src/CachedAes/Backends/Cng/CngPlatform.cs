using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// Windows' row of the process's backend table: <see cref="CngBackend"/>, and Windows' FIPS mode, which is the "use FIPS
/// compliant algorithms" policy as <c>BCryptGetFipsAlgorithmMode</c> reports it (a failed call counts as FIPS mode).
/// </summary>
internal sealed class CngPlatform : PlatformBackend
{
    /// <inheritdoc />
    public override bool IsCurrentPlatform => OperatingSystem.IsWindows();

    /// <inheritdoc />
    [SupportedOSPlatform("windows")]
    protected override bool TryCreateHere([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason) =>
        CngBackend.TryCreate(out backend, out reason);

    /// <inheritdoc />
    public override FipsMode CheckFipsMode()
    {
        if (!OperatingSystem.IsWindows())
        {
            return new(true, "BCryptGetFipsAlgorithmMode not asked: not Windows");
        }

        int status = BCrypt.BCryptGetFipsAlgorithmMode(out byte enabled);
        return FromWindows(status, enabled);
    }

    /// <summary>The verdict from <c>BCryptGetFipsAlgorithmMode</c>'s status and answer.</summary>
    internal static FipsMode FromWindows(int status, byte enabled) =>
        status != BCrypt.STATUS_SUCCESS
            ? new(true, BCrypt.Failure("BCryptGetFipsAlgorithmMode", status))
            : new(enabled != 0, $"BCryptGetFipsAlgorithmMode = {(enabled != 0 ? "TRUE" : "FALSE")}");
}
