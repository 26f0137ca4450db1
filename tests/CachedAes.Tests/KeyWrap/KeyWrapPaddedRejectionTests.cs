using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// RFC 5649 unwrap through the public API must reject a ciphertext whose integrity prefix is right but whose length
/// indicator (MLI) is impossible or whose pad bytes are not zero, exactly as stock does, and leave no plaintext in the
/// destination. The ciphertexts are made here without CachedAes: the alternative initial value
/// <c>A65959A6 || MLI</c> and the padded plaintext are encrypted with stock <see cref="SymmetricAlgorithm.EncryptEcb(byte[], PaddingMode)"/>
/// (padding off) as one block when there is one semiblock, and otherwise with the RFC 3394 wrapping process written
/// out below over stock ECB steps, so that only the field under test is wrong. That construction reproduces stock's own
/// wrap byte for byte whenever the fields are valid (<see cref="Crafted_wraps_of_valid_fields_are_stocks_own_wrap"/>).
/// </summary>
public sealed class KeyWrapPaddedRejectionTests
{
    private const uint AivPrefix = 0xA65959A6;
    private const byte Canary = 0x5A;

    public static TheoryData<string, int> BackendsAndSemiblocks()
    {
        var data = new TheoryData<string, int>();
        foreach (string backend in BackendData.All)
        {
            foreach (int semiblocks in new[] { 1, 2, 3 })
            {
                data.Add(backend, semiblocks);
            }
        }

        return data;
    }

    /// <summary>The impossible length indicators, by the rule each one breaks.</summary>
    public enum Indicator
    {
        /// <summary>MLI = 0 (n = 1, 2 and 3).</summary>
        Zero,

        /// <summary>0 &lt; MLI &lt;= 8(n-1): the last semiblock would be all padding (n = 2 and 3).</summary>
        AtMostEightTimesNMinusOne,

        /// <summary>MLI &gt; 8n: longer than the ciphertext holds (n = 2 and 3).</summary>
        MoreThanEightTimesN,

        /// <summary>One semiblock (a 16-byte ciphertext, a single AES block) with MLI above 8.</summary>
        OneBlockMoreThanEight,
    }

    public static TheoryData<string, Indicator> BackendsAndIndicators()
    {
        var data = new TheoryData<string, Indicator>();
        foreach (string backend in BackendData.All)
        {
            foreach (Indicator indicator in Enum.GetValues<Indicator>())
            {
                data.Add(backend, indicator);
            }
        }

        return data;
    }

    [Theory]
    [InlineData(16)]
    [InlineData(24)]
    [InlineData(32)]
    public void Crafted_wraps_of_valid_fields_are_stocks_own_wrap(int keyLength)
    {
        byte[] key = Enumerable.Range(0, keyLength).Select(i => (byte)(0x30 + i)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using var cached = new CachedAes { Key = key };

        for (int semiblocks = 1; semiblocks <= 4; semiblocks++)
        {
            for (int length = (8 * semiblocks) - 7; length <= 8 * semiblocks; length++)
            {
                byte[] data = DataWithZeroPad(semiblocks, length);
                byte[] crafted = Craft(stock, (uint)length, data);

                Assert.Equal(stock.EncryptKeyWrapPadded(data.AsSpan(0, length)), crafted);
                Assert.Equal(data.AsSpan(0, length).ToArray(), cached.DecryptKeyWrapPadded(crafted));
            }
        }
    }

    [Theory]
    [MemberData(nameof(BackendsAndSemiblocks))]
    public void A_nonzero_pad_byte_is_rejected_like_stock_and_the_destination_cleared(string backend, int semiblocks)
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(0xC0 ^ i)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        int cases = 0;

        // Every valid length that has padding, every pad position, a low and a high bit.
        for (int length = (8 * semiblocks) - 7; length < 8 * semiblocks; length++)
        {
            for (int position = length; position < 8 * semiblocks; position++)
            {
                foreach (byte value in new byte[] { 0x01, 0x80 })
                {
                    byte[] data = DataWithZeroPad(semiblocks, length);
                    data[position] = value;
                    AssertRejectedLikeStock(stock, cached, Craft(stock, (uint)length, data), $"{backend}, MLI {length}, pad byte {position} = 0x{value:X2}");
                    cases++;
                }
            }

            // Every pad byte the same non-zero value: an even number of them cancels out under XOR, so the check must
            // combine the pad bytes with OR.
            byte[] allSet = DataWithZeroPad(semiblocks, length);
            allSet.AsSpan(length).Fill(0x01);
            AssertRejectedLikeStock(stock, cached, Craft(stock, (uint)length, allSet), $"{backend}, MLI {length}, every pad byte 0x01");
            cases++;
        }

        // 1 + 2 + ... + 7 pad positions over the seven lengths, two values each, and one all-set pad per length.
        Assert.Equal((2 * 28) + 7, cases);
    }

    [Theory]
    [MemberData(nameof(BackendsAndIndicators))]
    public void An_impossible_length_indicator_is_rejected_like_stock_and_the_destination_cleared(string backend, Indicator indicator)
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(0x11 * i)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        int cases = 0;

        foreach ((int semiblocks, long indicatorValue) in Cases(indicator))
        {
            // The pad check alone must not decide: every byte the indicator would make padding is zero, and every
            // other byte is non-zero data (so an indicator above 8n has no padding at all).
            int dataBytes = (int)Math.Clamp(indicatorValue, 0, 8 * semiblocks);
            byte[] data = DataWithZeroPad(semiblocks, dataBytes);
            AssertRejectedLikeStock(stock, cached, Craft(stock, (uint)indicatorValue, data), $"{backend}, n = {semiblocks}, MLI {indicatorValue}");
            cases++;
        }

        Assert.True(cases >= 3, $"only {cases} cases");
    }

    private static IEnumerable<(int Semiblocks, long Indicator)> Cases(Indicator indicator) => indicator switch
    {
        Indicator.Zero => [(1, 0), (2, 0), (3, 0)],
        Indicator.AtMostEightTimesNMinusOne => [(2, 1), (2, 7), (2, 8), (3, 1), (3, 15), (3, 16)],
        Indicator.MoreThanEightTimesN => [(2, 17), (2, 24), (3, 25), (3, 0x7FFFFFFF), (3, 0x80000000), (3, 0xFFFFFFFF)],
        Indicator.OneBlockMoreThanEight => [(1, 9), (1, 16), (1, 0x80000000), (1, 0xFFFFFFFF)],
        _ => throw new ArgumentOutOfRangeException(nameof(indicator)),
    };

    /// <summary>
    /// Every decrypt overload and destination size: the same exception type and message as stock, a rejection (stock's
    /// outcome is a <see cref="CryptographicException"/> wherever the destination is long enough to be tried), and the
    /// destination afterwards byte for byte as stock leaves it, holding nothing but zeros and untouched canary bytes.
    /// </summary>
    private static void AssertRejectedLikeStock(Aes stock, CachedAes cached, byte[] ciphertext, string what)
    {
        int padded = ciphertext.Length - 8;

        Same("DecryptKeyWrapPadded(byte[])", a => Run(() => a.DecryptKeyWrapPadded(ciphertext)));
        Same("DecryptKeyWrapPadded(ReadOnlySpan)", a => Run(() => a.DecryptKeyWrapPadded(ciphertext.AsSpan())));

        foreach (int size in new[] { padded - 7, padded - 1, padded, padded + 8 }.Where(s => s > 0).Distinct())
        {
            Same($"DecryptKeyWrapPadded(span, destination[{size}])", a => RunWithDestination(size, d => a.DecryptKeyWrapPadded(ciphertext, d)));
            Same($"TryDecryptKeyWrapPadded(span, destination[{size}])", a => RunWithDestination(size, d => a.TryDecryptKeyWrapPadded(ciphertext, d, out int written) ? written : -1 - written));
        }

        void Same(string call, Func<Aes, (string Outcome, Type? Error, byte[]? Destination)> run)
        {
            (string expected, Type? stockError, byte[]? expectedDestination) = run(stock);
            (string actual, Type? cachedError, byte[]? actualDestination) = run(cached);
            Assert.True(stockError is not null && typeof(CryptographicException).IsAssignableFrom(stockError), $"{what}, {call}: stock {expected}");
            if (Runtimes.ExpectedTypeFor(stockError) != stockError)
            {
                // Compared with the stock of the runtime this runs on: stock .NET 11 (Linux) rejects through OpenSSL's wrap
                // cipher with an internal CryptographicException subclass and OpenSSL's text; CachedAes throws
                // CryptographicException itself, with .NET 10's text (see Runtimes.ExpectedTypeFor).
                Assert.True(cachedError == typeof(CryptographicException), $"{what}, {call}:\n stock:     {expected}\n CachedAes: {actual}");
            }
            else
            {
                Assert.True(expected == actual, $"{what}, {call}:\n stock:     {expected}\n CachedAes: {actual}");
            }

            if (expectedDestination is not null)
            {
                Assert.True(expectedDestination.AsSpan().SequenceEqual(actualDestination), $"{what}, {call}: destination\n stock:     {Convert.ToHexString(expectedDestination)}\n CachedAes: {Convert.ToHexString(actualDestination!)}");
                Assert.All(actualDestination!, b => Assert.True(b is 0 or Canary, $"{what}, {call}: destination holds 0x{b:X2}"));
                if (actualDestination!.Length == padded)
                {
                    // The exact-length destination held the unwrapped semiblocks while they were checked: cleared.
                    Assert.All(actualDestination, b => Assert.Equal(0, b));
                }
            }
        }
    }

    private static (string Outcome, Type? Error, byte[]? Destination) Run(Func<byte[]> call)
    {
        try
        {
            return ($"returned {Convert.ToHexString(call())}", null, null);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            return ($"threw {e.GetType().FullName}: {e.Message}", e.GetType(), null);
        }
    }

    private static (string Outcome, Type? Error, byte[]? Destination) RunWithDestination(int size, Func<byte[], int> call)
    {
        byte[] destination = TestUtil.Filled(size, Canary);
        try
        {
            return ($"returned {call(destination)}", null, destination);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            return ($"threw {e.GetType().FullName}: {e.Message}", e.GetType(), destination);
        }
    }

    /// <summary>
    /// The RFC 5649 ciphertext of <paramref name="padded"/> (n semiblocks) with the length indicator
    /// <paramref name="indicator"/>, whatever the two say, made with stock AES-ECB only.
    /// </summary>
    private static byte[] Craft(Aes stock, uint indicator, byte[] padded)
    {
        byte[] aiv = new byte[8];
        BinaryPrimitives.WriteUInt32BigEndian(aiv, AivPrefix);
        BinaryPrimitives.WriteUInt32BigEndian(aiv.AsSpan(4), indicator);

        return padded.Length == 8
            ? stock.EncryptEcb([.. aiv, .. padded], PaddingMode.None) // RFC 5649 section 4.1, n = 1: C = ENC(K, AIV | P)
            : Rfc3394Wrap(stock, aiv, padded);
    }

    /// <summary>
    /// RFC 3394 section 2.2.1, the index-based wrapping process W with initial value <paramref name="iv"/>, one stock
    /// ECB call per step: for j = 0..5 and i = 1..n, B = AES(K, A | R[i]); A = MSB64(B) ^ t with t = n*j + i; R[i] = LSB64(B).
    /// </summary>
    private static byte[] Rfc3394Wrap(Aes stock, byte[] iv, byte[] plaintext)
    {
        int n = plaintext.Length / 8;
        ulong a = BinaryPrimitives.ReadUInt64BigEndian(iv);
        byte[][] r = Enumerable.Range(0, n).Select(i => plaintext.AsSpan(8 * i, 8).ToArray()).ToArray();
        byte[] block = new byte[16];

        for (int j = 0; j <= 5; j++)
        {
            for (int i = 1; i <= n; i++)
            {
                BinaryPrimitives.WriteUInt64BigEndian(block, a);
                r[i - 1].CopyTo(block, 8);
                byte[] b = stock.EncryptEcb(block, PaddingMode.None);
                a = BinaryPrimitives.ReadUInt64BigEndian(b) ^ (ulong)((n * j) + i);
                r[i - 1] = b[8..];
            }
        }

        byte[] c = new byte[8 * (n + 1)];
        BinaryPrimitives.WriteUInt64BigEndian(c, a);
        for (int i = 0; i < n; i++)
        {
            r[i].CopyTo(c, 8 * (i + 1));
        }

        return c;
    }

    /// <summary><paramref name="semiblocks"/> * 8 bytes: <paramref name="length"/> non-zero data bytes, then zeros.</summary>
    private static byte[] DataWithZeroPad(int semiblocks, int length)
    {
        byte[] data = new byte[8 * semiblocks];
        for (int i = 0; i < length; i++)
        {
            data[i] = (byte)(0x21 + (i * 7));
        }

        return data;
    }
}
