using System;
using System.Collections.Generic;
using System.IO;
using CachedCryptography.Backends;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// When the CPU intrinsics backend is used: only when requested (the switch, or the variable when the switch is unset),
/// never over a forced stock path, never in FIPS mode, never after a self-test failure; each time the platform's backend
/// stays and the diagnostics say why. Selection is run directly (<see cref="SelectionPolicy.Select"/>) with chosen
/// probes, and in fresh processes (<see cref="ChildProcess"/>) the way an application switches it on.
/// </summary>
public sealed class IntrinsicsSelectionTests
{
    private const string RequestedBy = "the test's request";

    [EnvironmentFact(Needs.AesNi)]
    public void Requested_and_passing_the_self_test_it_is_chosen_over_the_platform()
    {
        CipherBackend platform = SimulatedBackends.Create(SimulatedBackends.CommonCrypto);
        var hardware = new IntrinsicsBackend<X86AesInstructions>();

        BackendSelection selection = SelectionPolicy.Select(null, () => new(platform, null), Request(new(hardware, null, "no FIPS mode here")));

        Assert.Same(hardware, selection.Backend);
        Assert.Same(hardware, selection.Native);
        Assert.Same(platform, selection.Platform);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(CachedAesPath.Native, selection.Cbc);
        Assert.Null(selection.EcbReason);
        Assert.Null(selection.CpuIntrinsicsRefusedReason);
        Assert.Equal(new SelfTest.Result(null, null), selection.SelfTestResult);
        Assert.Equal(0, hardware.LiveSchedules); // the self-test gave back every handle it made
        string report = SelectionReport.Describe(selection, "header");
        Assert.Contains("Backend: CpuIntrinsics (System.Runtime.Intrinsics.X86.Aes (AES-NI), managed code outside any FIPS boundary)", report, StringComparison.Ordinal);
        Assert.Contains($"CPU intrinsics: in use, requested by {RequestedBy}; FIPS check: no FIPS mode here; the platform's CommonCrypto backend (", report, StringComparison.Ordinal);
    }

    [Fact]
    public void Not_requested_it_is_not_even_probed()
    {
        CipherBackend platform = SimulatedBackends.Create(SimulatedBackends.CommonCrypto);

        BackendSelection selection = SelectionPolicy.Select(null, () => new(platform, null));

        Assert.Same(platform, selection.Backend);
        Assert.Null(selection.CpuIntrinsicsRequestedBy);
        Assert.Null(selection.CpuIntrinsicsRefusedReason);
        Assert.Contains("CPU intrinsics: not requested (switch CachedAes.UseCpuIntrinsics, variable CACHEDAES_USE_CPU_INTRINSICS)", SelectionReport.Describe(selection, "header"), StringComparison.Ordinal);
    }

    [Fact]
    public void Refused_in_fips_mode_the_platform_stays_and_the_report_says_why()
    {
        CipherBackend platform = SimulatedBackends.Create(SimulatedBackends.CommonCrypto);
        const string Fips = "the platform is in FIPS mode, so its own library stays in use (/proc/sys/crypto/fips_enabled = 1)";

        BackendSelection selection = SelectionPolicy.Select(null, () => new(platform, null), Request(new(null, Fips, "/proc/sys/crypto/fips_enabled = 1")));

        Assert.Same(platform, selection.Backend);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(RequestedBy, selection.CpuIntrinsicsRequestedBy);
        Assert.Equal(Fips, selection.CpuIntrinsicsRefusedReason);
        Assert.Contains($"CPU intrinsics: requested by {RequestedBy}, NOT used: {Fips}; FIPS check: /proc/sys/crypto/fips_enabled = 1", SelectionReport.Describe(selection, "header"), StringComparison.Ordinal);
    }

    public static TheoryData<string> CorruptedModes() => new("ECB", "CBC");

    [EnvironmentTheory(Needs.AesNi)]
    [MemberData(nameof(CorruptedModes))]
    public void Any_self_test_mismatch_falls_back_to_the_platform(string corrupted)
    {
        CipherBackend platform = SimulatedBackends.Create(SimulatedBackends.CommonCrypto);
        BlockCipherMode mode = corrupted == "ECB" ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
        var hardware = new MisbehavingBackend(new IntrinsicsBackend<X86AesInstructions>())
        {
            // One bit of every output of that mode, decryption only: even a partial mismatch must send it back.
            Corrupt = (m, encrypting, _, _) => m == mode && !encrypting,
        };

        BackendSelection selection = SelectionPolicy.Select(null, () => new(platform, null), Request(new(hardware, null, null)));

        Assert.Same(platform, selection.Backend);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(CachedAesPath.Native, selection.Cbc); // the platform's own, verified
        Assert.StartsWith($"the CpuIntrinsics backend failed the self-test: {corrupted} decrypt, AES-128", selection.CpuIntrinsicsRefusedReason, StringComparison.Ordinal);
        Assert.Equal(0, hardware.LiveHandles);
    }

    [Fact]
    public void A_throwing_probe_is_a_refusal_and_the_platform_stays()
    {
        CipherBackend platform = SimulatedBackends.Create(SimulatedBackends.CommonCrypto);

        BackendSelection selection = SelectionPolicy.Select(null, () => new(platform, null), new(RequestedBy, () => throw new InvalidOperationException("boom")));

        Assert.Same(platform, selection.Backend);
        Assert.Equal("probing the CPU intrinsics threw InvalidOperationException: boom", selection.CpuIntrinsicsRefusedReason);
    }

    [Fact]
    public void A_forced_stock_path_takes_precedence_and_nothing_is_probed()
    {
        BackendSelection selection = SelectionPolicy.Select(
            "the test",
            () => throw new InvalidOperationException("the platform must not be probed"),
            new(RequestedBy, () => throw new InvalidOperationException("the CPU intrinsics must not be probed")));

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Equal("the stock path is forced, which takes precedence", selection.CpuIntrinsicsRefusedReason);
        Assert.Contains($"CPU intrinsics: requested by {RequestedBy}, NOT used: the stock path is forced", SelectionReport.Describe(selection, "header"), StringComparison.Ordinal);
    }

    public static TheoryData<bool?, string?, string?> RequestCases() => new()
    {
        { null, null, null },
        { true, null, "the AppContext switch CachedAes.UseCpuIntrinsics" },
        { true, "0", "the AppContext switch CachedAes.UseCpuIntrinsics" },
        { false, "1", null },        // the application's project file rules it out, whatever the environment says
        { false, null, null },
        { null, "1", "the environment variable CACHEDAES_USE_CPU_INTRINSICS=1" },
        { null, " TRUE ", "the environment variable CACHEDAES_USE_CPU_INTRINSICS=TRUE" },
        { null, "0", null },
        { null, "yes", null },
        { null, "", null },
    };

    [Theory]
    [MemberData(nameof(RequestCases))]
    public void The_switch_and_the_variable_are_read_like_the_stock_switch_but_the_switch_can_also_refuse(bool? switchValue, string? variable, string? expected)
    {
        Assert.Equal(expected, SelectionSwitches.ReadCpuIntrinsicsRequestedBy(switchValue, variable));
    }

    public static TheoryData<string?, int?, bool> LinuxCases() => new()
    {
        { null, 0, false },          // no FIPS support in the kernel, OpenSSL's defaults not FIPS
        { "0\n", 0, false },
        { "1\n", 0, true },          // the kernel's flag alone
        { "0\n", 1, true },          // OpenSSL's default properties alone (a FIPS openssl.cnf)
        { null, 1, true },
        { "1", null, true },         // OpenSSL 1.1 or not loaded: the kernel decides
        { "0", null, false },
        { "error: IOException", 0, true }, // the flag exists but cannot be read: doubt keeps the platform
    };

    [Theory]
    [MemberData(nameof(LinuxCases))]
    public void On_linux_either_the_kernel_flag_or_openssls_default_properties_mean_fips_mode(string? kernelFlag, int? openSsl, bool fips)
    {
        PlatformBackend.FipsMode verdict = OpenSslPlatform.FromLinux(kernelFlag, (openSsl, $"OpenSSL said {openSsl}"));

        Assert.Equal(fips, verdict.Enabled);
        Assert.Contains(OpenSslPlatform.KernelFipsFlag, verdict.Detail, StringComparison.Ordinal);
        Assert.Contains($"OpenSSL said {openSsl}", verdict.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public void On_linux_openssl_3_failing_to_answer_counts_as_fips_mode_and_no_libcrypto_leaves_the_kernel_to_decide()
    {
        (int? failed, string failedDetail) = OpenSslPlatform.AskOpenSsl(() => 0x3000_0130, () => throw new EntryPointNotFoundException("EVP_default_properties_is_fips_enabled"));
        Assert.Equal(1, failed);
        Assert.Contains("counted as FIPS mode", failedDetail, StringComparison.Ordinal);
        Assert.True(OpenSslPlatform.FromLinux("0", (failed, failedDetail)).Enabled);

        (int? absent, string absentDetail) = OpenSslPlatform.AskOpenSsl(() => throw new PlatformNotSupportedException("no libcrypto"), () => 0);
        Assert.Null(absent);
        Assert.Contains("OpenSSL not asked", absentDetail, StringComparison.Ordinal);
        Assert.False(OpenSslPlatform.FromLinux("0", (absent, absentDetail)).Enabled);

        Assert.Equal((null, "OpenSSL 1.1: not asked"), OpenSslPlatform.AskOpenSsl(() => 0x1010_1000, () => throw new InvalidOperationException("not called on 1.1")));
        Assert.Equal((0, "OpenSSL EVP_default_properties_is_fips_enabled = 0"), OpenSslPlatform.AskOpenSsl(() => 0x3000_0130, () => 0));
    }

    [Theory]
    [InlineData(0, 0, false, "BCryptGetFipsAlgorithmMode = FALSE")]
    [InlineData(0, 1, true, "BCryptGetFipsAlgorithmMode = TRUE")]
    [InlineData(unchecked((int)0xC000000D), 0, true, "BCryptGetFipsAlgorithmMode failed with NTSTATUS 0xC000000D.")]
    public void On_windows_the_fips_policy_decides_and_a_failed_call_counts_as_fips_mode(int status, byte enabled, bool fips, string detail)
    {
        PlatformBackend.FipsMode verdict = CngPlatform.FromWindows(status, enabled);

        Assert.Equal(fips, verdict.Enabled);
        Assert.Equal(detail, verdict.Detail);
    }

    [EnvironmentFact(Needs.Linux)]
    public void On_linux_the_check_asks_the_kernel_and_openssl_3()
    {
        PlatformBackend.FipsMode verdict = ProcessBackend.CheckFipsMode();

        bool kernelFips = File.Exists(OpenSslPlatform.KernelFipsFlag) && File.ReadAllText(OpenSslPlatform.KernelFipsFlag).Trim() == "1";
        Assert.Contains(OpenSslPlatform.KernelFipsFlag, verdict.Detail, StringComparison.Ordinal);
        Assert.Contains("OpenSSL EVP_default_properties_is_fips_enabled = ", verdict.Detail, StringComparison.Ordinal);
        Assert.Equal(kernelFips || verdict.Detail.Contains("EVP_default_properties_is_fips_enabled = 1", StringComparison.Ordinal), verdict.Enabled);
    }

    // ---- In fresh processes, as an application switches it on.

    [Fact]
    public void The_environment_variable_switches_it_on_where_the_processor_has_aes_instructions()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?> { [CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable] = "1" });

        AssertChosenOrRefusedForMissingInstructions(report);
        Assert.Contains("CPU intrinsics: ", report.Output, StringComparison.Ordinal);
        Assert.Contains("requested by the environment variable CACHEDAES_USE_CPU_INTRINSICS=1", report.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void The_appcontext_switch_in_runtimeconfig_switches_it_on()
    {
        // What <RuntimeHostConfigurationOption Include="CachedAes.UseCpuIntrinsics" Value="true" /> produces.
        ChildProcess.Report report = ChildProcess.RunSelectionReport(configProperties: new Dictionary<string, bool> { [CachedAesDiagnostics.UseCpuIntrinsicsSwitchName] = true });

        AssertChosenOrRefusedForMissingInstructions(report);
        Assert.Contains("requested by the AppContext switch CachedAes.UseCpuIntrinsics", report.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void The_appcontext_switch_set_to_false_overrides_the_variable()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(
            new Dictionary<string, string?> { [CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable] = "1" },
            new Dictionary<string, bool> { [CachedAesDiagnostics.UseCpuIntrinsicsSwitchName] = false });

        AssertRan(report);
        Assert.NotEqual(nameof(CachedAesBackend.CpuIntrinsics), report["Backend"]);
        Assert.Equal("", report["CpuIntrinsicsRefusedReason"]);
        Assert.Contains("CPU intrinsics: not requested", report.Output, StringComparison.Ordinal);
    }

    [Fact]
    public void The_stock_variable_wins_over_the_cpu_intrinsics_variable()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?>
        {
            [CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable] = "1",
            [CachedAesDiagnostics.UseStockEnvironmentVariable] = "1",
        });

        AssertRan(report);
        Assert.Equal(nameof(CachedAesBackend.StockFallback), report["Backend"]);
        Assert.Equal("the stock path is forced, which takes precedence", report["CpuIntrinsicsRefusedReason"]);
    }

    [EnvironmentFact(Needs.Linux)]
    public void With_openssl_configured_for_fips_it_is_refused()
    {
        // An openssl.cnf whose default properties ask for FIPS implementations, as a FIPS-mode system's does. Without the
        // FIPS provider installed, nothing in that process can encrypt (stock .NET fails too, so the child's round trip
        // throws); what matters here is only that selection asked OpenSSL and refused the CPU intrinsics backend.
        string config = Path.Combine(Directory.CreateTempSubdirectory("cachedaes-fips-").FullName, "openssl.cnf");
        File.WriteAllText(config, "openssl_conf = openssl_init\n\n[openssl_init]\nalg_section = algorithm_sect\n\n[algorithm_sect]\ndefault_properties = fips=yes\n");

        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?>
        {
            [CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable] = "1",
            ["OPENSSL_CONF"] = config,
        });

        Assert.NotEqual(nameof(CachedAesBackend.CpuIntrinsics), report["Backend"]);
        string reason = report["CpuIntrinsicsRefusedReason"];
        Assert.True(
            reason.StartsWith("the platform is in FIPS mode, so its own library stays in use (", StringComparison.Ordinal) && reason.Contains("OpenSSL EVP_default_properties_is_fips_enabled = 1", StringComparison.Ordinal)
            || BackendData.CpuIntrinsicsMissing is not null,
            reason);
    }

    private static SelectionPolicy.CpuIntrinsicsRequest Request(SelectionPolicy.CpuIntrinsicsProbe probe) => new(RequestedBy, () => probe);

    private static void AssertChosenOrRefusedForMissingInstructions(ChildProcess.Report report)
    {
        AssertRan(report);
        if (BackendData.CpuIntrinsicsMissing is string missing)
        {
            Assert.NotEqual(nameof(CachedAesBackend.CpuIntrinsics), report["Backend"]);
            Assert.Equal(missing, report["CpuIntrinsicsRefusedReason"]);
            return;
        }

        // On a FIPS-mode machine it is refused for that reason instead; then the report says so.
        string refused = report["CpuIntrinsicsRefusedReason"];
        if (refused.StartsWith("the platform is in FIPS mode", StringComparison.Ordinal))
        {
            Assert.NotEqual(nameof(CachedAesBackend.CpuIntrinsics), report["Backend"]);
            return;
        }

        Assert.Equal("", refused);
        Assert.Equal(nameof(CachedAesBackend.CpuIntrinsics), report["Backend"]);
        Assert.Equal(nameof(CachedAesBackend.CpuIntrinsics), report["Instance"]);
        Assert.Equal(nameof(CachedAesPath.Native), report["Ecb"]);
        Assert.Equal(nameof(CachedAesPath.Native), report["Cbc"]);
        Assert.Contains("Self-test: ECB and key wrap passed, CBC passed", report.Output, StringComparison.Ordinal);
        Assert.Contains("CPU intrinsics: in use, requested by ", report.Output, StringComparison.Ordinal);
    }

    private static void AssertRan(ChildProcess.Report report)
    {
        Assert.True(report.ExitCode == 0, $"The child exited with {report.ExitCode}:{Environment.NewLine}{report.Output}");
        Assert.Equal("True", report["RoundTrip"]);
    }
}
