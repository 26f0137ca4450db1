using System;
using System.Runtime.InteropServices;
using CachedCryptography.Selection;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>What a test needs from the process it runs in; see <see cref="EnvironmentFactAttribute"/>.</summary>
[Flags]
public enum Needs
{
    /// <summary>Linux, where the platform backend is OpenSSL.</summary>
    Linux = 1,

    /// <summary>Windows or macOS, where the platform backend is CNG or CommonCrypto.</summary>
    WindowsOrMacOS = 2,

    /// <summary>
    /// The stock path not forced (neither <c>CACHEDAES_USE_STOCK</c> nor the AppContext switch), so the process selects
    /// its platform backend.
    /// </summary>
    StockNotForced = 4,
}

/// <summary>
/// Decides, from the environment, whether a test can run in this process. xunit 2 has no way for a running test to
/// report itself skipped, so the decision is made when the test is discovered: the attributes below set xunit's
/// <c>Skip</c> to the reason, and such a test is reported as skipped with it, never as passed.
/// </summary>
internal static class TestEnvironment
{
    /// <summary>Why a test that <paramref name="needs"/> these cannot run here, or null when it can.</summary>
    public static string? WhyNot(Needs needs)
    {
        if (needs.HasFlag(Needs.Linux) && !OperatingSystem.IsLinux())
        {
            return $"needs Linux (the OpenSSL backend); this is {RuntimeInformation.OSDescription}";
        }

        if (needs.HasFlag(Needs.WindowsOrMacOS) && !(OperatingSystem.IsWindows() || OperatingSystem.IsMacOS()))
        {
            return $"needs Windows or macOS (the CNG or CommonCrypto backend); this is {RuntimeInformation.OSDescription}";
        }

        if (needs.HasFlag(Needs.StockNotForced))
        {
            // The library's own rule, read the way selection reads it (without selecting anything).
            bool? switchValue = AppContext.TryGetSwitch(CachedAesDiagnostics.UseStockSwitchName, out bool enabled) ? enabled : null;
            string? variable = Environment.GetEnvironmentVariable(CachedAesDiagnostics.UseStockEnvironmentVariable);
            if (BackendSelection.ReadStockForcedBy(switchValue, variable) is string forcedBy)
            {
                return $"needs the platform backend, but the stock path is forced by {forcedBy}";
            }
        }

        return null;
    }
}

/// <summary>A fact that runs only where the process has what it <see cref="Needs"/>; elsewhere it is reported as skipped, with the reason.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
public sealed class EnvironmentFactAttribute : FactAttribute
{
    public EnvironmentFactAttribute(Needs needs)
    {
        Needs = needs;
        Skip = TestEnvironment.WhyNot(needs);
    }

    public Needs Needs { get; }
}

/// <summary>A theory that runs only where the process has what it <see cref="Needs"/>; elsewhere it is reported as skipped, with the reason.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
public sealed class EnvironmentTheoryAttribute : TheoryAttribute
{
    public EnvironmentTheoryAttribute(Needs needs)
    {
        Needs = needs;
        Skip = TestEnvironment.WhyNot(needs);
    }

    public Needs Needs { get; }
}
