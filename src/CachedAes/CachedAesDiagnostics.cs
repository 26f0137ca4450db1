using System;
using System.Reflection;
using System.Runtime.InteropServices;
using CachedCryptography.Selection;

namespace CachedCryptography;

/// <summary>
/// Which native path <see cref="CachedAes"/> chose in this process, and why a backend or a mode fell back.
/// </summary>
/// <remarks>
/// <para>The first <see cref="CachedAes"/> created in a process (or the first read of a member here) selects the backend:
/// it loads the platform's library (OpenSSL <c>libcrypto</c> on Linux, <c>bcrypt.dll</c> on Windows, CommonCrypto on
/// macOS) and runs a self-test of known answers from NIST SP 800-38A and RFC 5649 on reused handles, in both directions.
/// A backend whose ECB or key wrap fails is not used (everything runs on stock <see cref="System.Security.Cryptography.Aes"/>);
/// a backend whose CBC alone fails keeps its ECB handles and chains CBC over them in managed code. The outcome never
/// changes afterwards.</para>
/// <para>To take CachedAes out of the picture when you suspect a platform problem, force the stock path with the
/// AppContext switch <see cref="UseStockSwitchName"/> (for example <c>&lt;RuntimeHostConfigurationOption
/// Include="CachedAes.UseStockImplementation" Value="true" /&gt;</c> in the project file, or
/// <see cref="AppContext.SetSwitch(string, bool)"/> before the first <see cref="CachedAes"/> is created) or the environment
/// variable <see cref="UseStockEnvironmentVariable"/> set to <c>1</c> or <c>true</c>. Either one is enough; no native
/// library is loaded then.</para>
/// <para>The CPU intrinsics backend (<see cref="CachedAesBackend.CpuIntrinsics"/>: the processor's AES instructions through
/// .NET's hardware intrinsics, outside any FIPS boundary) is off unless asked for, with the AppContext switch
/// <see cref="UseCpuIntrinsicsSwitchName"/> (for example <c>&lt;RuntimeHostConfigurationOption
/// Include="CachedAes.UseCpuIntrinsics" Value="true" /&gt;</c> in the project file) or the environment variable
/// <see cref="UseCpuIntrinsicsEnvironmentVariable"/> set to <c>1</c> or <c>true</c>. It is refused, and the platform's
/// library used, when the stock path is forced, when the processor has no AES instructions, when the platform is in
/// FIPS mode (Linux: <c>/proc/sys/crypto/fips_enabled</c> or OpenSSL 3's default properties; Windows:
/// <c>BCryptGetFipsAlgorithmMode</c>; macOS has no such mode), or when it fails the self-test;
/// <see cref="CpuIntrinsicsRefusedReason"/> says which.</para>
/// <para>For a bug report, include the text of <see cref="Describe"/>.</para>
/// </remarks>
public static class CachedAesDiagnostics
{
    /// <summary>The AppContext switch that, set to true, forces the stock path: <c>CachedAes.UseStockImplementation</c>.</summary>
    public const string UseStockSwitchName = SelectionSwitches.StockSwitch;

    /// <summary>The environment variable that, set to <c>1</c> or <c>true</c>, forces the stock path: <c>CACHEDAES_USE_STOCK</c>.</summary>
    public const string UseStockEnvironmentVariable = SelectionSwitches.StockVariable;

    /// <summary>
    /// The AppContext switch that, set to true, asks for the CPU intrinsics backend (<see cref="CachedAesBackend.CpuIntrinsics"/>):
    /// <c>CachedAes.UseCpuIntrinsics</c>. Set to false, it rules the backend out whatever
    /// <see cref="UseCpuIntrinsicsEnvironmentVariable"/> says.
    /// </summary>
    public const string UseCpuIntrinsicsSwitchName = SelectionSwitches.CpuIntrinsicsSwitch;

    /// <summary>
    /// The environment variable that, set to <c>1</c> or <c>true</c>, asks for the CPU intrinsics backend when
    /// <see cref="UseCpuIntrinsicsSwitchName"/> is not set: <c>CACHEDAES_USE_CPU_INTRINSICS</c>.
    /// </summary>
    public const string UseCpuIntrinsicsEnvironmentVariable = SelectionSwitches.CpuIntrinsicsVariable;

    /// <summary>The backend that new <see cref="CachedAes"/> instances use (the same as their <see cref="CachedAes.Backend"/>).</summary>
    public static CachedAesBackend Backend => ProcessBackend.Selection.Backend.Kind;

    /// <summary>How ECB one-shots and RFC 5649 key wrap run.</summary>
    public static CachedAesPath Ecb => ProcessBackend.Selection.Ecb;

    /// <summary>How CBC one-shots run.</summary>
    public static CachedAesPath Cbc => ProcessBackend.Selection.Cbc;

    /// <summary>Why <see cref="Ecb"/> is not <see cref="CachedAesPath.Native"/> (the library is missing, the self-test step that failed,
    /// or what forced the stock path); null when it is native.</summary>
    public static string? EcbFallbackReason => ProcessBackend.Selection.EcbReason;

    /// <summary>Why <see cref="Cbc"/> is not <see cref="CachedAesPath.Native"/>; null when it is native.</summary>
    public static string? CbcFallbackReason => ProcessBackend.Selection.CbcReason;

    /// <summary>
    /// Why the CPU intrinsics backend was asked for but is not used: the stock path is forced, the processor has no AES
    /// instructions that .NET exposes, the platform is in FIPS mode, or the backend failed the self-test. Null when it was
    /// not asked for, or when it is in use (then <see cref="Backend"/> is <see cref="CachedAesBackend.CpuIntrinsics"/>).
    /// </summary>
    public static string? CpuIntrinsicsRefusedReason => ProcessBackend.Selection.CpuIntrinsicsRefusedReason;

    /// <summary>
    /// A few lines to paste into a bug report: the CachedAes and .NET versions, the OS, the backend and native library,
    /// how each mode runs and why, the self-test's verdicts and time, whether the stock path was forced, and whether the
    /// CPU intrinsics backend was asked for, and if so whether it is used or why not (with what the FIPS check found).
    /// </summary>
    /// <returns>The report, lines separated by <see cref="Environment.NewLine"/>.</returns>
    public static string Describe()
    {
        string version = typeof(CachedAesDiagnostics).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
            ?? typeof(CachedAesDiagnostics).Assembly.GetName().Version?.ToString()
            ?? "unknown";
        string header = $"CachedAes {version} on {RuntimeInformation.FrameworkDescription}, {RuntimeInformation.OSDescription} ({RuntimeInformation.RuntimeIdentifier})";
        return SelectionReport.Describe(ProcessBackend.Selection, header);
    }
}
