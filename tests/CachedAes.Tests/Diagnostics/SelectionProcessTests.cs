using System;
using System.Collections.Generic;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Backend selection as a fresh process sees it (it happens once per process, so each case runs this test assembly
/// again as a child): the escape hatches force the stock path without loading a native library, and on Linux the
/// libcrypto CachedAes loads is the runtime's own build.
/// </summary>
public sealed class SelectionProcessTests
{
    private static readonly bool s_hasNativeBackend = OperatingSystem.IsLinux() || OperatingSystem.IsWindows() || OperatingSystem.IsMacOS();

    [Fact]
    public void Without_a_setting_the_platform_backend_is_used()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport();

        AssertRan(report);
        Assert.Equal(report["Backend"], report["Instance"]);
        if (s_hasNativeBackend)
        {
            Assert.NotEqual(nameof(CachedAesBackend.StockFallback), report["Backend"]);
            Assert.Equal(nameof(CachedAesPath.Native), report["Ecb"]);
            Assert.Equal("", report["EcbFallbackReason"]);
        }

        if (OperatingSystem.IsLinux())
        {
            AssertOneLibcryptoAgreeingWithTheRuntime(report);
        }
    }

    [Theory]
    [InlineData("1")]
    [InlineData("true")]
    public void The_environment_variable_forces_the_stock_path(string value)
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?> { [CachedAesDiagnostics.UseStockEnvironmentVariable] = value });

        AssertStock(report, $"the stock path was forced by the environment variable CACHEDAES_USE_STOCK={value}");
    }

    [Fact]
    public void The_environment_variable_set_to_zero_does_not()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?> { [CachedAesDiagnostics.UseStockEnvironmentVariable] = "0" });

        AssertRan(report);
        Assert.Equal(s_hasNativeBackend ? nameof(CachedAesPath.Native) : nameof(CachedAesPath.Stock), report["Ecb"]);
    }

    [Fact]
    public void The_appcontext_switch_in_runtimeconfig_forces_the_stock_path()
    {
        // What <RuntimeHostConfigurationOption Include="CachedAes.UseStockImplementation" Value="true" /> produces.
        ChildProcess.Report report = ChildProcess.RunSelectionReport(configProperties: new Dictionary<string, bool> { [CachedAesDiagnostics.UseStockSwitchName] = true });

        AssertStock(report, "the stock path was forced by the AppContext switch CachedAes.UseStockImplementation");
    }

    [Fact]
    public void The_appcontext_switch_set_in_code_before_first_use_forces_the_stock_path()
    {
        ChildProcess.Report report = ChildProcess.RunSelectionReport(null, null, ChildProcessEntry.SetSwitchFirst);

        AssertStock(report, "the stock path was forced by the AppContext switch CachedAes.UseStockImplementation");
    }

    [EnvironmentTheory(Needs.Linux)]
    [InlineData("3")]
    [InlineData("1.1")]
    public void On_linux_the_runtime_openssl_override_is_followed_and_one_libcrypto_is_loaded(string version)
    {
        // With "1.1" and no OpenSSL 1.1 installed, the runtime falls back to 3 and CachedAes must follow it, not the variable.
        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?> { ["CLR_OPENSSL_VERSION_OVERRIDE"] = version });

        AssertRan(report);
        Assert.Equal(nameof(CachedAesBackend.OpenSsl), report["Backend"]);
        AssertOneLibcryptoAgreeingWithTheRuntime(report);
    }

    private static void AssertStock(ChildProcess.Report report, string reason)
    {
        AssertRan(report);
        Assert.Equal(nameof(CachedAesBackend.StockFallback), report["Instance"]);
        Assert.Equal(nameof(CachedAesBackend.StockFallback), report["Backend"]);
        Assert.Equal(nameof(CachedAesPath.Stock), report["Ecb"]);
        Assert.Equal(nameof(CachedAesPath.Stock), report["Cbc"]);
        Assert.Equal(reason, report["EcbFallbackReason"]);
        Assert.Equal(reason, report["CbcFallbackReason"]);
        Assert.Contains("Self-test: not run", report.Output, StringComparison.Ordinal);
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal("", report["LibcryptoMapped"]); // forcing the stock path loads no native library
        }
    }

    private static void AssertOneLibcryptoAgreeingWithTheRuntime(ChildProcess.Report report)
    {
        Assert.DoesNotContain(";", report["LibcryptoMapped"], StringComparison.Ordinal);
        Assert.StartsWith("/", report["LibcryptoMapped"], StringComparison.Ordinal);
        Assert.EndsWith(report["CachedAesLibcrypto"], report["LibcryptoMapped"], StringComparison.Ordinal);
        Assert.Equal(report["RuntimeOpenSslVersion"], report["CachedAesOpenSslVersion"]);
    }

    private static void AssertRan(ChildProcess.Report report)
    {
        Assert.True(report.ExitCode == 0, $"The child exited with {report.ExitCode}:{Environment.NewLine}{report.Output}");
        Assert.Equal("True", report["RoundTrip"]);
    }
}
