using System;
using System.Diagnostics;
using System.Globalization;
using CachedCryptography.Interop.Stock;

namespace CachedCryptography.Interop;

/// <summary>
/// The outcome of choosing a backend: what new <see cref="CachedAes"/> instances use, how each mode runs, and why a
/// mode runs less natively than the platform offers. Made once per process by <see cref="CipherBackends"/>, and by
/// tests directly through <see cref="Select"/>.
/// </summary>
internal sealed class BackendSelection
{
    private BackendSelection(
        CipherBackend backend,
        CipherBackend? native,
        string? nativeDetail,
        CachedAesPath ecb,
        string? ecbReason,
        CachedAesPath cbc,
        string? cbcReason,
        string? stockForcedBy,
        BackendSelfTest.Result? selfTest,
        TimeSpan selfTestTime)
    {
        Backend = backend;
        Native = native;
        NativeDetail = nativeDetail;
        Ecb = ecb;
        EcbReason = ecbReason;
        Cbc = cbc;
        CbcReason = cbcReason;
        StockForcedBy = stockForcedBy;
        SelfTest = selfTest;
        SelfTestTime = selfTestTime;
    }

    /// <summary>The backend new instances use (possibly <see cref="StockBackend"/> or a <see cref="CbcOverEcbBackend"/>).</summary>
    public CipherBackend Backend { get; }

    /// <summary>The platform's backend as probed, before the self-test; null when there is none or none was probed.</summary>
    public CipherBackend? Native { get; }

    /// <summary>Which native library and which variant of it, for example <c>bcrypt.dll, opened AES providers</c>.</summary>
    public string? NativeDetail { get; }

    /// <summary>How ECB one-shots and key wrap run.</summary>
    public CachedAesPath Ecb { get; }

    /// <summary>Why <see cref="Ecb"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? EcbReason { get; }

    /// <summary>How CBC one-shots run.</summary>
    public CachedAesPath Cbc { get; }

    /// <summary>Why <see cref="Cbc"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? CbcReason { get; }

    /// <summary>What forced the stock path (the switch or the environment variable), or null.</summary>
    public string? StockForcedBy { get; }

    /// <summary>The self-test verdicts on <see cref="Native"/>, or null when no native backend was tested.</summary>
    public BackendSelfTest.Result? SelfTest { get; }

    /// <summary>How long the self-test took (zero when it did not run).</summary>
    public TimeSpan SelfTestTime { get; }

    /// <summary>What a platform probe found: a backend and its detail, or why there is none.</summary>
    internal readonly record struct PlatformProbe(CipherBackend? Backend, string? Detail, string? FailureReason);

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
            string reason = $"the stock path was forced by {stockForcedBy}";
            return Stock(null, null, reason, reason, stockForcedBy, null, TimeSpan.Zero);
        }

        PlatformProbe found;
        try
        {
            found = probe();
        }
        catch (Exception e)
        {
            // Selection must never make CachedAes unusable: whatever the probe throws means "no native backend".
            found = new PlatformProbe(null, null, $"probing the native library threw {e.GetType().Name}: {e.Message}");
        }

        if (found.Backend is not CipherBackend native)
        {
            string reason = found.FailureReason ?? "this platform has no native backend";
            return Stock(null, found.Detail, reason, reason, null, null, TimeSpan.Zero);
        }

        long start = Stopwatch.GetTimestamp();
        BackendSelfTest.Result verdict = BackendSelfTest.Run(native);
        string? composedFailure = null;
        CbcOverEcbBackend? composed = null;
        if (verdict.EcbFailure is null && verdict.CbcFailure is not null)
        {
            // Prove the fallback too before trusting it: the same CBC checks over the verified ECB handles.
            composed = new CbcOverEcbBackend(native);
            composedFailure = BackendSelfTest.CheckCbc(composed);
        }

        TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
        if (verdict.EcbFailure is null && verdict.CbcFailure is null)
        {
            return new BackendSelection(native, native, found.Detail, CachedAesPath.Native, null, CachedAesPath.Native, null, null, verdict, elapsed);
        }

        string kind = native.Kind.ToString();
        if (verdict.EcbFailure is not null)
        {
            string reason = $"the {kind} backend failed the self-test: {verdict.EcbFailure}";
            return Stock(native, found.Detail, reason, reason, null, verdict, elapsed);
        }

        string cbcReason = $"the {kind} CBC handle failed the self-test: {verdict.CbcFailure}";
        if (composedFailure is not null)
        {
            string reason = $"{cbcReason}; and CBC composed over the {kind} ECB handle failed too: {composedFailure}";
            return Stock(native, found.Detail, reason, reason, null, verdict, elapsed);
        }

        return new BackendSelection(composed!, native, found.Detail, CachedAesPath.Native, null, CachedAesPath.NativeEcbWithManagedChaining, cbcReason, null, verdict, elapsed);
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
        if (NativeDetail is not null)
        {
            backend += $" ({NativeDetail})";
        }

        string selfTest = SelfTest is not BackendSelfTest.Result verdict
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

    private static BackendSelection Stock(
        CipherBackend? native, string? detail, string ecbReason, string cbcReason, string? forcedBy, BackendSelfTest.Result? verdict, TimeSpan elapsed) =>
        new(StockBackend.Instance, native, detail, CachedAesPath.Stock, ecbReason, CachedAesPath.Stock, cbcReason, forcedBy, verdict, elapsed);
}
