using System;
using System.Globalization;

namespace CachedCryptography.Selection;

/// <summary>The text of a <see cref="BackendSelection"/>: the multi-line report behind <see cref="CachedAesDiagnostics.Describe"/>.</summary>
internal static class SelectionReport
{
    /// <summary>
    /// <paramref name="header"/>, then one line each for the backend (with what it found, or why it was not created), the
    /// two modes, the self-test, the stock switch and the CPU intrinsics switch.
    /// </summary>
    public static string Describe(BackendSelection selection, string header)
    {
        ArgumentNullException.ThrowIfNull(selection);
        string backend = selection.Backend.Kind.ToString();
        if (selection.Native is not null)
        {
            backend += $" ({selection.Native.Description})";
        }

        string selfTest = selection.SelfTestResult is not SelfTest.Result verdict
            ? "not run"
            : string.Create(
                CultureInfo.InvariantCulture,
                $"ECB and key wrap {(verdict.EcbFailure is null ? "passed" : "FAILED")}, CBC {(verdict.CbcFailure is null ? "passed" : "FAILED")} ({selection.SelfTestTime.TotalMilliseconds:0.###} ms)");

        return string.Join(
            Environment.NewLine,
            header,
            $"Backend: {backend}",
            $"ECB and key wrap: {selection.Ecb}{(selection.EcbReason is null ? "" : $" ({selection.EcbReason})")}",
            $"CBC: {selection.Cbc}{(selection.CbcReason is null ? "" : $" ({selection.CbcReason})")}",
            $"Self-test: {selfTest}",
            $"Stock forced: {selection.StockForcedBy ?? "no"} (switch {SelectionSwitches.StockSwitch}, variable {SelectionSwitches.StockVariable})",
            $"CPU intrinsics: {DescribeCpuIntrinsics(selection)} (switch {SelectionSwitches.CpuIntrinsicsSwitch}, variable {SelectionSwitches.CpuIntrinsicsVariable})");
    }

    private static string DescribeCpuIntrinsics(BackendSelection selection)
    {
        if (selection.CpuIntrinsicsRequestedBy is null)
        {
            return "not requested";
        }

        string fips = selection.FipsCheck is null ? "" : $"; FIPS check: {selection.FipsCheck}";
        if (selection.CpuIntrinsicsRefusedReason is string refused)
        {
            return $"requested by {selection.CpuIntrinsicsRequestedBy}, NOT used: {refused}{fips}";
        }

        string platform = selection.Platform is null ? "" : $"; the platform's {selection.Platform.Kind} backend ({selection.Platform.Description}) is not used";
        return $"in use, requested by {selection.CpuIntrinsicsRequestedBy}{fips}{platform}";
    }
}
