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

    /// <summary>The platform's backend as probed, before the self-test; null when there is none or none was probed.</summary>
    public CipherBackend? Native { get; init; }

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

    /// <summary>What a platform probe found: a backend, or why there is none.</summary>
    internal readonly record struct PlatformProbe(CipherBackend? Backend, string? FailureReason);

    /// <summary>
    /// Chooses: the stock path when <paramref name="stockForcedBy"/> is set (the platform is then not even probed, so no
    /// native library is loaded); else the probed backend if it passes the self-test; CBC composed over its verified
    /// ECB handle if only CBC fails; the stock path if ECB or key wrap fails or there is no backend.
    /// </summary>
    public static BackendSelection Select(string? stockForcedBy, Func<PlatformProbe> probe)
    {
        ArgumentNullException.ThrowIfNull(probe);
        if (stockForcedBy is not null)
        {
            return Stock($"the stock path was forced by {stockForcedBy}") with { StockForcedBy = stockForcedBy };
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

        string? value = environmentValue?.Trim();
        if (value is not null && (value == "1" || value.Equals("true", StringComparison.OrdinalIgnoreCase)))
        {
            return $"the environment variable {CachedAesDiagnostics.UseStockEnvironmentVariable}={value}";
        }

        return null;
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
            $"Stock forced: {StockForcedBy ?? "no"} (switch {CachedAesDiagnostics.UseStockSwitchName}, variable {CachedAesDiagnostics.UseStockEnvironmentVariable})");
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
