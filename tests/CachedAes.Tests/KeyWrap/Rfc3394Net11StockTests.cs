#if NET11_0_OR_GREATER
using System;
using System.Linq;
#endif
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// CachedAes's RFC 3394 key wrap against stock .NET 11's own (<c>Aes.EncryptKeyWrap</c> and friends, new in .NET 11),
/// called through <see cref="Aes"/> references: on CachedAes's net11.0 build those are <see cref="Aes"/>'s non-virtual
/// members, which reach CachedAes's <c>EncryptKeyWrapCore</c>/<c>DecryptKeyWrapCore</c> overrides. .NET 10 has no stock
/// RFC 3394, so there these tests are reported as skipped (Rfc3394OpenSslDifferentialTests compares with OpenSSL's wrap
/// cipher on both runtimes).
/// </summary>
public sealed class Rfc3394Net11StockTests
{
    private const string Net10 = ".NET 10's Aes has no RFC 3394 key wrap to compare with (Rfc3394OpenSslDifferentialTests covers it)";

    [BuildTheory(11, Net10)]
    [MemberData(nameof(BackendData.NamesAndKeySizes), MemberType = typeof(BackendData))]
    public void Every_overload_gives_stock_NET_11s_bytes_and_destination_handling(string backend, int keyBits)
    {
#if NET11_0_OR_GREATER
        var random = new Random(3394 + keyBits);
        byte[] key = TestUtil.Random(random, keyBits / 8);
        using Aes stock = TestUtil.Stock(key);
        using Aes tested = BackendData.Create(backend, key);
        int[] lengths = [.. Enumerable.Range(2, 40).Select(blocks => 8 * blocks), 1024, 4096];
        int cases = 0;

        foreach (int length in lengths)
        {
            byte[] plaintext = TestUtil.Random(random, length);
            string what = $"{backend}, AES-{keyBits}, {length} bytes";
            byte[] wrapped = stock.EncryptKeyWrap(plaintext);

            Assert.Equal(wrapped, tested.EncryptKeyWrap(plaintext));
            Assert.Equal(wrapped, tested.EncryptKeyWrap(plaintext.AsSpan()));
            Assert.Equal(plaintext, tested.DecryptKeyWrap(wrapped));
            Assert.Equal(plaintext, tested.DecryptKeyWrap(wrapped.AsSpan()));

            // Span overloads: destinations of exactly the right size, and (where allowed) one byte either side, each
            // filled with a canary first: the result and every byte of the destination afterwards must be stock's.
            foreach (int size in new[] { wrapped.Length - 1, wrapped.Length, wrapped.Length + 1 })
            {
                Same($"{what}: EncryptKeyWrap(span, dest[{size}])", a => WithDestination(size, d =>
                {
                    a.EncryptKeyWrap(plaintext, d);
                    return 0;
                }));
            }

            foreach (int size in new[] { length - 1, length, length + 1, length + 8 })
            {
                Same($"{what}: DecryptKeyWrap(span, dest[{size}])", a => WithDestination(size, d => a.DecryptKeyWrap(wrapped, d)));
                Same($"{what}: TryDecryptKeyWrap(span, dest[{size}])", a => WithDestination(size, d => a.TryDecryptKeyWrap(wrapped, d, out int w) ? w : -1 - w));
            }
        }

        Assert.Equal(lengths.Length * 11, cases);

        void Same(string operation, Func<Aes, string> run)
        {
            cases++;
            string expected = run(stock);
            string actual = run(tested);
            Assert.True(expected == actual, $"{operation}:\n stock: {expected}\n CachedAes: {actual}");
        }
#else
        Assert.Fail($"Reported as skipped on this build ({backend}, {keyBits}).");
#endif
    }

    [BuildTheory(11, Net10)]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Every_tampered_wrap_is_rejected_like_stock_NET_11_with_the_destination_cleared(string backend)
    {
#if NET11_0_OR_GREATER
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(i * 7 + 1)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using Aes tested = BackendData.Create(backend, key);
        using Aes otherKey = TestUtil.Stock(Enumerable.Range(0, 32).Select(i => (byte)(i * 7 + 2)).ToArray());
        int rejections = 0;

        foreach (int length in new[] { 16, 24, 40 })
        {
            byte[] plaintext = Enumerable.Range(0, length).Select(i => (byte)(i + 0x30)).ToArray();
            byte[] wrapped = stock.EncryptKeyWrap(plaintext);

            for (int i = 0; i < wrapped.Length; i++)
            {
                byte[] tampered = (byte[])wrapped.Clone();
                tampered[i] ^= (byte)(1 << (i % 8));
                Rejected($"{backend}, {length} bytes, byte {i} changed", tampered);
            }

            Rejected($"{backend}, {length} bytes wrapped under another key", otherKey.EncryptKeyWrap(plaintext));
        }

        Assert.Equal((24 + 32 + 48) + 3, rejections);

        void Rejected(string what, byte[] ciphertext)
        {
            rejections++;

            foreach (int spare in new[] { 0, 5 })
            {
                // Each unwrap overload into a canary-filled destination, by stock and by CachedAes.
                byte[] stockDestination = TestUtil.Filled(ciphertext.Length - 8 + spare);
                byte[] testedDestination = TestUtil.Filled(ciphertext.Length - 8 + spare);
                Exception? stockError = Record.Exception(() => stock.DecryptKeyWrap(ciphertext, stockDestination));
                Exception? testedError = Record.Exception(() => tested.DecryptKeyWrap(ciphertext, testedDestination));
                Check($"{what}, DecryptKeyWrap(span, dest +{spare})", stockError, testedError, stockDestination, testedDestination, ciphertext.Length - 8);

                stockDestination = TestUtil.Filled(ciphertext.Length - 8 + spare);
                testedDestination = TestUtil.Filled(ciphertext.Length - 8 + spare);
                stockError = Record.Exception(() => stock.TryDecryptKeyWrap(ciphertext, stockDestination, out _));
                testedError = Record.Exception(() => tested.TryDecryptKeyWrap(ciphertext, testedDestination, out _));
                Check($"{what}, TryDecryptKeyWrap(dest +{spare})", stockError, testedError, stockDestination, testedDestination, ciphertext.Length - 8);
            }

            Check($"{what}, DecryptKeyWrap(byte[])", Record.Exception(() => stock.DecryptKeyWrap(ciphertext)), Record.Exception(() => tested.DecryptKeyWrap(ciphertext)), [], [], 0);
        }

        static void Check(string what, Exception? stockError, Exception? testedError, byte[] stockDestination, byte[] testedDestination, int keyLength)
        {
            // Stock .NET 11 on Linux throws an internal CryptographicException subclass (OpenSSL's wrap cipher, with
            // OpenSSL's error text); CachedAes throws CryptographicException itself, with .NET 10's text for a failed
            // unwrap. Both are caught by catch (CryptographicException).
            Assert.True(stockError is CryptographicException, $"{what}: stock did not reject: {stockError}");
            Assert.Equal(Runtimes.ExpectedTypeFor(stockError), testedError?.GetType());
            Assert.Equal("The ciphertext did not successfully decrypt with the instance key.", testedError!.Message);

            // No plaintext left behind: the key area is zero, and every byte of the destination is what stock leaves.
            Assert.True(testedDestination.AsSpan(0, keyLength).IndexOfAnyExcept((byte)0) < 0, $"{what}: key area not cleared: {TestUtil.Hex(testedDestination)}");
            Assert.True(stockDestination.AsSpan().SequenceEqual(testedDestination), $"{what}: destination after the failure\n stock: {TestUtil.Hex(stockDestination)}\n CachedAes: {TestUtil.Hex(testedDestination)}");
        }
#else
        Assert.Fail($"Reported as skipped on this build ({backend}).");
#endif
    }

#if NET11_0_OR_GREATER
    // Runs an operation with a canary-filled destination of the given size: its result or exception type, and the
    // destination afterwards.
    private static string WithDestination(int size, Func<byte[], int> operation)
    {
        byte[] destination = TestUtil.Filled(size);
        string result;

        try
        {
            result = "returned " + operation(destination);
        }
        catch (Exception e)
        {
            // Exact types: for valid wraps with badly sized destinations stock throws public ArgumentExceptions only.
            result = $"threw {e.GetType().FullName} ({(e as ArgumentException)?.ParamName})";
        }

        return $"{result}; destination {TestUtil.Hex(destination)}";
    }
#endif
}
