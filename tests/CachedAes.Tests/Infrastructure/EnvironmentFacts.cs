using System;
using System.Linq;
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
    /// The stock path not forced (neither <c>CACHEDAES_USE_STOCK</c> nor the AppContext switch) and the CPU intrinsics
    /// backend not requested (neither <c>CACHEDAES_USE_CPU_INTRINSICS</c> nor its switch), so the process selects its
    /// platform backend.
    /// </summary>
    StockNotForced = 4,

    /// <summary>
    /// An x86/x64 processor with AES-NI and SSSE3: the CPU intrinsics backend's AES-NI code, and the emulation of Arm's
    /// instructions that runs its Arm code, can run.
    /// </summary>
    AesNi = 8,

    /// <summary>
    /// A processor with AES instructions that .NET exposes (AES-NI, or Arm's), so that the CPU intrinsics backend exists
    /// (and is a row of the contract suites).
    /// </summary>
    CpuAesInstructions = 16,

    /// <summary>
    /// A C compiler (<c>cc</c> on the PATH) and OpenSSL's development headers (<c>/usr/include/openssl/engine.h</c>), to
    /// build a small ENGINE for the real libcrypto.
    /// </summary>
    OpenSslDevelopment = 32,
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
            if (SelectionSwitches.ReadStockForcedBy(switchValue, variable) is string forcedBy)
            {
                return $"needs the platform backend, but the stock path is forced by {forcedBy}";
            }

            bool? cpuSwitch = AppContext.TryGetSwitch(CachedAesDiagnostics.UseCpuIntrinsicsSwitchName, out bool cpuEnabled) ? cpuEnabled : null;
            string? cpuVariable = Environment.GetEnvironmentVariable(CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable);
            if (SelectionSwitches.ReadCpuIntrinsicsRequestedBy(cpuSwitch, cpuVariable) is string requestedBy)
            {
                return $"needs the platform backend, but the CPU intrinsics backend is requested by {requestedBy}";
            }
        }

        if (needs.HasFlag(Needs.AesNi) && !(System.Runtime.Intrinsics.X86.Aes.IsSupported && System.Runtime.Intrinsics.X86.Ssse3.IsSupported))
        {
            return $"needs an x86/x64 processor with AES-NI and SSSE3; this is {RuntimeInformation.ProcessArchitecture} without them";
        }

        if (needs.HasFlag(Needs.CpuAesInstructions) && !CachedCryptography.Backends.Intrinsics.IntrinsicsBackend.TryCreate(out _, out string? missing))
        {
            return $"needs the CPU intrinsics backend, but {missing}";
        }

        if (needs.HasFlag(Needs.OpenSslDevelopment) && !(OnPath("cc") && System.IO.File.Exists("/usr/include/openssl/engine.h")))
        {
            return "needs a C compiler (cc) and OpenSSL's headers (/usr/include/openssl/engine.h, from libssl-dev) to build a test ENGINE";
        }

        return null;
    }

    private static bool OnPath(string program) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "")
            .Split(System.IO.Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Any(folder => System.IO.File.Exists(System.IO.Path.Combine(folder, program)));
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
