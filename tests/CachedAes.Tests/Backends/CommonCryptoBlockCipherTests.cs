using System;
using System.Security.Cryptography;
using CachedCryptography;
using CachedCryptography.Interop;
using CachedCryptography.Interop.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

public sealed class CommonCryptoBlockCipherTests
{
    private readonly SimulatedCommonCryptoApi _api = new();

    private CommonCryptoBlockCipher Make(bool ecb, bool encrypting, byte[] key)
        => CommonCryptoBlockCipher.Create(_api, ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, encrypting, key);

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
        byte[] output = new byte[data.Length];
        using (CommonCryptoBlockCipher cipher = Make(true, encrypting, key))
        {
            cipher.Transform(data.AsSpan(0, 16), output.AsSpan(0, 16));
            cipher.Transform(data.AsSpan(16), output.AsSpan(16));
        }

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
    public void Cbc_chains_across_transform_calls_and_restarts_at_each_reset(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 103);
        byte[] data = Stock.Bytes(112, 104);
        using CommonCryptoBlockCipher cipher = Make(false, encrypting, key);

        foreach (byte[] iv in new[] { Stock.Bytes(16, 105), Stock.Bytes(16, 105), Stock.Bytes(16, 106) })
        {
            byte[] output = new byte[data.Length];
            cipher.Reset(iv);
            cipher.Transform(data.AsSpan(0, 48), output.AsSpan(0, 48));
            cipher.Transform(data.AsSpan(48), output.AsSpan(48));
            Assert.Equal(Stock.Cbc(key, iv, data, encrypting), output);
        }

        Assert.Equal(3, _api.ResetCalls);
    }

    [Fact]
    public void Cbc_before_any_reset_starts_from_a_zero_iv()
    {
        byte[] key = Stock.Bytes(16, 107);
        byte[] data = Stock.Bytes(32, 108);
        byte[] output = new byte[data.Length];
        using CommonCryptoBlockCipher cipher = Make(false, false, key);

        cipher.Transform(data, output);

        Assert.Equal(Stock.Cbc(key, new byte[16], data, false), output);
        Assert.Equal(0, _api.ResetCalls);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Ecb_never_calls_CCCryptorReset(bool encrypting)
    {
        byte[] key = Stock.Bytes(32, 109);
        byte[] data = Stock.Bytes(32, 110);
        using CommonCryptoBlockCipher cipher = Make(true, encrypting, key);

        for (int message = 0; message < 3; message++)
        {
            byte[] output = new byte[data.Length];
            cipher.Reset(Stock.Bytes(16, 111 + message));
            cipher.Transform(data, output);
            Assert.Equal(Stock.Ecb(key, data, encrypting), output);
        }

        Assert.Equal(0, _api.ResetCalls);
        Assert.Empty(_api.Violations);
        Assert.False(cipher.IsFaulted);
    }

    [Fact]
    public void The_callers_iv_is_not_modified()
    {
        byte[] iv = Stock.Bytes(16, 112);
        byte[] before = (byte[])iv.Clone();
        using CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(16, 113));

        cipher.Reset(iv);
        cipher.Transform(new byte[64], new byte[64]);

        Assert.Equal(before, iv);
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public void In_place_transform_matches_stock(bool ecb, bool encrypting)
    {
        byte[] key = Stock.Bytes(24, 114);
        byte[] iv = Stock.Bytes(16, 115);
        byte[] data = Stock.Bytes(96, 116);
        byte[] buffer = (byte[])data.Clone();
        using CommonCryptoBlockCipher cipher = Make(ecb, encrypting, key);

        cipher.Reset(iv);
        cipher.Transform(buffer.AsSpan(0, 32), buffer.AsSpan(0, 32));
        cipher.Transform(buffer.AsSpan(32), buffer.AsSpan(32));

        Assert.Equal(ecb ? Stock.Ecb(key, data, encrypting) : Stock.Cbc(key, iv, data, encrypting), buffer);
    }

    [Theory]
    [InlineData(SimulatedCommonCryptoApi.kCCBufferTooSmall, "-4301 (kCCBufferTooSmall)")]
    [InlineData(SimulatedCommonCryptoApi.kCCAlignmentError, "-4303 (kCCAlignmentError)")]
    [InlineData(-1, "-1 (unknown status)")]
    public void An_update_failure_reports_the_status_and_faults_the_handle(int status, string expected)
    {
        CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(16, 120));
        _api.Inject("CCCryptorUpdate", status);

        var e = Assert.Throws<CryptographicException>(() => cipher.Transform(new byte[32], new byte[32]));

        Assert.Contains("CCCryptorUpdate", e.Message, StringComparison.Ordinal);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Dispose();
        AssertClean();
    }

    [Fact]
    public void A_reset_failure_reports_the_status_and_faults_the_handle()
    {
        CommonCryptoBlockCipher cipher = Make(false, false, Stock.Bytes(16, 121));
        _api.Inject("CCCryptorReset", SimulatedCommonCryptoApi.kCCParamError);

        var e = Assert.Throws<CryptographicException>(() => cipher.Reset(new byte[16]));

        Assert.Contains("CCCryptorReset failed with CCCryptorStatus -4300 (kCCParamError)", e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Dispose();
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
                using CommonCryptoBlockCipher cipher = Make(false, true, key);
                Assert.NotEqual((nint)pKey, Assert.Single(_api.KeyAddresses));
            }
        }
    }

    [Fact]
    public void A_short_dataOutMoved_is_an_error()
    {
        _api.HoldBackLastBlock = true;
        CommonCryptoBlockCipher cipher = Make(false, false, Stock.Bytes(16, 124));

        var e = Assert.Throws<CryptographicException>(() => cipher.Transform(new byte[48], new byte[48]));

        Assert.Contains("wrote 32 bytes instead of 48", e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Dispose();
        AssertClean();
    }

    [Fact]
    public void Dispose_releases_the_cryptor_exactly_once_and_later_use_throws_cryptographic_exception()
    {
        CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(32, 125));
        Assert.Equal(1, _api.LiveCryptors);

        cipher.Dispose();
        cipher.Dispose();

        Assert.True(cipher.IsFaulted);
        Assert.Single(_api.Calls, c => c == "CCCryptorRelease");
        Assert.IsType<CryptographicException>(Record.Exception(() => cipher.Transform(new byte[16], new byte[16])));
        Assert.IsType<CryptographicException>(Record.Exception(() => cipher.Reset(new byte[16])));
        AssertClean();
    }

    [Theory]
    [InlineData(15, 16)]
    [InlineData(32, 16)]
    public void Wrong_buffer_sizes_throw_and_fault_without_a_native_call(int inputLength, int outputLength)
    {
        using CommonCryptoBlockCipher cipher = Make(true, true, Stock.Bytes(16, 126));
        int calls = _api.Calls.Count;

        Assert.Throws<CryptographicException>(() => cipher.Transform(new byte[inputLength], new byte[outputLength]));

        Assert.True(cipher.IsFaulted);
        Assert.Equal(calls, _api.Calls.Count);
    }

    [Fact]
    public void A_wrong_iv_length_throws_and_faults()
    {
        using CommonCryptoBlockCipher cipher = Make(false, true, Stock.Bytes(16, 127));

        Assert.Throws<CryptographicException>(() => cipher.Reset(new byte[12]));

        Assert.True(cipher.IsFaulted);
        Assert.Equal(0, _api.ResetCalls);
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

        Assert.Equal(SimulatedCommonCryptoApi.kCCUnimplemented, _api.Reset(handle, new byte[16]));
    }

    [Fact]
    public void Simulated_update_buffers_a_partial_block_and_reports_a_short_output_buffer()
    {
        byte[] key = Stock.Bytes(16, 128);
        byte[] data = Stock.Bytes(32, 129);
        using var handle = new SafeCCCryptorHandle(_api);
        Assert.Equal(0, _api.CreateWithMode(0, 2, default, key, handle));
        byte[] output = new byte[32];

        Assert.Equal(SimulatedCommonCryptoApi.kCCBufferTooSmall, _api.Update(handle, data, new byte[16], out _));
        Assert.Equal(0, _api.Update(handle, data.AsSpan(0, 10), output, out nuint moved1));
        Assert.Equal(0, _api.Update(handle, data.AsSpan(10), output, out nuint moved2));

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

        public int Update(SafeCCCryptorHandle cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved) => inner.Update(cryptor, input, output, out moved);

        public int Reset(SafeCCCryptorHandle cryptor, ReadOnlySpan<byte> iv) => inner.Reset(cryptor, iv);

        public int Release(nint cryptor) => inner.Release(cryptor);
    }
}
