using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Interop.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

public sealed class CommonCryptoBlockCipherTests
{
    private readonly SimulatedCommonCryptoApi _api = new();

    private CommonCryptoBlockCipher Make(bool ecb, bool encrypting, byte[] key)
        => CommonCryptoBlockCipher.Create(_api, ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, encrypting, key);

    private static byte[] Run(CommonCryptoBlockCipher cipher, byte[]? iv, byte[] input)
    {
        byte[] output = new byte[input.Length];
        Assert.True(cipher.TryTransform(iv, input, output));
        return output;
    }

    private void AssertClean()
    {
        Assert.Empty(_api.Violations);
        Assert.Equal(0, _api.LiveCryptors);
    }

    [Theory]
    [InlineData(16, true)]
    [InlineData(24, true)]
    [InlineData(32, true)]
    [InlineData(16, false)]
    [InlineData(24, false)]
    [InlineData(32, false)]
    public void Ecb_matches_stock(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 101);
        byte[] data = Stock.Bytes(80, 102);
        CommonCryptoBlockCipher cipher = Make(true, encrypting, key);
        byte[] first = Run(cipher, null, data[..16]);
        byte[] rest = Run(cipher, null, data[16..]);
        cipher.Release();

        byte[] output = [.. first, .. rest];
        Assert.Equal(Stock.Ecb(key, data, encrypting), output);
        AssertClean();
    }

    [Theory]
    [InlineData(16, true)]
    [InlineData(24, true)]
    [InlineData(32, true)]
    [InlineData(16, false)]
    [InlineData(24, false)]
    [InlineData(32, false)]
    public void Every_cbc_message_restarts_at_its_own_iv(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 103);
        byte[] data = Stock.Bytes(112, 104);
        CommonCryptoBlockCipher cipher = Make(false, encrypting, key);

        foreach (byte[] iv in new[] { Stock.Bytes(16, 105), Stock.Bytes(16, 105), Stock.Bytes(16, 106) })
        {
            Assert.Equal(Stock.Cbc(key, iv, data, encrypting), Run(cipher, iv, data));
        }

        Assert.Equal(3, _api.ResetCalls);
        cipher.Release();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Ecb_never_calls_CCCryptorReset(bool encrypting)
    {
        byte[] key = Stock.Bytes(32, 109);
        byte[] data = Stock.Bytes(32, 110);
        CommonCryptoBlockCipher cipher = Make(true, encrypting, key);

        for (int message = 0; message < 3; message++)
        {
            Assert.Equal(Stock.Ecb(key, data, encrypting), Run(cipher, null, data));
        }

        Assert.Equal(0, _api.ResetCalls);
        Assert.Empty(_api.Violations);
        Assert.False(cipher.IsFaulted);
        cipher.Release();
    }

    [Fact]
    public void The_callers_iv_is_not_modified()
    {
        byte[] iv = Stock.Bytes(16, 112);
        byte[] before = (byte[])iv.Clone();
        CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(16, 113));

        Run(cipher, iv, new byte[64]);

        Assert.Equal(before, iv);
        cipher.Release();
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public void In_place_transform_matches_stock(bool ecb, bool encrypting)
    {
        byte[] key = Stock.Bytes(24, 114);
        byte[]? iv = ecb ? null : Stock.Bytes(16, 115);
        byte[] data = Stock.Bytes(96, 116);
        byte[] buffer = (byte[])data.Clone();
        CommonCryptoBlockCipher cipher = Make(ecb, encrypting, key);

        Assert.True(cipher.TryTransform(iv, buffer, buffer));

        Assert.Equal(ecb ? Stock.Ecb(key, data, encrypting) : Stock.Cbc(key, iv!, data, encrypting), buffer);
        cipher.Release();
    }

    [Theory]
    [InlineData(SimulatedCommonCryptoApi.kCCBufferTooSmall, "-4301 (kCCBufferTooSmall)")]
    [InlineData(SimulatedCommonCryptoApi.kCCAlignmentError, "-4303 (kCCAlignmentError)")]
    [InlineData(-1, "-1 (unknown status)")]
    public void An_update_failure_reports_the_status_and_faults_the_handle(int status, string expected)
    {
        CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(16, 120));
        _api.Inject("CCCryptorUpdate", status);

        Assert.False(cipher.TryTransform(new byte[16], new byte[32], new byte[32]));
        CryptographicException e = cipher.CreateFailure();

        Assert.Contains("CCCryptorUpdate", e.Message, StringComparison.Ordinal);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void A_reset_failure_reports_the_status_and_faults_the_handle()
    {
        CommonCryptoBlockCipher cipher = Make(false, false, Stock.Bytes(16, 121));
        _api.Inject("CCCryptorReset", SimulatedCommonCryptoApi.kCCParamError);

        Assert.False(cipher.TryTransform(new byte[16], new byte[16], new byte[16]));

        Assert.Contains("CCCryptorReset failed with CCCryptorStatus -4300 (kCCParamError)", cipher.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        Assert.DoesNotContain("CCCryptorUpdate", _api.Calls);
        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void A_failed_create_reports_the_status_and_leaves_nothing_allocated()
    {
        _api.Inject("CCCryptorCreateWithMode", SimulatedCommonCryptoApi.kCCMemoryFailure);

        var e = Assert.Throws<CryptographicException>(() => Make(true, true, Stock.Bytes(16, 122)));

        Assert.Contains("CCCryptorCreateWithMode failed with CCCryptorStatus -4302 (kCCMemoryFailure)", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("CCCryptorRelease", _api.Calls);
        AssertClean();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(8)]
    [InlineData(31)]
    public void A_bad_key_size_is_rejected_before_any_native_call(int keySize)
    {
        Assert.Throws<CryptographicException>(() => Make(false, true, new byte[keySize]));
        Assert.Empty(_api.Calls);
    }

    [Fact]
    public void The_key_reaches_commoncrypto_as_a_private_copy_not_the_callers_buffer()
    {
        byte[] key = Stock.Bytes(16, 123);
        unsafe
        {
            fixed (byte* pKey = key)
            {
                CommonCryptoBlockCipher cipher = Make(false, true, key);
                Assert.NotEqual((nint)pKey, Assert.Single(_api.KeyAddresses));
                cipher.Release();
            }
        }
    }

    [Fact]
    public void A_short_dataOutMoved_is_an_error()
    {
        _api.HoldBackLastBlock = true;
        CommonCryptoBlockCipher cipher = Make(false, false, Stock.Bytes(16, 124));

        Assert.False(cipher.TryTransform(new byte[16], new byte[48], new byte[48]));

        Assert.Contains("wrote 32 bytes instead of 48", cipher.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void Release_releases_the_cryptor_exactly_once()
    {
        CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(32, 125));
        Assert.Equal(1, _api.LiveCryptors);

        cipher.Release();

        Assert.Single(_api.Calls, c => c == "CCCryptorRelease");
        AssertClean();
    }

    [Fact]
    public void Backend_probes_one_cryptor_releases_it_and_reports_commoncrypto()
    {
        var api = new SimulatedCommonCryptoApi();

        Assert.True(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend));

        Assert.Equal(CachedAesBackend.CommonCrypto, backend.Kind);
        Assert.Single(api.Calls, c => c == "CCCryptorCreateWithMode");
        Assert.Equal(0, api.LiveCryptors);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void Backend_is_unavailable_when_the_probe_fails()
    {
        var api = new SimulatedCommonCryptoApi();
        api.Inject("CCCryptorCreateWithMode", SimulatedCommonCryptoApi.kCCUnimplemented);

        Assert.False(CommonCryptoBackend.TryCreate(api, out CipherBackend? backend));

        Assert.Null(backend);
        Assert.Equal(0, api.LiveCryptors);
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

    [Fact]
    public void A_failure_after_the_native_cryptor_exists_still_releases_it()
    {
        var api = new FailAfterCreateApi(_api);

        var e = Assert.Throws<CryptographicException>(() => CommonCryptoBlockCipher.Create(api, BlockCipherMode.Ecb, true, Stock.Bytes(16, 130)));

        Assert.Contains("-4302 (kCCMemoryFailure)", e.Message, StringComparison.Ordinal);
        Assert.Single(_api.Calls, c => c == "CCCryptorRelease");
        AssertClean();
    }

    /// <summary>Creates the cryptor through the simulated layer, then reports a failure anyway.</summary>
    private sealed class FailAfterCreateApi(SimulatedCommonCryptoApi inner) : ICommonCryptoApi
    {
        public int CreateWithMode(uint operation, uint mode, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> key, SafeCCCryptorHandle cryptor)
        {
            _ = inner.CreateWithMode(operation, mode, iv, key, cryptor);
            return SimulatedCommonCryptoApi.kCCMemoryFailure;
        }

        public int Update(nint cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved) => inner.Update(cryptor, input, output, out moved);

        public int Reset(nint cryptor, ReadOnlySpan<byte> iv) => inner.Reset(cryptor, iv);

        public int Release(nint cryptor) => inner.Release(cryptor);
    }
}
