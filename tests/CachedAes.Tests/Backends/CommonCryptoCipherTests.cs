using System;
using CachedCryptography.Seam;
using CachedCryptography.Backends.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// <see cref="CommonCryptoCipher"/> over <see cref="SimulatedCommonCryptoApi"/>: the shared contract (see
/// <see cref="SimulatedPlatformCipherContract"/>), then what only CommonCrypto has: <c>CCCryptorReset</c>, the backend's
/// probe, and a simulated layer that must itself follow CommonCrypto's documented behaviour.
/// </summary>
public sealed class CommonCryptoCipherTests : SimulatedPlatformCipherContract
{
    private readonly SimulatedCommonCryptoApi _api = new();
    private readonly CipherBackend _backend;

    public CommonCryptoCipherTests()
    {
        Assert.True(CommonCryptoBackend.TryCreate(_api, out CipherBackend? backend, out string? reason), reason);
        _backend = backend;
        _api.ForgetCalls();
    }

    /// <summary>See <see cref="SimulatedPlatformCipherContract.A_transform_failure_reports_the_native_status_and_faults_the_handle"/>.</summary>
    public static TheoryData<bool, string, int, string> TransformFailures => new()
    {
        { true, "CCCryptorUpdate", SimulatedCommonCryptoApi.kCCBufferTooSmall, "-4301 (kCCBufferTooSmall)" },
        { false, "CCCryptorUpdate", SimulatedCommonCryptoApi.kCCParamError, "-4300 (kCCParamError)" },
        { true, "CCCryptorUpdate", SimulatedCommonCryptoApi.kCCCallSequenceError, "-4309 (kCCCallSequenceError)" },
        { true, "CCCryptorUpdate", -1, "-1 (unknown status)" },
    };

    private protected override SimulatedNativeLayer Layer => _api;

    private protected override string CreateFunction => "CCCryptorCreateWithMode";

    private protected override string ReleaseFunction => "CCCryptorRelease";

    private protected override (int Status, string Text) NoMemory => (SimulatedCommonCryptoApi.kCCMemoryFailure, "-4302 (kCCMemoryFailure)");

    // CommonCryptor.c frees a cryptor whose creation failed and sets *cryptorRef to NULL.
    private protected override bool FailedCreateHandsBackTheHandle => false;

    /// <summary>Every CCCryptorStatus of CommonCryptoError.h, with its name.</summary>
    public static TheoryData<int, string> Statuses => new()
    {
        { -4300, "kCCParamError" },
        { -4301, "kCCBufferTooSmall" },
        { -4302, "kCCMemoryFailure" },
        { -4303, "kCCAlignmentError" },
        { -4304, "kCCDecodeError" },
        { -4305, "kCCUnimplemented" },
        { -4306, "kCCOverflow" },
        { -4307, "kCCRNGFailure" },
        { -4308, "kCCUnspecifiedError" },
        { -4309, "kCCCallSequenceError" },
        { -4310, "kCCKeySizeError" },
        { -4311, "kCCInvalidKey" },
    };

    private protected override BlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key) => _backend.Create(mode, encrypting, key);

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

        Assert.True(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend, out _));

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

        Assert.False(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend, out string? reason));

        Assert.Null(backend);
        Assert.Equal(
            "libcommonCrypto.dylib: a probe AES cryptor could not be created (CCCryptorCreateWithMode failed with CCCryptorStatus -4305 (kCCUnimplemented).)",
            reason);
        Assert.Equal(0, api.LiveHandles);
    }

    [Theory]
    [MemberData(nameof(Statuses))]
    public void A_failure_names_every_status_of_CommonCryptoError_h(int status, string name)
    {
        Assert.Equal(
            $"CCCryptorCreateWithMode failed with CCCryptorStatus {status} ({name}).",
            CommonCryptoCipher.Error("CCCryptorCreateWithMode", status).Message);
    }

    /// <summary>
    /// In place, every chunk of the input goes through a copy, never the same buffer (which the strict layer refuses):
    /// ECB and CBC, both directions, inputs shorter and longer than one chunk, the CBC chain carried across chunks.
    /// </summary>
    [Theory]
    [InlineData(true, true, 16)]
    [InlineData(false, false, 48)]
    [InlineData(false, true, 1040)]
    [InlineData(true, false, 1024)]
    public void In_place_transforms_go_through_a_copy(bool ecb, bool encrypting, int length)
    {
        BlockCipherMode mode = ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
        byte[] key = Stock.Bytes(32, 130);
        byte[] iv = ecb ? [] : Stock.Bytes(16, 131);
        byte[] data = Stock.Bytes(length, 132);
        byte[] buffer = (byte[])data.Clone();
        BlockCipher cipher = Make(mode, encrypting, key);

        Assert.True(cipher.TryTransform(iv, buffer, buffer));

        Assert.Equal(ecb ? Stock.Ecb(key, data, encrypting) : Stock.Cbc(key, iv, data, encrypting), buffer);
        Assert.Equal((length + 511) / 512, _api.Calls.FindAll(c => c == "CCCryptorUpdate").Count);
        cipher.Release();
        AssertClean();
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

        // CommonCryptor.c: kCCBufferTooSmall with the length needed in dataOutMoved, and nothing consumed.
        Assert.Equal(SimulatedCommonCryptoApi.kCCBufferTooSmall, _api.Update(handle.DangerousGetHandle(), data, new byte[16], out nuint needed));
        Assert.Equal((nuint)32, needed);

        // With ccNoPadding a partial block is buffered (a short dataOutMoved, never kCCAlignmentError).
        Assert.Equal(0, _api.Update(handle.DangerousGetHandle(), data.AsSpan(0, 10), output, out nuint moved1));
        Assert.Equal(0, _api.Update(handle.DangerousGetHandle(), data.AsSpan(10), output, out nuint moved2));

        Assert.Equal((nuint)0, moved1);
        Assert.Equal((nuint)32, moved2);
        Assert.Equal(Stock.Cbc(key, new byte[16], data, true), output);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(8)]
    [InlineData(20)]
    [InlineData(33)]
    public void Simulated_create_returns_kCCKeySizeError_for_a_key_of_no_aes_size_and_hands_back_no_cryptor(int length)
    {
        using var handle = new SafeCCCryptorHandle(_api);

        Assert.Equal(SimulatedCommonCryptoApi.kCCKeySizeError, _api.CreateWithMode(0, 1, default, new byte[length], handle));

        Assert.True(handle.IsInvalid);
        AssertClean();
    }

    [Fact]
    public void Simulated_create_that_fails_after_allocating_hands_back_no_cryptor()
    {
        _api.FailAfterCreate = true;
        using var handle = new SafeCCCryptorHandle(_api);

        Assert.Equal(SimulatedCommonCryptoApi.kCCMemoryFailure, _api.CreateWithMode(0, 2, default, new byte[16], handle));

        Assert.True(handle.IsInvalid);
        AssertClean();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Simulated_update_refuses_and_records_an_in_place_call(bool ecb)
    {
        using var handle = new SafeCCCryptorHandle(_api);
        Assert.Equal(0, _api.CreateWithMode(0, ecb ? 1u : 2u, default, new byte[16], handle));
        byte[] buffer = new byte[32];

        Assert.Equal(SimulatedCommonCryptoApi.kCCParamError, _api.Update(handle.DangerousGetHandle(), buffer, buffer, out nuint moved));

        Assert.Equal((nuint)0, moved);
        Assert.Equal(["CCCryptorUpdate in place (CommonCryptor.h: not supported for block modes such as ECB and CBC)"], _api.Violations);
    }
}
