using System;
using CachedCryptography.Seam;
using CachedCryptography.Interop.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// <see cref="CommonCryptoBlockCipher"/> over <see cref="SimulatedCommonCryptoApi"/>: the shared contract (see
/// <see cref="SimulatedPlatformCipherContract"/>), then what only CommonCrypto has: <c>CCCryptorReset</c>, the backend's
/// probe, and a simulated layer that must itself follow CommonCrypto's documented behaviour.
/// </summary>
public sealed class CommonCryptoBlockCipherTests : SimulatedPlatformCipherContract
{
    private readonly SimulatedCommonCryptoApi _api = new();

    /// <summary>See <see cref="SimulatedPlatformCipherContract.A_transform_failure_reports_the_native_status_and_faults_the_handle"/>.</summary>
    public static TheoryData<bool, string, int, string> TransformFailures => new()
    {
        { true, "CCCryptorUpdate", SimulatedCommonCryptoApi.kCCBufferTooSmall, "-4301 (kCCBufferTooSmall)" },
        { true, "CCCryptorUpdate", SimulatedCommonCryptoApi.kCCAlignmentError, "-4303 (kCCAlignmentError)" },
        { true, "CCCryptorUpdate", -1, "-1 (unknown status)" },
    };

    private protected override SimulatedNativeLayer Layer => _api;

    private protected override string CreateFunction => "CCCryptorCreateWithMode";

    private protected override string ReleaseFunction => "CCCryptorRelease";

    private protected override (int Status, string Text) NoMemory => (SimulatedCommonCryptoApi.kCCMemoryFailure, "-4302 (kCCMemoryFailure)");

    private protected override BlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key)
        => CommonCryptoBlockCipher.Create(_api, mode, encrypting, key);

    private protected override string FailureText(string function, string statusText) => $"{function} failed with CCCryptorStatus {statusText}";

    // A CBC message starts with CCCryptorReset to its IV; ECB never resets (kCCUnimplemented on macOS 10.13+).
    private protected override void AssertEachMessageStartedAfresh(BlockCipherMode mode, int messages)
    {
        Assert.Equal(messages, _api.Calls.FindAll(c => c == "CCCryptorUpdate").Count);
        Assert.Equal(mode == BlockCipherMode.Cbc ? messages : 0, _api.ResetCalls);
    }

    [Fact]
    public void A_reset_failure_reports_the_status_and_faults_the_handle()
    {
        BlockCipher cipher = Make(BlockCipherMode.Cbc, false, Stock.Bytes(16, 121));
        _api.Inject("CCCryptorReset", SimulatedCommonCryptoApi.kCCParamError);

        Assert.False(cipher.TryTransform(new byte[16], new byte[16], new byte[16]));

        Assert.Contains("CCCryptorReset failed with CCCryptorStatus -4300 (kCCParamError)", cipher.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        Assert.DoesNotContain("CCCryptorUpdate", _api.Calls);
        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void Backend_probes_one_cryptor_releases_it_and_reports_commoncrypto()
    {
        var api = new SimulatedCommonCryptoApi();

        Assert.True(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend));

        Assert.Equal(CachedAesBackend.CommonCrypto, backend.Kind);
        Assert.Single(api.Calls, c => c == "CCCryptorCreateWithMode");
        Assert.Equal(0, api.LiveHandles);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void Backend_is_unavailable_when_the_probe_fails()
    {
        var api = new SimulatedCommonCryptoApi();
        api.Inject("CCCryptorCreateWithMode", SimulatedCommonCryptoApi.kCCUnimplemented);

        Assert.False(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend));

        Assert.Null(backend);
        Assert.Equal(0, api.LiveHandles);
    }

    // The simulated layer itself must follow CommonCrypto's documented behaviour.
    [Fact]
    public void Simulated_CCCryptorReset_on_an_ecb_cryptor_returns_kCCUnimplemented()
    {
        using var handle = new SafeCCCryptorHandle(_api);
        Assert.Equal(0, _api.CreateWithMode(0, 1, default, new byte[16], handle));

        Assert.Equal(SimulatedCommonCryptoApi.kCCUnimplemented, _api.Reset(handle.DangerousGetHandle(), new byte[16]));
    }

    [Fact]
    public void Simulated_update_buffers_a_partial_block_and_reports_a_short_output_buffer()
    {
        byte[] key = Stock.Bytes(16, 128);
        byte[] data = Stock.Bytes(32, 129);
        using var handle = new SafeCCCryptorHandle(_api);
        Assert.Equal(0, _api.CreateWithMode(0, 2, default, key, handle));
        byte[] output = new byte[32];

        Assert.Equal(SimulatedCommonCryptoApi.kCCBufferTooSmall, _api.Update(handle.DangerousGetHandle(), data, new byte[16], out _));
        Assert.Equal(0, _api.Update(handle.DangerousGetHandle(), data.AsSpan(0, 10), output, out nuint moved1));
        Assert.Equal(0, _api.Update(handle.DangerousGetHandle(), data.AsSpan(10), output, out nuint moved2));

        Assert.Equal((nuint)0, moved1);
        Assert.Equal((nuint)32, moved2);
        Assert.Equal(Stock.Cbc(key, new byte[16], data, true), output);
    }
}
