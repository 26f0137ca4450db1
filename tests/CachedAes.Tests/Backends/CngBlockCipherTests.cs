using System;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Interop.Cng;

namespace CachedCryptography.Tests.Backends;

public sealed class CngBlockCipherTests
{
    private const nint EcbAlg = BCrypt.BCRYPT_AES_ECB_ALG_HANDLE;
    private const nint CbcAlg = BCrypt.BCRYPT_AES_CBC_ALG_HANDLE;

    private readonly SimulatedBCryptApi _api = new();

    private CngBlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key)
        => CngBlockCipher.Create(_api, mode == BlockCipherMode.Ecb ? EcbAlg : CbcAlg, mode, encrypting, key);

    private static byte[] Run(CngBlockCipher cipher, byte[]? iv, byte[] input)
    {
        byte[] output = new byte[input.Length];
        Assert.True(cipher.TryTransform(iv, input, output));
        return output;
    }

    private void AssertClean()
    {
        Assert.Empty(_api.Violations);
        Assert.Equal(0, _api.LiveKeys);
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
        byte[] key = Stock.Bytes(keySize, 1);
        byte[] data = Stock.Bytes(80, 2);
        CngBlockCipher cipher = Make(BlockCipherMode.Ecb, encrypting, key);
        byte[] output = Run(cipher, null, data);
        cipher.Release();

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
    public void Cbc_messages_match_stock_and_a_message_continues_from_its_previous_ciphertext_block(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 3);
        byte[] iv = Stock.Bytes(16, 4);
        byte[] data = Stock.Bytes(112, 5);
        byte[] expected = Stock.Cbc(key, iv, data, encrypting);
        CngBlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        Assert.Equal(expected, Run(cipher, iv, data));

        // Split at block 3: the second part's IV is the ciphertext block before it.
        byte[] ciphertext = encrypting ? expected : data;
        byte[] head = Run(cipher, iv, data[..48]);
        byte[] tail = Run(cipher, ciphertext[32..48], data[48..]);
        Assert.Equal(expected, head.Concat(tail).ToArray());
        cipher.Release();
        AssertClean();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Every_message_starts_from_its_own_iv_although_cng_overwrote_the_private_copy(bool encrypting)
    {
        byte[] key = Stock.Bytes(32, 6);
        byte[] iv1 = Stock.Bytes(16, 7);
        byte[] iv2 = Stock.Bytes(16, 8);
        byte[] data = Stock.Bytes(64, 9);
        CngBlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        foreach (byte[] iv in new[] { iv1, iv1, iv2, iv1 })
        {
            Assert.Equal(Stock.Cbc(key, iv, data, encrypting), Run(cipher, iv, data));
        }

        cipher.Release();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void The_callers_iv_is_never_modified(bool encrypting)
    {
        byte[] key = Stock.Bytes(16, 10);
        byte[] iv = Stock.Bytes(16, 11);
        byte[] ivBefore = (byte[])iv.Clone();
        byte[] data = Stock.Bytes(48, 12);
        CngBlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        Run(cipher, iv, data);

        Assert.Equal(ivBefore, iv);
        Assert.All(_api.CipherCalls, c => Assert.Equal(16, c.IvLength));
        cipher.Release();
    }

    [Fact]
    public void Ecb_passes_a_null_iv()
    {
        byte[] key = Stock.Bytes(16, 15);
        byte[] data = Stock.Bytes(32, 16);
        CngBlockCipher cipher = Make(BlockCipherMode.Ecb, true, key);

        Run(cipher, null, data);
        byte[] output = Run(cipher, null, data);

        Assert.Equal(2, _api.CipherCalls.Count);
        Assert.All(_api.CipherCalls, c => Assert.Equal((BlockCipherMode.Ecb, 0), c));
        Assert.Equal(Stock.Ecb(key, data, true), output);
        cipher.Release();
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public void In_place_transform_matches_stock(bool ecb, bool encrypting)
    {
        BlockCipherMode mode = ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
        byte[] key = Stock.Bytes(24, 18);
        byte[]? iv = ecb ? null : Stock.Bytes(16, 19);
        byte[] data = Stock.Bytes(96, 20);
        byte[] buffer = (byte[])data.Clone();
        CngBlockCipher cipher = Make(mode, encrypting, key);

        Assert.True(cipher.TryTransform(iv, buffer, buffer));

        byte[] expected = ecb ? Stock.Ecb(key, data, encrypting) : Stock.Cbc(key, iv!, data, encrypting);
        Assert.Equal(expected, buffer);
        cipher.Release();
    }

    [Theory]
    [InlineData(true, "BCryptEncrypt")]
    [InlineData(false, "BCryptDecrypt")]
    public void A_native_failure_reports_the_ntstatus_in_hex_and_faults_the_handle(bool encrypting, string function)
    {
        CngBlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, Stock.Bytes(16, 24));
        _api.Inject(function, SimulatedBCryptApi.STATUS_INVALID_PARAMETER);

        Assert.False(cipher.TryTransform(new byte[16], new byte[32], new byte[32]));
        CryptographicException e = cipher.CreateFailure();
        Assert.Contains(function, e.Message, StringComparison.Ordinal);
        Assert.Contains("0xC000000D", e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        Assert.Equal(1, _api.LiveKeys);

        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void A_failed_key_creation_reports_the_status_and_leaves_nothing_allocated()
    {
        _api.Inject("BCryptGenerateSymmetricKey", SimulatedBCryptApi.STATUS_NO_MEMORY);

        var e = Assert.Throws<CryptographicException>(() => Make(BlockCipherMode.Ecb, true, Stock.Bytes(16, 25)));
        Assert.Contains("BCryptGenerateSymmetricKey", e.Message, StringComparison.Ordinal);
        Assert.Contains("0xC0000017", e.Message, StringComparison.Ordinal);
        AssertClean();
        Assert.DoesNotContain("BCryptDestroyKey", _api.Calls);
    }

    [Fact]
    public void A_key_on_an_invalid_algorithm_handle_fails_with_status_invalid_handle()
    {
        var e = Assert.Throws<CryptographicException>(
            () => CngBlockCipher.Create(_api, 0x1234, BlockCipherMode.Ecb, true, Stock.Bytes(16, 26)));
        Assert.Contains("0xC0000008", e.Message, StringComparison.Ordinal);
        AssertClean();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(15)]
    [InlineData(17)]
    [InlineData(33)]
    public void A_bad_key_size_is_rejected_before_any_native_call(int keySize)
    {
        Assert.Throws<CryptographicException>(() => Make(BlockCipherMode.Cbc, true, new byte[keySize]));
        Assert.Empty(_api.Calls);
    }

    [Fact]
    public void The_key_reaches_cng_as_a_private_copy_not_the_callers_buffer()
    {
        byte[] key = Stock.Bytes(32, 27);
        unsafe
        {
            fixed (byte* pKey = key)
            {
                CngBlockCipher cipher = Make(BlockCipherMode.Ecb, true, key);
                Assert.NotEqual((nint)pKey, Assert.Single(_api.SecretAddresses));
                cipher.Release();
            }
        }
    }

    [Fact]
    public void Release_destroys_the_key_exactly_once()
    {
        BlockCipher cipher = Make(BlockCipherMode.Cbc, true, Stock.Bytes(16, 28));
        Assert.Equal(1, _api.LiveKeys);

        cipher.Release();

        Assert.Equal(0, _api.LiveKeys);
        Assert.Single(_api.Calls, c => c == "BCryptDestroyKey");
        AssertClean();
    }

    [Fact]
    public void A_short_byte_count_from_cng_is_an_error()
    {
        var api = new MisbehavingApi(_api) { ShortWrite = true };
        CngBlockCipher cipher = CngBlockCipher.Create(api, EcbAlg, BlockCipherMode.Ecb, true, Stock.Bytes(16, 33));

        Assert.False(cipher.TryTransform(default, new byte[32], new byte[32]));
        Assert.Contains("wrote 16 bytes instead of 32", cipher.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);

        cipher.Release();
        AssertClean();
    }

    // The simulated layer itself must follow CNG's documented behaviour, or the tests above prove little.
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

    [Fact]
    public void A_failure_after_the_native_key_exists_still_destroys_it()
    {
        var api = new MisbehavingApi(_api) { FailAfterCreate = true };

        var e = Assert.Throws<CryptographicException>(() => CngBlockCipher.Create(api, CbcAlg, BlockCipherMode.Cbc, false, Stock.Bytes(16, 37)));

        Assert.Contains("0xC0000017", e.Message, StringComparison.Ordinal);
        Assert.Single(_api.Calls, c => c == "BCryptDestroyKey");
        AssertClean();
    }

    /// <summary>Wraps the simulated layer and misbehaves on request: under-reports bytes written, or fails after creating a key.</summary>
    private sealed class MisbehavingApi(SimulatedBCryptApi inner) : IBCryptApi
    {
        public bool ShortWrite { get; init; }

        public bool FailAfterCreate { get; init; }

        public int OpenAlgorithmProvider(string algorithmId, out nint algorithm) => inner.OpenAlgorithmProvider(algorithmId, out algorithm);

        public int SetProperty(nint handle, string property, ReadOnlySpan<byte> value) => inner.SetProperty(handle, property, value);

        public int CloseAlgorithmProvider(nint algorithm) => inner.CloseAlgorithmProvider(algorithm);

        public int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, SafeBCryptKeyHandle key)
        {
            int status = inner.GenerateSymmetricKey(algorithm, secret, key);
            return FailAfterCreate ? SimulatedBCryptApi.STATUS_NO_MEMORY : status;
        }

        public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        {
            int status = inner.Encrypt(key, input, iv, output, out written);
            written -= ShortWrite ? 16 : 0;
            return status;
        }

        public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
            => inner.Decrypt(key, input, iv, output, out written);

        public int DestroyKey(nint key) => inner.DestroyKey(key);
    }
}
