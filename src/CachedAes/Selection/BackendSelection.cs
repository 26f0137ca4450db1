using System;
using System.Diagnostics;
using System.Globalization;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// The outcome of choosing a backend: what new <see cref="CachedAes"/> instances use, how each mode runs, and why a
/// mode runs less natively than the platform offers. Made once per process by <see cref="ProcessBackend"/>, and by
/// tests directly through <see cref="Select"/>.
/// </summary>
internal sealed record BackendSelection
{
    private BackendSelection()
    {
    }

    /// <summary>The backend new instances use (possibly <see cref="StockBackend"/> or a <see cref="CbcOverEcbBackend"/>).</summary>
    public required CipherBackend Backend { get; init; }

    /// <summary>
    /// The backend that was self-tested and, if it passed, chosen: the platform's backend as probed, or the CPU
    /// intrinsics backend when it was requested and chosen; null when there is none or none was probed.
    /// </summary>
    public CipherBackend? Native { get; init; }

    /// <summary>The platform's backend as probed (whether or not it was chosen); null when there is none or none was probed.</summary>
    public CipherBackend? Platform { get; init; }

    /// <summary>How ECB one-shots and key wrap run.</summary>
    public required CachedAesPath Ecb { get; init; }

    /// <summary>Why <see cref="Ecb"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? EcbReason { get; init; }

    /// <summary>How CBC one-shots run.</summary>
    public required CachedAesPath Cbc { get; init; }

    /// <summary>Why <see cref="Cbc"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? CbcReason { get; init; }

    /// <summary>What forced the stock path (the switch or the environment variable), or null.</summary>
    public string? StockForcedBy { get; init; }

    /// <summary>The self-test verdicts on <see cref="Native"/>, or null when no native backend was tested.</summary>
    public SelfTest.Result? SelfTestResult { get; init; }

    /// <summary>How long the self-test took (zero when it did not run).</summary>
    public TimeSpan SelfTestTime { get; init; }

    /// <summary>What requested the CPU intrinsics backend (the switch or the environment variable), or null.</summary>
    public string? CpuIntrinsicsRequestedBy { get; init; }

    /// <summary>Why the CPU intrinsics backend was requested but is not used; null when it was not requested or is used.</summary>
    public string? CpuIntrinsicsRefusedReason { get; init; }

    /// <summary>What the FIPS mode check asked and found, when the CPU intrinsics backend was requested and it ran.</summary>
    public string? FipsCheck { get; init; }

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
            if (cpu.Backend is CipherBackend hardware)
            {
                long cpuStart = Stopwatch.GetTimestamp();
                SelfTest.Result cpuVerdict = SelfTest.Run(hardware);
                TimeSpan cpuElapsed = Stopwatch.GetElapsedTime(cpuStart);
                if (cpuVerdict.EcbFailure is null && cpuVerdict.CbcFailure is null)
                {
                    return new()
                    {
                        Backend = hardware,
                        Ecb = CachedAesPath.Native,
                        Cbc = CachedAesPath.Native,
                        Native = hardware,
                        Platform = found.Backend,
                        SelfTestResult = cpuVerdict,
                        SelfTestTime = cpuElapsed,
                        CpuIntrinsicsRequestedBy = request.RequestedBy,
                        FipsCheck = fipsCheck,
                    };
                }

                cpuRefused = $"the {hardware.Kind} backend failed the self-test: {cpuVerdict.EcbFailure ?? cpuVerdict.CbcFailure}";
            }
            else
            {
                cpuRefused = cpu.RefusedReason ?? "the CPU intrinsics backend is not available here";
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

    /// <summary>
    /// Whether the CPU intrinsics backend is requested, from the AppContext switch's value (null when unset) and the
    /// environment variable's value (null when unset): the switch set to true requests it; set to false it refuses it
    /// whatever the variable says (an application can rule it out in its project file); unset, the variable set to
    /// <c>1</c> or <c>true</c> (any case) requests it. Returns what requested it, or null.
    /// </summary>
    public static string? ReadCpuIntrinsicsRequestedBy(bool? switchValue, string? environmentValue)
    {
        if (switchValue is bool set)
        {
            return set ? $"the AppContext switch {CachedAesDiagnostics.UseCpuIntrinsicsSwitchName}" : null;
        }

        return IsTrue(environmentValue) is string value
            ? $"the environment variable {CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable}={value}"
            : null;
    }

    // The platform's backend, verified, as before the CPU intrinsics backend existed.
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

    /// <summary>
    /// Whether the stock path is forced, from the AppContext switch's value (null when unset) and the environment
    /// variable's value (null when unset): the switch set to true, or the variable set to <c>1</c> or <c>true</c>
    /// (any case), force it. Returns what forced it, or null.
    /// </summary>
    public static string? ReadStockForcedBy(bool? switchValue, string? environmentValue)
    {
        if (switchValue == true)
        {
            return $"the AppContext switch {CachedAesDiagnostics.UseStockSwitchName}";
        }

        return IsTrue(environmentValue) is string value
            ? $"the environment variable {CachedAesDiagnostics.UseStockEnvironmentVariable}={value}"
            : null;
    }

    // The variable's trimmed value when it is 1 or true (any case), else null.
    private static string? IsTrue(string? environmentValue)
    {
        string? value = environmentValue?.Trim();
        return value is not null && (value == "1" || value.Equals("true", StringComparison.OrdinalIgnoreCase)) ? value : null;
    }

    /// <summary>The multi-line report behind <see cref="CachedAesDiagnostics.Describe"/>.</summary>
    public string Describe(string header)
    {
        string backend = Backend.Kind.ToString();
        if (Native is not null)
        {
            backend += $" ({Native.Description})";
        }

        string selfTest = SelfTestResult is not SelfTest.Result verdict
            ? "not run"
            : string.Create(
                CultureInfo.InvariantCulture,
                $"ECB and key wrap {(verdict.EcbFailure is null ? "passed" : "FAILED")}, CBC {(verdict.CbcFailure is null ? "passed" : "FAILED")} ({SelfTestTime.TotalMilliseconds:0.###} ms)");

        return string.Join(
            Environment.NewLine,
            header,
            $"Backend: {backend}",
            $"ECB and key wrap: {Ecb}{(EcbReason is null ? "" : $" ({EcbReason})")}",
            $"CBC: {Cbc}{(CbcReason is null ? "" : $" ({CbcReason})")}",
            $"Self-test: {selfTest}",
            $"Stock forced: {StockForcedBy ?? "no"} (switch {CachedAesDiagnostics.UseStockSwitchName}, variable {CachedAesDiagnostics.UseStockEnvironmentVariable})",
            $"CPU intrinsics: {DescribeCpuIntrinsics()} (switch {CachedAesDiagnostics.UseCpuIntrinsicsSwitchName}, variable {CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable})");
    }

    private string DescribeCpuIntrinsics()
    {
        if (CpuIntrinsicsRequestedBy is null)
        {
            return "not requested";
        }

        string fips = FipsCheck is null ? "" : $"; FIPS check: {FipsCheck}";
        if (CpuIntrinsicsRefusedReason is string refused)
        {
            return $"requested by {CpuIntrinsicsRequestedBy}, NOT used: {refused}{fips}";
        }

        string platform = Platform is null ? "" : $"; the platform's {Platform.Kind} backend ({Platform.Description}) is not used";
        return $"in use, requested by {CpuIntrinsicsRequestedBy}{fips}{platform}";
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
