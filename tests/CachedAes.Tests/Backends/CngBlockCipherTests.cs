using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Interop.Cng;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// <see cref="CngBlockCipher"/> over <see cref="SimulatedBCryptApi"/>: the shared contract (see
/// <see cref="SimulatedPlatformCipherContract"/>), then what only CNG has: algorithm handles, and a simulated layer
/// that must itself follow CNG's documented behaviour.
/// </summary>
public sealed class CngBlockCipherTests : SimulatedPlatformCipherContract
{
    private const nint EcbAlg = BCrypt.BCRYPT_AES_ECB_ALG_HANDLE;
    private const nint CbcAlg = BCrypt.BCRYPT_AES_CBC_ALG_HANDLE;

    private readonly SimulatedBCryptApi _api = new();

    /// <summary>See <see cref="SimulatedPlatformCipherContract.A_transform_failure_reports_the_native_status_and_faults_the_handle"/>.</summary>
    public static TheoryData<bool, string, int, string> TransformFailures => new()
    {
        { true, "BCryptEncrypt", SimulatedBCryptApi.STATUS_INVALID_PARAMETER, "0xC000000D" },
        { false, "BCryptDecrypt", SimulatedBCryptApi.STATUS_INVALID_PARAMETER, "0xC000000D" },
    };

    private protected override SimulatedNativeLayer Layer => _api;

    private protected override string CreateFunction => "BCryptGenerateSymmetricKey";

    private protected override string ReleaseFunction => "BCryptDestroyKey";

    private protected override (int Status, string Text) NoMemory => (SimulatedBCryptApi.STATUS_NO_MEMORY, "0xC0000017");

    private protected override BlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key)
        => CngBlockCipher.Create(_api, mode == BlockCipherMode.Ecb ? EcbAlg : CbcAlg, mode, encrypting, key);

    private protected override string FailureText(string function, string statusText) => $"{function} failed with NTSTATUS {statusText}";

    // CNG starts each call at the IV it is given: one call per message, CBC with the 16-byte private copy, ECB with NULL.
    private protected override void AssertEachMessageStartedAfresh(BlockCipherMode mode, int messages)
    {
        Assert.Equal(messages, _api.CipherCalls.Count);
        Assert.All(_api.CipherCalls, c => Assert.Equal((mode, mode == BlockCipherMode.Cbc ? 16 : 0), c));
    }

    [Fact]
    public void A_key_on_an_invalid_algorithm_handle_fails_with_status_invalid_handle()
    {
        var e = Assert.Throws<CryptographicException>(
            () => CngBlockCipher.Create(_api, 0x1234, BlockCipherMode.Ecb, true, Stock.Bytes(16, 26)));
        Assert.Contains("0xC0000008", e.Message, StringComparison.Ordinal);
        AssertClean();
    }

    // The simulated layer itself must follow CNG's documented behaviour, or the contract tests prove little.
    [Fact]
    public void Simulated_cng_overwrites_the_iv_buffer_with_the_last_ciphertext_block()
    {
        byte[] key = Stock.Bytes(16, 34);
        byte[] iv = Stock.Bytes(16, 35);
        byte[] originalIv = (byte[])iv.Clone();
        byte[] data = Stock.Bytes(48, 36);
        byte[] output = new byte[48];
        using var handle = new SafeBCryptKeyHandle(_api);
        Assert.Equal(0, _api.GenerateSymmetricKey(CbcAlg, key, handle));

        Assert.Equal(0, _api.Encrypt(handle.DangerousGetHandle(), data, iv, output, out int written));

        Assert.Equal(48, written);
        Assert.Equal(Stock.Cbc(key, originalIv, data, true), output);
        Assert.Equal(output[32..], iv);
    }

    [Fact]
    public void Simulated_cng_returns_the_documented_statuses_for_wrong_sizes()
    {
        using var handle = new SafeBCryptKeyHandle(_api);
        Assert.Equal(0, _api.GenerateSymmetricKey(CbcAlg, new byte[16], handle));

        Assert.Equal(SimulatedBCryptApi.STATUS_INVALID_BUFFER_SIZE, _api.Encrypt(handle.DangerousGetHandle(), new byte[15], new byte[16], new byte[16], out _));
        Assert.Equal(SimulatedBCryptApi.STATUS_BUFFER_TOO_SMALL, _api.Encrypt(handle.DangerousGetHandle(), new byte[32], new byte[16], new byte[16], out _));
        Assert.Equal(SimulatedBCryptApi.STATUS_INVALID_PARAMETER, _api.Encrypt(handle.DangerousGetHandle(), new byte[16], new byte[8], new byte[16], out _));
        Assert.Equal(SimulatedBCryptApi.STATUS_INVALID_PARAMETER, _api.GenerateSymmetricKey(CbcAlg, new byte[20], new SafeBCryptKeyHandle(_api)));
    }

    [Fact]
    public void Simulated_cng_detects_double_free_and_use_after_destroy()
    {
        var handle = new SafeBCryptKeyHandle(_api);
        Assert.Equal(0, _api.GenerateSymmetricKey(EcbAlg, new byte[16], handle));
        nint raw = handle.DangerousGetHandle();
        handle.Dispose();

        Assert.Equal(SimulatedBCryptApi.STATUS_INVALID_HANDLE, _api.DestroyKey(raw));
        Assert.Single(_api.Violations);
    }
}
