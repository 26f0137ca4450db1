using System;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Every bad-input row of the table in docs/stock-compatibility.md (and the core's own failures), each against stock:
/// stock must throw what the table says, and CachedAes exactly the same type, ParamName and (where listed) message.
/// </summary>
public class BadInputTests
{
    private static readonly byte[] s_key = Convert.FromHexString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    private static readonly byte[] s_iv = Convert.FromHexString("f0e0d0c0b0a090807060504030201000");
    private static readonly byte[] s_block = new byte[32];

    private static void SameFailure<TExpected>(string backend, string? expectedParam, string? expectedMessage, params Action<SymmetricAlgorithm>[] calls)
        where TExpected : Exception
    {
        for (int i = 0; i < calls.Length; i++)
        {
            using Aes stock = TestUtil.Stock(s_key);
            using CachedAes cached = BackendData.Create(backend, s_key);

            TExpected fromStock = Assert.Throws<TExpected>(() => calls[i](stock));
            Exception fromCached = Record.Exception(() => calls[i](cached));
            Assert.NotNull(fromCached);
            Assert.True(fromCached.GetType() == typeof(TExpected), $"call #{i}: expected {typeof(TExpected).Name} like stock, got {fromCached}");
            if (fromStock is ArgumentException stockArg)
            {
                if (expectedParam is not null)
                {
                    Assert.Equal(expectedParam, stockArg.ParamName);
                }

                Assert.Equal(stockArg.ParamName, ((ArgumentException)fromCached).ParamName);
            }

            if (expectedMessage is not null)
            {
                Assert.StartsWith(expectedMessage, fromStock.Message, StringComparison.Ordinal);
                Assert.Equal(fromStock.Message, fromCached.Message);
            }

            // The instance still works afterwards.
            Assert.Equal(stock.EncryptCbc(s_block, s_iv), cached.EncryptCbc(s_block, s_iv));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Padding_mode_outside_None_to_ISO10126_throws_ArgumentOutOfRangeException(string backend)
    {
        foreach (PaddingMode bad in new[] { (PaddingMode)0, (PaddingMode)6, (PaddingMode)(-1) })
        {
            SameFailure<ArgumentOutOfRangeException>(backend, "paddingMode", null,
                a => a.EncryptEcb(s_block, bad),
                a => a.DecryptEcb(s_block.AsSpan(), bad),
                a => a.TryEncryptEcb(s_block, new byte[64], bad, out _),
                a => a.EncryptCbc(s_block, s_iv, bad),
                a => a.DecryptCbc(s_block.AsSpan(), s_iv, new byte[64], bad),
                a => a.TryDecryptCbc(s_block, s_iv, new byte[64], out _, bad),
                a => a.EncryptCfb(s_block, s_iv, bad, 8),
                a => a.TryDecryptCfb(s_block, s_iv, new byte[64], out _, bad, 128));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Iv_length_other_than_16_throws_ArgumentException(string backend)
    {
        foreach (int length in new[] { 0, 8, 15, 17, 32 })
        {
            byte[] iv = new byte[length];
            SameFailure<ArgumentException>(backend, "iv", null,
                a => a.EncryptCbc(s_block, iv),
                a => a.DecryptCbc(s_block.AsSpan(), iv.AsSpan()),
                a => a.EncryptCbc(s_block.AsSpan(), iv, new byte[64]),
                a => a.TryDecryptCbc(s_block, iv, new byte[64], out _, PaddingMode.None),
                a => a.EncryptCfb(s_block, iv),
                a => a.DecryptCfb(s_block.AsSpan(), iv, PaddingMode.None, 128),
                a => a.TryEncryptCfb(s_block, iv, new byte[64], out _));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Feedback_size_not_a_multiple_of_8_in_8_to_128_throws_ArgumentException(string backend)
    {
        foreach (int bad in new[] { 0, -8, 1, 7, 9, 127, 136, 256 })
        {
            SameFailure<ArgumentException>(backend, "feedbackSizeInBits", null,
                a => a.EncryptCfb(s_block, s_iv, PaddingMode.None, bad),
                a => a.DecryptCfb(s_block, s_iv, PaddingMode.None, bad),
                a => a.EncryptCfb(s_block.AsSpan(), s_iv, new byte[64], PaddingMode.None, bad),
                a => a.TryDecryptCfb(s_block, s_iv, new byte[64], out _, PaddingMode.None, bad));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Null_byte_array_argument_throws_ArgumentNullException(string backend)
    {
        SameFailure<ArgumentNullException>(backend, null, null,
            a => a.EncryptEcb(null!, PaddingMode.PKCS7),
            a => a.DecryptEcb(null!, PaddingMode.PKCS7),
            a => a.EncryptCbc(null!, s_iv),
            a => a.EncryptCbc(s_block, null!),
            a => a.DecryptCbc(null!, s_iv),
            a => a.DecryptCbc(s_block, null!),
            a => a.DecryptCfb(null!, s_iv),
            a => a.DecryptCfb(s_block, null!));
    }

    /// <summary>
    /// Stock quirk (found on .NET 10, not in the notes' table): the byte[] overload of EncryptCfb does not null-check.
    /// A null plaintext is treated as empty and a null IV fails the IV length check with ArgumentException.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void EncryptCfb_byte_array_overload_with_null_arguments_behaves_like_stock(string backend)
    {
        using Aes stock = TestUtil.Stock(s_key);
        using CachedAes cached = BackendData.Create(backend, s_key);
        foreach (PaddingMode padding in new[] { PaddingMode.None, PaddingMode.PKCS7 })
        {
            byte[] expected = stock.EncryptCfb((byte[])null!, s_iv, padding, 8);
            Assert.Equal(expected, cached.EncryptCfb((byte[])null!, s_iv, padding, 8));
        }

        SameFailure<ArgumentException>(backend, "iv", null, a => a.EncryptCfb(s_block, (byte[])null!));
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Int_returning_overload_with_short_destination_throws_ArgumentException(string backend)
    {
        byte[] ecbCt, cbcCt, cfbCt;
        using (Aes stock = TestUtil.Stock(s_key))
        {
            ecbCt = stock.EncryptEcb(s_block, PaddingMode.PKCS7);
            cbcCt = stock.EncryptCbc(s_block, s_iv, PaddingMode.PKCS7);
            cfbCt = stock.EncryptCfb(s_block, s_iv, PaddingMode.PKCS7, 8);
        }

        SameFailure<ArgumentException>(backend, "destination", TestUtil.DestinationTooShortMessage,
            a => a.EncryptEcb(s_block.AsSpan(), new byte[47], PaddingMode.PKCS7),
            a => a.EncryptEcb(s_block.AsSpan(), new byte[31], PaddingMode.None),
            a => a.DecryptEcb(ecbCt.AsSpan(), new byte[31], PaddingMode.PKCS7),
            a => a.EncryptCbc(s_block.AsSpan(), s_iv, new byte[40], PaddingMode.ANSIX923),
            a => a.DecryptCbc(cbcCt.AsSpan(), s_iv, new byte[16], PaddingMode.PKCS7),
            a => a.DecryptCbc(cbcCt.AsSpan(), s_iv, new byte[47], PaddingMode.None),
            a => a.EncryptCfb(s_block.AsSpan(), s_iv, new byte[32], PaddingMode.PKCS7, 8),
            a => a.DecryptCfb(cfbCt.AsSpan(), s_iv, new byte[31], PaddingMode.PKCS7, 8));
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Allocating_encrypt_with_None_and_a_partial_block_throws_ArgumentException(string backend)
    {
        byte[] partial = new byte[21];
        SameFailure<ArgumentException>(backend, null, null,
            a => a.EncryptEcb(partial, PaddingMode.None),
            a => a.EncryptEcb(partial.AsSpan(), PaddingMode.None),
            a => a.EncryptCbc(partial, s_iv, PaddingMode.None),
            a => a.EncryptCbc(partial.AsSpan(), s_iv, PaddingMode.None),
            a => a.EncryptCfb(partial, s_iv, PaddingMode.None, 128));
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void None_with_a_partial_block_on_span_paths_throws_CryptographicException(string backend)
    {
        byte[] partial = new byte[21];
        SameFailure<CryptographicException>(backend, null, TestUtil.IncompleteBlockMessage,
            a => a.EncryptEcb(partial.AsSpan(), new byte[64], PaddingMode.None),
            a => a.TryEncryptEcb(partial, new byte[64], PaddingMode.None, out _),
            a => a.TryEncryptCbc(partial, s_iv, new byte[64], out _, PaddingMode.None),
            a => a.DecryptEcb(partial.AsSpan(), new byte[64], PaddingMode.None),
            a => a.TryDecryptCbc(partial, s_iv, new byte[64], out _, PaddingMode.None),
            a => a.TryDecryptCbc(partial, s_iv, new byte[64], out _, PaddingMode.PKCS7),
            a => a.DecryptEcb(partial, PaddingMode.None),
            a => a.DecryptCbc(partial, s_iv, PaddingMode.PKCS7),
            a => a.TryEncryptCfb(partial, s_iv, new byte[64], out _, PaddingMode.None, 128));
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Cfb_feedback_other_than_8_or_128_throws_CryptographicException(string backend)
    {
        foreach (int feedback in new[] { 16, 32, 64 })
        {
            SameFailure<CryptographicException>(backend, null, null,
                a => a.EncryptCfb(s_block, s_iv, PaddingMode.None, feedback),
                a => a.DecryptCfb(s_block.AsSpan(), s_iv, PaddingMode.None, feedback),
                a => a.TryEncryptCfb(s_block, s_iv, new byte[64], out _, PaddingMode.PKCS7, feedback));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Destination_too_small_returns_false_and_zero_bytes_written(string backend)
    {
        using Aes stock = TestUtil.Stock(s_key);
        using CachedAes cached = BackendData.Create(backend, s_key);
        byte[] pt = new byte[40];
        byte[] ecbCt = stock.EncryptEcb(pt, PaddingMode.PKCS7);
        byte[] cbcCt = stock.EncryptCbc(pt, s_iv, PaddingMode.PKCS7);
        byte[] cfbCt = stock.EncryptCfb(pt, s_iv, PaddingMode.PKCS7, 128);

        var calls = new (string Name, TryCall Call, int DestLength)[]
        {
            ("TryEncryptEcb", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryEncryptEcb(pt, d, PaddingMode.PKCS7, out w), 47),
            ("TryDecryptEcb", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryDecryptEcb(ecbCt, d, PaddingMode.PKCS7, out w), 39),
            ("TryDecryptEcb short", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryDecryptEcb(ecbCt, d, PaddingMode.PKCS7, out w), 16),
            ("TryEncryptCbc", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryEncryptCbc(pt, s_iv, d, out w), 40),
            ("TryDecryptCbc", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryDecryptCbc(cbcCt, s_iv, d, out w), 39),
            ("TryDecryptCbc None", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryDecryptCbc(cbcCt, s_iv, d, out w, PaddingMode.None), 47),
            ("TryEncryptCfb", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryEncryptCfb(pt, s_iv, d, out w, PaddingMode.PKCS7, 128), 47),
            ("TryDecryptCfb", (SymmetricAlgorithm a, Span<byte> d, out int w) => a.TryDecryptCfb(cfbCt, s_iv, d, out w, PaddingMode.PKCS7, 128), 39),
        };

        foreach ((string name, TryCall call, int destLength) in calls)
        {
            byte[] stockDest = TestUtil.Filled(destLength);
            byte[] cachedDest = TestUtil.Filled(destLength);
            Assert.False(call(stock, stockDest, out int stockWritten), name + " (stock)");
            Assert.Equal(0, stockWritten);
            Assert.False(call(cached, cachedDest, out int cachedWritten), name);
            Assert.Equal(0, cachedWritten);
            TestUtil.AssertNoNewData(TestUtil.Filled(destLength), cachedDest, name);
        }
    }

    private delegate bool TryCall(SymmetricAlgorithm alg, Span<byte> destination, out int bytesWritten);

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Bad_padding_on_decrypt_throws_CryptographicException(string backend)
    {
        // Raw blocks whose last byte is 0x00 decrypt (after encrypting raw with None) to an invalid pad for every checking mode.
        byte[] raw = new byte[32];
        raw[31] = 0;
        byte[] bigPad = new byte[32];
        bigPad[31] = 17;
        byte[] ecb0, ecb17, cbc0, cbc17, cfb0;
        using (Aes stock = TestUtil.Stock(s_key))
        {
            ecb0 = stock.EncryptEcb(raw, PaddingMode.None);
            ecb17 = stock.EncryptEcb(bigPad, PaddingMode.None);
            cbc0 = stock.EncryptCbc(raw, s_iv, PaddingMode.None);
            cbc17 = stock.EncryptCbc(bigPad, s_iv, PaddingMode.None);
            cfb0 = stock.EncryptCfb(raw, s_iv, PaddingMode.None, 8);
        }

        SameFailure<CryptographicException>(backend, null, TestUtil.BadPaddingMessage,
            a => a.DecryptEcb(ecb0, PaddingMode.PKCS7),
            a => a.DecryptEcb(ecb17.AsSpan(), new byte[64], PaddingMode.PKCS7),
            a => a.TryDecryptEcb(ecb0, new byte[32], PaddingMode.ANSIX923, out _),
            a => a.DecryptEcb(ecb17, PaddingMode.ISO10126),
            a => a.DecryptCbc(cbc0, s_iv, PaddingMode.PKCS7),
            a => a.TryDecryptCbc(cbc17, s_iv, new byte[16], out _, PaddingMode.ANSIX923),
            a => a.DecryptCbc(cbc0.AsSpan(), s_iv, new byte[32], PaddingMode.ISO10126),
            a => a.DecryptCfb(cfb0, s_iv, PaddingMode.PKCS7, 8),
            a => a.TryDecryptCfb(cfb0, s_iv, new byte[32], out _, PaddingMode.ANSIX923, 8));
    }
}
