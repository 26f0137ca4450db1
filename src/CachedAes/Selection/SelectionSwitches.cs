using System;

namespace CachedCryptography.Selection;

/// <summary>
/// What the switches ask of selection: the stock path forced, the CPU intrinsics backend requested. Each comes from an
/// AppContext switch and an environment variable, read once, by <see cref="FromProcess"/>; the rules that combine them
/// are the two <c>Read</c> methods.
/// </summary>
internal static class SelectionSwitches
{
    // The names, published as CachedAesDiagnostics' constants (selection does not use the public types above it).
    internal const string StockSwitch = "CachedAes.UseStockImplementation";
    internal const string StockVariable = "CACHEDAES_USE_STOCK";
    internal const string CpuIntrinsicsSwitch = "CachedAes.UseCpuIntrinsics";
    internal const string CpuIntrinsicsVariable = "CACHEDAES_USE_CPU_INTRINSICS";

    /// <summary>What forced the stock path and what requested the CPU intrinsics backend in this process (each null when nothing did).</summary>
    public static (string? StockForcedBy, string? CpuIntrinsicsRequestedBy) FromProcess()
    {
        bool? stockSwitch = AppContext.TryGetSwitch(StockSwitch, out bool stock) ? stock : null;
        string? stockVariable = Environment.GetEnvironmentVariable(StockVariable);
        bool? cpuSwitch = AppContext.TryGetSwitch(CpuIntrinsicsSwitch, out bool cpu) ? cpu : null;
        string? cpuVariable = Environment.GetEnvironmentVariable(CpuIntrinsicsVariable);
        return (ReadStockForcedBy(stockSwitch, stockVariable), ReadCpuIntrinsicsRequestedBy(cpuSwitch, cpuVariable));
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
            return $"the AppContext switch {StockSwitch}";
        }

        return IsTrue(environmentValue) is string value
            ? $"the environment variable {StockVariable}={value}"
            : null;
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
            return set ? $"the AppContext switch {CpuIntrinsicsSwitch}" : null;
        }

        return IsTrue(environmentValue) is string value
            ? $"the environment variable {CpuIntrinsicsVariable}={value}"
            : null;
    }

    // The variable's trimmed value when it is 1 or true (any case), else null.
    private static string? IsTrue(string? environmentValue)
    {
        string? value = environmentValue?.Trim();
        return value is not null && (value == "1" || value.Equals("true", StringComparison.OrdinalIgnoreCase)) ? value : null;
    }
}
