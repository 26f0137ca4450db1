using System;
using System.Runtime.InteropServices;
using CachedCryptography.Backends;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.CommonCrypto;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// The backend of this process, chosen once, on first use: the platform's native backend after it passes the
/// <see cref="SelfTest"/>, with per-mode fallback (see <see cref="SelectionPolicy.Select"/>), or the stock path when the
/// AppContext switch or the environment variable forces it; or, only when its own switch or variable asks for it, the
/// CPU intrinsics backend (refused in FIPS mode, and after any self-test failure).
/// </summary>
internal static class ProcessBackend
{
    // The platforms' native backends, one row each, supplied by each backend's folder: the first row whose operating
    // system this is gives the process its platform backend and its FIPS mode.
    private static readonly PlatformBackend[] s_platforms = [new OpenSslPlatform(), new CngPlatform(), new CommonCryptoPlatform()];

    private static readonly Lazy<BackendSelection> s_selection = new(SelectForThisProcess);

    /// <summary>The backend new instances use.</summary>
    public static CipherBackend Current => s_selection.Value.Backend;

    /// <summary>The whole outcome, for the public diagnostics.</summary>
    public static BackendSelection Selection => s_selection.Value;

    /// <summary>This operating system's row of the table, or null where CachedAes has no native backend.</summary>
    internal static PlatformBackend? Platform { get; } = Array.Find(s_platforms, static platform => platform.IsCurrentPlatform);

    /// <summary>Whether the platform is in FIPS mode (<see cref="PlatformBackend.CheckFipsMode"/>).</summary>
    internal static PlatformBackend.FipsMode CheckFipsMode() =>
        Platform?.CheckFipsMode() ?? new(false, $"no FIPS mode check on {RuntimeInformation.RuntimeIdentifier}");

    private static BackendSelection SelectForThisProcess()
    {
        // Read once, here: changing a switch or variable later has no effect on this process.
        (string? stockForcedBy, string? cpuRequestedBy) = SelectionSwitches.FromProcess();
        BackendSelection selection = SelectionPolicy.Select(
            stockForcedBy,
            ProbePlatform,
            cpuRequestedBy is null ? null : new SelectionPolicy.CpuIntrinsicsRequest(cpuRequestedBy, ProbeCpuIntrinsics));
        CachedAesMetrics.PublishBackend(selection.Backend.Kind, selection.Ecb, selection.Cbc);
        return selection;
    }

    /// <summary>
    /// The CPU intrinsics backend, unverified, where the processor has AES instructions and the platform is not in FIPS
    /// mode (<see cref="CheckFipsMode"/>); else why not. Run after <see cref="ProbePlatform"/>, which loads the platform's
    /// library that the FIPS check asks.
    /// </summary>
    private static SelectionPolicy.CpuIntrinsicsProbe ProbeCpuIntrinsics()
    {
        if (!IntrinsicsBackend.TryCreate(out CipherBackend? backend, out string? reason))
        {
            return new(null, reason, null);
        }

        PlatformBackend.FipsMode fips = CheckFipsMode();
        return fips.Enabled
            ? new(null, $"the platform is in FIPS mode, so its own library stays in use ({fips.Detail})", fips.Detail)
            : new(backend, null, fips.Detail);
    }

    /// <summary>The real platform's backend, unverified, or why there is none.</summary>
    private static SelectionPolicy.PlatformProbe ProbePlatform()
    {
        if (Platform is null)
        {
            return new(null, $"CachedAes has no native backend for {RuntimeInformation.RuntimeIdentifier}");
        }

        _ = Platform.TryCreate(out CipherBackend? backend, out string? reason);
        return new(backend, reason);
    }
}
