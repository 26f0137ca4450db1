using System;
using System.Diagnostics;
using CachedCryptography.Backends.CbcOverEcb;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// How the process's backend is chosen, from what the switches asked (<see cref="SelectionSwitches"/>) and what the probes
/// found: the stock path when forced; else the CPU intrinsics backend when requested, usable and self-tested; else the
/// platform's backend, self-tested, with CBC composed over its ECB handles when only CBC fails; else the stock path.
/// </summary>
internal static class SelectionPolicy
{
    /// <summary>What a platform probe found: a backend, or why there is none.</summary>
    internal readonly record struct PlatformProbe(CipherBackend? Backend, string? FailureReason);

    /// <summary>
    /// What the CPU intrinsics probe found: the backend, or why it may not be used (no AES instructions, FIPS mode); and
    /// what the FIPS check found, when it ran.
    /// </summary>
    internal readonly record struct CpuIntrinsicsProbe(CipherBackend? Backend, string? RefusedReason, string? FipsCheck);

    /// <summary>A request for the CPU intrinsics backend: what made it, and the probe to run.</summary>
    internal readonly record struct CpuIntrinsicsRequest(string RequestedBy, Func<CpuIntrinsicsProbe> Probe);

    /// <summary>
    /// Chooses: the stock path when <paramref name="stockForcedBy"/> is set (the platform is then not even probed, so no
    /// native library is loaded); else, when <paramref name="cpuIntrinsics"/> is requested, the CPU intrinsics backend if
    /// its probe finds it usable (instructions present, platform not in FIPS mode) and it passes the whole self-test
    /// (any failure falls back to the platform); else the probed backend if it passes the self-test; CBC composed over
    /// its verified ECB handle if only CBC fails; the stock path if ECB or key wrap fails or there is no backend.
    /// </summary>
    public static BackendSelection Select(string? stockForcedBy, Func<PlatformProbe> probe, CpuIntrinsicsRequest? cpuIntrinsics = null)
    {
        ArgumentNullException.ThrowIfNull(probe);
        string? cpuRequestedBy = cpuIntrinsics?.RequestedBy;
        if (stockForcedBy is not null)
        {
            return Stock($"the stock path was forced by {stockForcedBy}") with
            {
                StockForcedBy = stockForcedBy,
                CpuIntrinsicsRequestedBy = cpuRequestedBy,
                CpuIntrinsicsRefusedReason = cpuRequestedBy is null ? null : "the stock path is forced, which takes precedence",
            };
        }

        PlatformProbe found;
        try
        {
            found = probe();
        }
        catch (Exception e)
        {
            // Selection must never make CachedAes unusable: whatever the probe throws means "no native backend".
            found = new PlatformProbe(null, $"probing the native library threw {e.GetType().Name}: {e.Message}");
        }

        string? cpuRefused = null;
        string? fipsCheck = null;
        if (cpuIntrinsics is CpuIntrinsicsRequest request)
        {
            if (SelectCpuIntrinsics(request, found, out cpuRefused, out fipsCheck) is BackendSelection chosen)
            {
                return chosen;
            }
        }

        return SelectPlatform(found) with
        {
            Platform = found.Backend,
            CpuIntrinsicsRequestedBy = cpuRequestedBy,
            CpuIntrinsicsRefusedReason = cpuRefused,
            FipsCheck = fipsCheck,
        };
    }

    // The CPU intrinsics backend when its probe finds it usable and it passes the whole self-test; else null, with why.
    private static BackendSelection? SelectCpuIntrinsics(CpuIntrinsicsRequest request, PlatformProbe platform, out string? refused, out string? fipsCheck)
    {
        CpuIntrinsicsProbe cpu;
        try
        {
            cpu = request.Probe();
        }
        catch (Exception e)
        {
            cpu = new CpuIntrinsicsProbe(null, $"probing the CPU intrinsics threw {e.GetType().Name}: {e.Message}", null);
        }

        fipsCheck = cpu.FipsCheck;
        if (cpu.Backend is not CipherBackend hardware)
        {
            refused = cpu.RefusedReason ?? "the CPU intrinsics backend is not available here";
            return null;
        }

        long start = Stopwatch.GetTimestamp();
        SelfTest.Result verdict = SelfTest.Run(hardware);
        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        if (verdict.EcbFailure is not null || verdict.CbcFailure is not null)
        {
            refused = $"the {hardware.Kind} backend failed the self-test: {verdict.EcbFailure ?? verdict.CbcFailure}";
            return null;
        }

        refused = null;
        return new()
        {
            Backend = hardware,
            Ecb = CachedAesPath.Native,
            Cbc = CachedAesPath.Native,
            Native = hardware,
            Platform = platform.Backend,
            SelfTestResult = verdict,
            SelfTestTime = elapsed,
            CpuIntrinsicsRequestedBy = request.RequestedBy,
            FipsCheck = fipsCheck,
        };
    }

    // The platform's backend, verified.
    private static BackendSelection SelectPlatform(PlatformProbe found)
    {
        if (found.Backend is not CipherBackend native)
        {
            return Stock(found.FailureReason ?? "this platform has no native backend");
        }

        long start = Stopwatch.GetTimestamp();
        SelfTest.Result verdict = SelfTest.Run(native);
        string? composedFailure = null;
        CbcOverEcbBackend? composed = null;
        if (verdict.EcbFailure is null && verdict.CbcFailure is not null)
        {
            // Prove the fallback too before trusting it: the same CBC checks over the verified ECB handles.
            composed = new CbcOverEcbBackend(native);
            composedFailure = SelfTest.CheckCbc(composed);
        }

        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        string kind = native.Kind.ToString();
        BackendSelection chosen;
        if (verdict.EcbFailure is not null)
        {
            chosen = Stock($"the {kind} backend failed the self-test: {verdict.EcbFailure}");
        }
        else if (verdict.CbcFailure is null)
        {
            chosen = new() { Backend = native, Ecb = CachedAesPath.Native, Cbc = CachedAesPath.Native };
        }
        else
        {
            string cbcReason = $"the {kind} CBC handle failed the self-test: {verdict.CbcFailure}";
            chosen = composedFailure is null
                ? new() { Backend = composed!, Ecb = CachedAesPath.Native, Cbc = CachedAesPath.NativeEcbWithManagedChaining, CbcReason = cbcReason }
                : Stock($"{cbcReason}; and CBC composed over the {kind} ECB handle failed too: {composedFailure}");
        }

        return chosen with { Native = native, SelfTestResult = verdict, SelfTestTime = elapsed };
    }

    // Every call on stock Aes, for the same reason in both modes.
    private static BackendSelection Stock(string reason) => new()
    {
        Backend = StockBackend.Instance,
        Ecb = CachedAesPath.Stock,
        EcbReason = reason,
        Cbc = CachedAesPath.Stock,
        CbcReason = reason,
    };
}
