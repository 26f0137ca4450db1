using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using System.Xml.Linq;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// ASP.NET Core Data Protection with <c>UseCachedAes()</c>, against stock Data Protection over the same key ring and key
/// (see <see cref="KeyRings"/>). Protect output is
/// randomised (a fresh key modifier and IV per payload), so the check is that each side unprotects what
/// the other protected, and rejects what it rejects in the same way.
/// </summary>
public sealed class DataProtectionTests : IClassFixture<KeyRings>
{
    private readonly KeyRings _rings;

    public DataProtectionTests(KeyRings rings) => _rings = rings;

    /// <summary>0..64 one by one, then steps of 61 to 5000, plus block and page edges.</summary>
    public static IEnumerable<int> Lengths()
    {
        var lengths = new SortedSet<int>(Enumerable.Range(0, 65));
        for (int n = 65; n <= 5000; n += 61)
        {
            lengths.Add(n);
        }

        foreach (int edge in new[] { 95, 96, 97, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 4999, 5000 })
        {
            lengths.Add(edge);
        }

        return lengths;
    }

    [Fact]
    public void The_key_is_stocks_and_UseCachedAes_runs_CachedAes_for_it()
    {
        // The key ring holds what stock's default configuration wrote, and nothing names CachedAes.
        XElement encryption = KeyRings.EncryptionElement(_rings.KeyXml);
        Assert.Equal("AES_256_CBC", (string?)encryption.Attribute("algorithm"));
        Assert.DoesNotContain("CachedAes", _rings.KeyXml.ToString(), StringComparison.Ordinal);

        // Over that key, UseCachedAes protects and unprotects on CachedAes (handles made on this thread) and stock does not.
        using var calls = new CachedAesCalls();
        byte[] payload = [];
        Assert.True(calls.During(() => payload = _rings.Cached.Protect([1, 2, 3])) > 0, "UseCachedAes protected without CachedAes");
        Assert.True(calls.During(() => _rings.Cached.Unprotect(payload)) > 0, "UseCachedAes unprotected without CachedAes");
        Assert.Equal(0, calls.During(() => _rings.Stock.Unprotect(_rings.Stock.Protect(payload))));
    }

    [Fact]
    public void Payloads_cross_unprotect_both_ways_for_lengths_0_to_5000()
    {
        var rng = new Random(5649);
        int checkedLengths = 0;
        foreach (int length in Lengths())
        {
            byte[] plaintext = new byte[length];
            rng.NextBytes(plaintext);

            byte[] byCached = _rings.Cached.Protect(plaintext);
            byte[] byStock = _rings.Stock.Protect(plaintext);
            Assert.Equal(byStock.Length, byCached.Length);

            AssertBytes(plaintext, _rings.Stock.Unprotect(byCached), $"CachedAes -> stock, {length} bytes");
            AssertBytes(plaintext, _rings.Cached.Unprotect(byStock), $"stock -> CachedAes, {length} bytes");
            AssertBytes(plaintext, _rings.Cached.Unprotect(byCached), $"CachedAes -> CachedAes, {length} bytes");
            checkedLengths++;
        }

        Assert.Equal(Lengths().Count(), checkedLengths);
        Assert.True(checkedLengths > 140, $"only {checkedLengths} lengths");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(16)]
    [InlineData(100)]
    [InlineData(5000)]
    public void Tampered_payloads_are_rejected_with_the_same_exception_under_both(int length)
    {
        byte[] plaintext = new byte[length];
        new Random(length).NextBytes(plaintext);
        var mismatches = new List<string>();
        int rejected = 0;

        foreach ((string origin, byte[] payload) in new[] { ("CachedAes", _rings.Cached.Protect(plaintext)), ("stock", _rings.Stock.Protect(plaintext)) })
        {
            foreach ((string what, byte[] tampered) in Tamperings(payload))
            {
                Exception? cached = Record.Exception(() => _rings.Cached.Unprotect(tampered));
                Exception? stock = Record.Exception(() => _rings.Stock.Unprotect(tampered));

                if (cached is not CryptographicException || stock is not CryptographicException)
                {
                    mismatches.Add($"{origin} payload, {what}: CachedAes {Describe(cached)}, stock {Describe(stock)}");
                }
                else if (cached.GetType() != stock.GetType() || cached.Message != stock.Message)
                {
                    mismatches.Add($"{origin} payload, {what}: CachedAes {Describe(cached)} but stock {Describe(stock)}");
                }
                else
                {
                    rejected++;
                }
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches.Take(20)));
        Assert.True(rejected > 2 * 60, $"only {rejected} tampered payloads checked");
    }

    [Fact]
    public void Several_threads_protect_and_unprotect_at_once()
    {
        int threads = Math.Max(4, Environment.ProcessorCount);
        const int Iterations = 300;
        var failures = new ConcurrentQueue<string>();
        int completed = 0;
        using var start = new Barrier(threads);

        Thread[] workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            var rng = new Random(1000 + t);
            start.SignalAndWait();
            for (int i = 0; i < Iterations; i++)
            {
                try
                {
                    byte[] plaintext = new byte[rng.Next(0, 600)];
                    rng.NextBytes(plaintext);
                    byte[] byCached = _rings.Cached.Protect(plaintext);
                    byte[] byStock = _rings.Stock.Protect(plaintext);
                    if (!_rings.Stock.Unprotect(byCached).AsSpan().SequenceEqual(plaintext) ||
                        !_rings.Cached.Unprotect(byStock).AsSpan().SequenceEqual(plaintext) ||
                        !_rings.Cached.Unprotect(byCached).AsSpan().SequenceEqual(plaintext))
                    {
                        failures.Enqueue($"thread {t} iteration {i}: wrong plaintext ({plaintext.Length} bytes)");
                    }
                    else
                    {
                        Interlocked.Increment(ref completed);
                    }
                }
                catch (Exception e)
                {
                    failures.Enqueue($"thread {t} iteration {i}: {e.GetType().Name}: {e.Message}");
                }
            }
        })).ToArray();

        foreach (Thread w in workers)
        {
            w.Start();
        }

        foreach (Thread w in workers)
        {
            Assert.True(w.Join(TimeSpan.FromMinutes(2)), "a worker did not finish within 2 minutes");
        }

        Assert.True(failures.IsEmpty, string.Join(Environment.NewLine, failures.Take(20)));
        Assert.Equal(threads * Iterations, completed);
    }

    /// <summary>Every single-byte flip, plus truncations and an extension.</summary>
    private static IEnumerable<(string What, byte[] Payload)> Tamperings(byte[] payload)
    {
        // Every byte of the header and key material, and a spread over the rest for long payloads.
        int step = payload.Length > 400 ? 37 : 1;
        for (int i = 0; i < payload.Length; i += i < 100 ? 1 : step)
        {
            byte[] t = (byte[])payload.Clone();
            t[i] ^= 0x01;
            yield return ($"bit 0 of byte {i} of {payload.Length} flipped", t);
        }

        byte[] last = (byte[])payload.Clone();
        last[^1] ^= 0x80;
        yield return ("bit 7 of the last byte flipped", last);
        yield return ("last byte dropped", payload[..^1]);
        yield return ("last 32 bytes (the MAC) dropped", payload[..^32]);
        yield return ("only the 20-byte header", payload[..20]);
        yield return ("a zero byte appended", [.. payload, 0]);
        yield return ("empty", []);
    }

    private static void AssertBytes(byte[] expected, byte[] actual, string what)
    {
        if (!expected.AsSpan().SequenceEqual(actual))
        {
            Assert.Fail($"{what}: expected {expected.Length} bytes {Convert.ToHexString(expected.AsSpan(0, Math.Min(32, expected.Length)))}..., " +
                $"got {actual.Length} bytes {Convert.ToHexString(actual.AsSpan(0, Math.Min(32, actual.Length)))}...");
        }
    }

    private static string Describe(Exception? e) => e is null ? "accepted it" : $"threw {e.GetType().FullName}: {e.Message}";
}
