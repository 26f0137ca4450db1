using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Microsoft.IdentityModel.Logging;
using Microsoft.IdentityModel.Tokens;
using Xunit.Abstractions;

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>
/// <see cref="CachedAesCbcHmacProvider"/> against IdentityModel's own <see cref="AuthenticatedEncryptionProvider"/>, call
/// by call: results, exceptions (type, parameter, inner exception, message) and what each wrote to IdentityModel's log,
/// with <see cref="IdentityModelEventSource.ShowPII"/> off and on. Run on the pinned IdentityModel and on the 8.0.1 floor
/// (<c>-p:IdentityModelTestVersion=8.0.1</c>).
/// </summary>
public sealed class RejectionParityTests(ITestOutputHelper output)
{
    // Plaintext lengths the differential takes in turn, besides a random one for each AAD length.
    private static readonly int[] s_edgeLengths = [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 255, 1000, 4095, 4096];

    public static TheoryData<string, int> AllEncs() => JweTests.AllEncs();

    private static byte[] Bytes(Random rng, int length)
    {
        byte[] bytes = new byte[length];
        rng.NextBytes(bytes);
        return bytes;
    }

    private static byte[] FlipBit(Random rng, byte[] data)
    {
        byte[] copy = (byte[])data.Clone();
        copy[rng.Next(copy.Length)] ^= (byte)(1 << rng.Next(8));
        return copy;
    }

    /// <summary>
    /// The differential: for AAD of 0 to 64 bytes, plaintexts of 0 to 4,096 bytes, keys of the algorithm's length, 16 bytes
    /// longer and 8 bytes shorter, and ShowPII off and on, the same encryptions and every kind of damaged input (tags,
    /// ciphertexts, IVs and AAD; null and empty arguments; authentic ciphertexts that do not decrypt; an authentic input
    /// with an IV of the wrong length), then Dispose and calls after it, on one stock and one CachedAes provider over the
    /// same key. Every call must end alike: the same bytes, or the same exception with the same message and the same log
    /// entries. With ShowPII on, an IDX10654 message holds the stack trace of the AES exception inside it, which names the
    /// code that threw (stock's or CachedAes's): there the stack-trace lines alone are left out of the comparison, and
    /// counted.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Every_call_ends_as_stocks_does_with_PII_off_and_on(string enc, int cekLength)
    {
        var rng = new Random(0xD1FF + cekLength);
        int half = StockComparison.Half(enc);
        var mismatches = new List<string>();
        var kinds = new SortedDictionary<string, int>(StringComparer.Ordinal);
        int compared = 0;
        int framesLeftOut = 0;

        void Compare(string name, Func<object?> stock, Func<object?> cached)
        {
            Outcome s = StockComparison.Run(stock);
            Outcome c = StockComparison.Run(cached);
            compared++;
            string kind = s.Exception is null ? "returned" : s.Message![..Math.Min(s.Message!.Length, 8)];
            kinds[kind] = kinds.GetValueOrDefault(kind) + 1;
            if (s == c)
            {
                return;
            }

            if (IdentityModelEventSource.ShowPII && s.Message?.StartsWith("IDX10654:", StringComparison.Ordinal) == true
                && s with { Message = StockComparison.WithoutStackFrames(s.Message), Log = StockComparison.WithoutStackFrames(s.Log) }
                    == c with { Message = StockComparison.WithoutStackFrames(c.Message ?? ""), Log = StockComparison.WithoutStackFrames(c.Log) })
            {
                framesLeftOut++;
                return;
            }

            mismatches.Add($"{name} (ShowPII {IdentityModelEventSource.ShowPII}):{Environment.NewLine}  stock     {Shorter(s)}{Environment.NewLine}  CachedAes {Shorter(c)}");
        }

        bool piiBefore = IdentityModelEventSource.ShowPII;
        try
        {
            foreach (bool pii in new[] { false, true })
            {
                IdentityModelEventSource.ShowPII = pii;
                foreach ((string keyName, int keyLength) in new[] { ("exact", cekLength), ("long", cekLength + 16), ("short", cekLength - 8) })
                {
                    byte[] cek = Bytes(rng, keyLength);
                    var key = new SymmetricSecurityKey(cek);
                    var stock = new AuthenticatedEncryptionProvider(key, enc);
                    var cached = new CachedAesCbcHmacProvider(key, enc);

                    // What the damaged inputs are made from; for the short key (every call fails there) a key long enough.
                    byte[] macKeySource = keyLength >= cekLength ? cek : Bytes(rng, cekLength);
                    using var maker = new AuthenticatedEncryptionProvider(new SymmetricSecurityKey(macKeySource), enc);

                    for (int aadLength = 0; aadLength <= 64; aadLength++)
                    {
                        foreach (int plaintextLength in new[] { s_edgeLengths[aadLength % s_edgeLengths.Length], rng.Next(0, 4097) })
                        {
                            string where = $"{enc}, {keyName} key, AAD {aadLength} B, plaintext {plaintextLength} B";
                            byte[] aad = Bytes(rng, aadLength);
                            byte[] plaintext = Bytes(rng, plaintextLength);
                            byte[] iv = Bytes(rng, 16);
                            Compare($"{where}: encrypt", () => stock.Encrypt(plaintext, aad, iv), () => cached.Encrypt(plaintext, aad, iv));
                            byte[] badIv = Bytes(rng, rng.Next(2) == 0 ? 15 : 17);
                            Compare($"{where}: encrypt, IV of {badIv.Length} B", () => stock.Encrypt(plaintext, aad, badIv), () => cached.Encrypt(plaintext, aad, badIv));

                            // Decryption inputs need a non-empty AAD and plaintext; the empty ones are passed as damage below.
                            byte[] a = aadLength == 0 ? Bytes(rng, 1) : aad;
                            AuthenticatedEncryptionResult r = maker.Encrypt(plaintextLength == 0 ? Bytes(rng, 1) : plaintext, a, iv);
                            foreach ((string damage, byte[] ct, byte[] ad, byte[] i, byte[] tag) in Damaged(rng, macKeySource, half, r, a, aadLength == 0))
                            {
                                Compare($"{where}: decrypt, {damage}", () => stock.Decrypt(ct, ad, i, tag), () => cached.Decrypt(ct, ad, i, tag));
                            }
                        }
                    }

                    byte[] p = Bytes(rng, 20);
                    byte[] aadAfter = Bytes(rng, 20);
                    AuthenticatedEncryptionResult last = maker.Encrypt(p, aadAfter);
                    Compare($"{enc}, {keyName} key: Dispose", () => { stock.Dispose(); return null; }, () => { cached.Dispose(); return null; });
                    Compare($"{enc}, {keyName} key: Dispose again", () => { stock.Dispose(); return null; }, () => { cached.Dispose(); return null; });
                    Compare($"{enc}, {keyName} key: encrypt after Dispose", () => stock.Encrypt(p, aadAfter), () => cached.Encrypt(p, aadAfter));
                    Compare($"{enc}, {keyName} key: decrypt after Dispose", () => stock.Decrypt(last.Ciphertext, aadAfter, last.IV, last.AuthenticationTag),
                        () => cached.Decrypt(last.Ciphertext, aadAfter, last.IV, last.AuthenticationTag));
                    Compare($"{enc}, {keyName} key: empty tag after Dispose", () => stock.Decrypt(last.Ciphertext, aadAfter, last.IV, []),
                        () => cached.Decrypt(last.Ciphertext, aadAfter, last.IV, []));
                }
            }
        }
        finally
        {
            IdentityModelEventSource.ShowPII = piiBefore;
        }

        output.WriteLine($"IdentityModel {typeof(AuthenticatedEncryptionProvider).Assembly.GetName().Version}, {enc}: {compared} calls compared, " +
            $"{mismatches.Count} mismatches, {framesLeftOut} IDX10654 messages with ShowPII on compared without their stack-trace lines");
        output.WriteLine("Stock's outcomes (message start): " + string.Join(", ", kinds.Select(k => $"{k.Key} {k.Value}")));
        Assert.True(mismatches.Count == 0, $"{mismatches.Count} of {compared} calls differ; the first ones:{Environment.NewLine}{string.Join(Environment.NewLine, mismatches.Take(8))}");
        Assert.True(compared > 10_000, $"only {compared} calls compared");

        // Every kind of ending the differential is meant to reach was reached (counted on stock's side).
        foreach (string expected in new[] { "returned", "IDX10000", "IDX10625", "IDX10650", "IDX10653", "IDX10654", "Specifie", "Cannot a" })
        {
            Assert.True(kinds.ContainsKey(expected), $"no call ended with {expected}: {string.Join(", ", kinds.Keys)}");
        }
    }

    private static string Shorter(Outcome outcome)
    {
        string text = outcome.ToString();
        return text.Length > 1200 ? text[..1200] + "..." : text;
    }

    /// <summary>Every kind of damage to a decryption's inputs, made from one stock encryption <paramref name="r"/>.</summary>
    private static IEnumerable<(string Name, byte[] Ciphertext, byte[] Aad, byte[] Iv, byte[] Tag)> Damaged(
        Random rng, byte[] cek, int half, AuthenticatedEncryptionResult r, byte[] aad, bool passEmptyAad)
    {
        byte[] ct = r.Ciphertext;
        byte[] iv = r.IV;
        byte[] tag = r.AuthenticationTag;
        yield return ("nothing damaged", ct, passEmptyAad ? [] : aad, iv, tag);
        yield return ("tag: one bit flipped", ct, aad, iv, FlipBit(rng, tag));
        yield return ("tag: zeros", ct, aad, iv, new byte[tag.Length]);
        yield return ("tag: first byte removed", ct, aad, iv, tag[1..]);
        yield return ("tag: one byte appended", ct, aad, iv, [.. tag, 0]);
        yield return ("tag: the whole HMAC's length", ct, aad, iv, [.. tag, .. tag]);
        yield return ("tag: empty", ct, aad, iv, []);
        yield return ("tag: null", ct, aad, iv, null!);
        yield return ("ciphertext: one bit flipped", FlipBit(rng, ct), aad, iv, tag);
        yield return ("ciphertext: last byte removed", ct[..^1], aad, iv, tag);
        yield return ("ciphertext: a block appended", [.. ct, .. Bytes(rng, 16)], aad, iv, tag);
        yield return ("ciphertext: empty", [], aad, iv, tag);
        yield return ("ciphertext: null", null!, aad, iv, tag);
        if (ct.Length > 16)
        {
            yield return ("ciphertext: last block removed", ct[..^16], aad, iv, tag);
        }

        yield return ("IV: one bit flipped", ct, aad, FlipBit(rng, iv), tag);
        yield return ("IV: 15 bytes", ct, aad, iv[..15], tag);
        yield return ("IV: 17 bytes", ct, aad, [.. iv, 0], tag);
        yield return ("IV: empty", ct, aad, [], tag);
        yield return ("IV: null", ct, aad, null!, tag);
        yield return ("AAD: one bit flipped", ct, FlipBit(rng, aad), iv, tag);
        yield return ("AAD: one byte appended", ct, [.. aad, 0], iv, tag);
        yield return ("AAD: empty", ct, [], iv, tag);
        yield return ("AAD: null", ct, null!, iv, tag);

        // Authentic inputs (their tags made here from the key's MAC half) that fail after the tag check.
        byte[] partial = Bytes(rng, (16 * rng.Next(0, 4)) + rng.Next(1, 16));
        yield return ("authentic, not whole blocks", partial, aad, iv, StockComparison.RfcTag(cek, half, aad, iv, partial));
        byte[] blocks = Bytes(rng, 16 * rng.Next(1, 5));
        yield return ("authentic, random blocks (padding)", blocks, aad, iv, StockComparison.RfcTag(cek, half, aad, iv, blocks));
        byte[] changed = FlipBit(rng, ct);
        yield return ("authentic, a bit flipped and tagged again", changed, aad, iv, StockComparison.RfcTag(cek, half, aad, iv, changed));
        byte[] shortIv = Bytes(rng, rng.Next(1, 16));
        yield return ($"authentic, IV of {shortIv.Length} B", ct, aad, shortIv, StockComparison.RfcTag(cek, half, aad, shortIv, ct));
    }

    /// <summary>
    /// A rejected input is decided by this provider alone: no stock provider is made to fail in its place (which would ask
    /// the key's factory for an HMAC signature provider and decrypt a second time), so a forged tag costs what a valid one
    /// does up to the tag check. Counted through the key's factory and the AES instances the provider makes.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Rejections_make_no_stock_provider_and_decrypt_once_at_most(string enc, int cekLength)
    {
        var rng = new Random(0x5EC0 + cekLength);
        int half = StockComparison.Half(enc);
        byte[] cek = Bytes(rng, cekLength);
        var factory = new CountingFactory();
        var key = new SymmetricSecurityKey(cek) { CryptoProviderFactory = factory };
        int aesInstances = 0;
        var cached = new CachedAesCbcHmacProvider(key, enc, () =>
        {
            Interlocked.Increment(ref aesInstances);
            return CachedAes.Create();
        });
        using var stock = new AuthenticatedEncryptionProvider(new SymmetricSecurityKey(cek), enc);
        byte[] aad = Bytes(rng, 40);
        AuthenticatedEncryptionResult r = stock.Encrypt(Bytes(rng, 50), aad);
        byte[] undecryptable = Bytes(rng, 33);

        foreach ((string name, byte[] ct, byte[] iv, byte[] tag, int aesExpected) in new[]
        {
            ("forged tag (IDX10650)", r.Ciphertext, r.IV, FlipBit(rng, r.AuthenticationTag), 0),
            ("tag of the wrong length (IDX10625)", r.Ciphertext, r.IV, r.AuthenticationTag[1..], 0),
            ("authentic, does not decrypt (IDX10654)", undecryptable, r.IV, StockComparison.RfcTag(cek, half, aad, r.IV, undecryptable), 1),
        })
        {
            int before = aesInstances;
            Assert.Throws<SecurityTokenDecryptionFailedException>(() => cached.Decrypt(ct, aad, iv, tag));
            Assert.True(factory.SignatureProviders == 0, $"{name}: the key's factory was asked for {factory.SignatureProviders} signature provider(s)");
            Assert.True(aesInstances - before == aesExpected, $"{name}: {aesInstances - before} AES instance(s) made, {aesExpected} expected");
        }

        Assert.Equal(r.AuthenticationTag.Length, half);
        cached.Dispose();
        Assert.True(factory.SignatureProviders == 0, $"Dispose asked the key's factory for {factory.SignatureProviders} signature provider(s)");
    }

    /// <summary>A factory that counts the signature providers it is asked for (IdentityModel's provider asks its key's).</summary>
    private sealed class CountingFactory : CryptoProviderFactory
    {
        private int _signatureProviders;

        public int SignatureProviders => Volatile.Read(ref _signatureProviders);

        public override SignatureProvider CreateForSigning(SecurityKey key, string algorithm)
        {
            Interlocked.Increment(ref _signatureProviders);
            return base.CreateForSigning(key, algorithm);
        }

        public override SignatureProvider CreateForSigning(SecurityKey key, string algorithm, bool cacheProvider)
        {
            Interlocked.Increment(ref _signatureProviders);
            return base.CreateForSigning(key, algorithm, cacheProvider);
        }

        public override SignatureProvider CreateForVerifying(SecurityKey key, string algorithm)
        {
            Interlocked.Increment(ref _signatureProviders);
            return base.CreateForVerifying(key, algorithm);
        }

        public override SignatureProvider CreateForVerifying(SecurityKey key, string algorithm, bool cacheProvider)
        {
            Interlocked.Increment(ref _signatureProviders);
            return base.CreateForVerifying(key, algorithm, cacheProvider);
        }
    }
}
