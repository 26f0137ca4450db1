using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.Versioning;
using CachedCryptography.Selection;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>The public diagnostics in this (test) process, and the choice of libcrypto on Linux.</summary>
public sealed class DiagnosticsTests
{
    [Fact]
    public void Diagnostics_agree_with_new_instances_and_describe_the_selection()
    {
        using var aes = new CachedAes();
        string report = CachedAesDiagnostics.Describe();
        string[] lines = report.Split(Environment.NewLine);

        Assert.Equal(aes.Backend, CachedAesDiagnostics.Backend);
        Assert.StartsWith("CachedAes ", lines[0], StringComparison.Ordinal);
        Assert.StartsWith($"Backend: {CachedAesDiagnostics.Backend}", lines[1], StringComparison.Ordinal);
        Assert.StartsWith($"ECB and key wrap: {CachedAesDiagnostics.Ecb}", lines[2], StringComparison.Ordinal);
        Assert.StartsWith($"CBC: {CachedAesDiagnostics.Cbc}", lines[3], StringComparison.Ordinal);
        Assert.StartsWith("Self-test: ", lines[4], StringComparison.Ordinal);
        Assert.StartsWith("Stock forced: ", lines[5], StringComparison.Ordinal);
        Assert.StartsWith("CPU intrinsics: ", lines[6], StringComparison.Ordinal);
        Assert.Equal(7, lines.Length);
        Assert.Equal(CachedAesDiagnostics.Backend == CachedAesBackend.CpuIntrinsics, lines[6].StartsWith("CPU intrinsics: in use", StringComparison.Ordinal));
        Assert.Equal(CachedAesDiagnostics.Ecb == CachedAesPath.Native, CachedAesDiagnostics.EcbFallbackReason is null);
        Assert.Equal(CachedAesDiagnostics.Cbc == CachedAesPath.Native, CachedAesDiagnostics.CbcFallbackReason is null);
    }

    [EnvironmentFact(Needs.Linux | Needs.StockNotForced)]
    public void On_linux_openssl_is_selected_natively_for_both_modes()
    {
        Assert.Equal(CachedAesBackend.OpenSsl, CachedAesDiagnostics.Backend);
        Assert.Equal(CachedAesPath.Native, CachedAesDiagnostics.Ecb);
        Assert.Equal(CachedAesPath.Native, CachedAesDiagnostics.Cbc);
        Assert.Null(CachedAesDiagnostics.EcbFallbackReason);
        Assert.Null(CachedAesDiagnostics.CbcFallbackReason);
        Assert.Contains($"Backend: OpenSsl ({Libcrypto.LoadedFile} (OPENSSL_VERSION_NUMBER 0x", CachedAesDiagnostics.Describe(), StringComparison.Ordinal);
        Assert.Contains("Self-test: ECB and key wrap passed, CBC passed (", CachedAesDiagnostics.Describe(), StringComparison.Ordinal);
        Assert.Same(ProcessBackend.Selection.Native, ProcessBackend.Current);
    }

    // Runs in the Windows and macOS CI jobs: there the real CNG / CommonCrypto must need no fallback.
    // (Wine, which does need one for CBC, is covered by tests/lanes/CachedAes.WineTests.)
    [EnvironmentFact(Needs.WindowsOrMacOS | Needs.StockNotForced)]
    public void On_windows_and_macos_the_real_library_passes_the_self_test_for_both_modes()
    {
        Assert.Equal(OperatingSystem.IsWindows() ? CachedAesBackend.Cng : CachedAesBackend.CommonCrypto, CachedAesDiagnostics.Backend);
        Assert.True(CachedAesDiagnostics.Ecb == CachedAesPath.Native, CachedAesDiagnostics.Describe());
        Assert.True(CachedAesDiagnostics.Cbc == CachedAesPath.Native, CachedAesDiagnostics.Describe());
    }

    [EnvironmentFact(Needs.Linux)]
    [SupportedOSPlatform("linux")] // skipped elsewhere (the attribute); this tells the platform analyzer
    public void On_linux_the_loaded_libcrypto_is_the_runtimes_build()
    {
        Libcrypto.EnsureResolver();
        Assert.Equal((ulong)System.Security.Cryptography.SafeEvpPKeyHandle.OpenSslVersion, (ulong)Libcrypto.OpenSSL_version_num());
    }

    public static TheoryData<long, string?, string[]> CandidateCases() => new()
    {
        { 0x30000130, null, ["libcrypto.so.3"] },          // OpenSSL 3.0.19
        { 0x30500010, null, ["libcrypto.so.3"] },          // 3.5.1
        { 0x1010117f, null, ["libcrypto.so.1.1"] },        // 1.1.1w
        { 0x40000000, null, ["libcrypto.so.4"] },          // a future major keeps OpenSSL's soname scheme
        { 0x30000130, "3", ["libcrypto.so.3"] },           // no duplicate
        { 0x1010117f, "1.1.1k", ["libcrypto.so.1.1.1k", "libcrypto.so.1.1"] },
        { 0x30000130, "1.1", ["libcrypto.so.1.1", "libcrypto.so.3"] }, // the runtime fell back from its override
        { 0x1000214f, null, [] },                          // 1.0.2: not supported
        { 0x30000130, "", ["libcrypto.so.3"] },
        { 0x30000130, "../../tmp/x", ["libcrypto.so.3"] }, // not a version suffix
        { 0x30000130, new string('1', 33), ["libcrypto.so.3"] }, // longer than the runtime accepts
    };

    [Theory]
    [MemberData(nameof(CandidateCases))]
    public void Libcrypto_candidates_follow_the_runtimes_version_and_override(long runtimeVersion, string? runtimeOverride, string[] expected)
    {
        IReadOnlyList<string> candidates = Libcrypto.Candidates(runtimeVersion, runtimeOverride);

        Assert.Equal(expected, candidates.ToArray());
    }
}
