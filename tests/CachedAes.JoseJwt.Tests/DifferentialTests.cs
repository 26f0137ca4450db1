using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Jose;

namespace CachedCryptography.JoseJwt.Tests;

/// <summary>
/// The package against stock jose-jwt 5.3.0 on the same input, with fixed seeds: the same bytes for good input, and for
/// bad input (wrong keys, tampered tokens, wrong sizes, nulls) the same outcome, down to the exception's type and message.
/// At two levels: jose-jwt's interfaces (IKeyManagement, IJweAlgorithm), and whole tokens through JWT.Encode/Decode.
/// </summary>
public sealed class DifferentialTests
{
    private static readonly Dictionary<string, object> s_noHeader = [];

    /// <summary>Payload sizes from 0 B to 64 KiB: around the block size, and larger.</summary>
    private static readonly int[] s_payloadSizes = [0, 1, 15, 16, 17, 31, 32, 33, 100, 255, 256, 1000, 4095, 4096, 4097, 65535, 65536];

    public static TheoryData<int> CekSizes() => [32, 48, 64];

    public static TheoryData<int> KekSizes() => [16, 24, 32];

    public static IEnumerable<object[]> Pairs() => Stock.Pairs();

    [Theory]
    [MemberData(nameof(KekSizes))]
    public void Key_wrap_wraps_and_unwraps_as_jose_jwt_does(int kekBytes)
    {
        var random = new Random(3394 + kekBytes);
        var stock = new AesKeyWrapManagement(kekBytes * 8);
        var cached = new CachedAesKeyWrapManagement(kekBytes * 8);
        for (int i = 0; i < 200; i++)
        {
            byte[] kek = Stock.Bytes(random, kekBytes);
            byte[] cek = Stock.Bytes(random, 8 * random.Next(2, 9));
            object key = i % 2 == 0 ? kek : new Jwk(kek);

            byte[] wrapped = stock.WrapKey(cek, key, s_noHeader);
            Assert.Equal(wrapped, cached.WrapKey(cek, key, s_noHeader));
            Assert.Equal(cek, cached.Unwrap(wrapped, key, cek.Length * 8, s_noHeader));
        }
    }

    [Theory]
    [MemberData(nameof(KekSizes))]
    public void Key_wrap_fails_as_jose_jwt_does(int kekBytes)
    {
        var random = new Random(7516 + kekBytes);
        var stock = new AesKeyWrapManagement(kekBytes * 8);
        var cached = new CachedAesKeyWrapManagement(kekBytes * 8);
        byte[] kek = Stock.Bytes(random, kekBytes);
        byte[] cek = Stock.Bytes(random, 32);
        byte[] wrapped = stock.WrapKey(cek, kek, s_noHeader);

        var keys = new List<object?>
        {
            kek, new Jwk(kek), Stock.Bytes(random, kekBytes), new Jwk(Stock.Bytes(random, kekBytes)),
            Stock.Bytes(random, kekBytes - 8 < 16 ? 24 : kekBytes - 8), Stock.Bytes(random, kekBytes + 1), Array.Empty<byte>(),
            new Jwk { Kty = Jwk.KeyTypes.OCT }, new Jwk { Kty = "EC" }, "a password", 42, null,
        };
        var wraps = new List<byte[]?> { wrapped, null, Array.Empty<byte>(), Stock.Bytes(random, 8), Stock.Bytes(random, 16), wrapped[..23], wrapped[..^1], wrapped.Append((byte)0).ToArray() };
        for (int i = 0; i < wrapped.Length; i++)
        {
            byte[] tampered = (byte[])wrapped.Clone();
            tampered[i] ^= (byte)(1 << (i % 8));
            wraps.Add(tampered);
        }

        var contentKeys = new List<byte[]?> { cek, null, Array.Empty<byte>(), Stock.Bytes(random, 8), Stock.Bytes(random, 15), Stock.Bytes(random, 16), Stock.Bytes(random, 17), Stock.Bytes(random, 24), Stock.Bytes(random, 64) };

        var mismatches = new List<string>();
        foreach (object? key in keys)
        {
            foreach (byte[]? w in wraps)
            {
                Compare(mismatches, $"unwrap {Show(w)} with {Show(key)}",
                    () => stock.Unwrap(w!, key!, 256, s_noHeader), () => cached.Unwrap(w!, key!, 256, s_noHeader));
            }

            foreach (byte[]? c in contentKeys)
            {
                Compare(mismatches, $"wrap {Show(c)} with {Show(key)}",
                    () => stock.WrapKey(c!, key!, s_noHeader), () => cached.WrapKey(c!, key!, s_noHeader));
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches.Take(20)));
    }

    [Theory]
    [MemberData(nameof(CekSizes))]
    public void Content_encryption_gives_jose_jwts_bytes_for_every_payload_size(int cekBytes)
    {
        var random = new Random(7518 + cekBytes);
        AesCbcHmacEncryption stock = Stock.StockEncryption(cekBytes);
        var cached = new CachedAesCbcHmacEncryption(cekBytes * 8);
        Assert.Equal(stock.KeySize, cached.KeySize);
        foreach (int size in s_payloadSizes.Concat(Enumerable.Range(0, 40).Select(_ => random.Next(0, 65537))))
        {
            byte[] cek = Stock.Bytes(random, cekBytes);
            byte[] aad = Stock.Bytes(random, random.Next(0, 200));
            byte[] plaintext = Stock.Bytes(random, size);

            // Stock's token: the same IV gives the same ciphertext and tag here, and it decrypts here.
            byte[][] byStock = stock.Encrypt(aad, plaintext, cek);
            byte[][] again = cached.EncryptCore(aad, plaintext, cek, byStock[0]);
            Assert.Equal(byStock[1], again[1]);
            Assert.Equal(byStock[2], again[2]);
            Assert.Equal(plaintext, cached.Decrypt(aad, cek, byStock[0], byStock[1], byStock[2]));

            // This package's token decrypts with stock.
            byte[][] byCached = cached.Encrypt(aad, plaintext, cek);
            Assert.Equal(16, byCached[0].Length);
            Assert.Equal(plaintext, stock.Decrypt(aad, cek, byCached[0], byCached[1], byCached[2]));
        }
    }

    [Theory]
    [MemberData(nameof(CekSizes))]
    public void Content_encryption_fails_as_jose_jwt_does(int cekBytes)
    {
        var random = new Random(7520 + cekBytes);
        AesCbcHmacEncryption stock = Stock.StockEncryption(cekBytes);
        var cached = new CachedAesCbcHmacEncryption(cekBytes * 8);
        var mismatches = new List<string>();

        foreach (int size in new[] { 0, 1, 16, 17, 100, 4096 })
        {
            byte[] cek = Stock.Bytes(random, cekBytes);
            byte[] aad = Stock.Bytes(random, 40);
            byte[] plaintext = Stock.Bytes(random, size);
            byte[][] token = stock.Encrypt(aad, plaintext, cek);
            byte[] iv = token[0], ct = token[1], tag = token[2];

            var cases = new List<(string Name, byte[]? Aad, byte[]? Cek, byte[]? Iv, byte[]? Ct, byte[]? Tag)>
            {
                ("as made", aad, cek, iv, ct, tag),
                ("other key", aad, Stock.Bytes(random, cekBytes), iv, ct, tag),
                ("key one byte short", aad, cek[..^1], iv, ct, tag),
                ("key one byte long", aad, [.. cek, 1], iv, ct, tag),
                ("empty key", aad, [], iv, ct, tag),
                ("null key", aad, null, iv, ct, tag),
                ("null aad", null, cek, iv, ct, tag),
                ("empty aad", [], cek, iv, ct, tag),
                ("null iv", aad, cek, null, ct, tag),
                ("null ciphertext", aad, cek, iv, null, tag),
                ("null tag", aad, cek, iv, ct, null),
                ("empty tag", aad, cek, iv, ct, []),
                ("tag one byte short", aad, cek, iv, ct, tag[..^1]),
                ("tag one byte long", aad, cek, iv, ct, [.. tag, 0]),
                ("full HMAC as tag", aad, cek, iv, ct, [.. tag, .. tag]),
                ("iv of 8 bytes", aad, cek, iv[..8], ct, tag),
                ("ciphertext one byte short", aad, cek, iv, ct[..^1], tag),
                ("empty ciphertext", aad, cek, iv, [], tag),
            };
            for (int i = 0; i < tag.Length; i++)
            {
                cases.Add(($"tag byte {i}", aad, cek, iv, ct, Flip(tag, i)));
            }

            for (int i = 0; i < 16; i++)
            {
                cases.Add(($"iv byte {i}", aad, cek, Flip(iv, i), ct, tag));
                cases.Add(($"ciphertext byte {i}", aad, cek, iv, Flip(ct, random.Next(ct.Length)), tag));
                cases.Add(($"aad byte {i}", Flip(aad, random.Next(aad.Length)), cek, iv, ct, tag));
            }

            // Authentic tags over input that does not decrypt: only a key holder can make these.
            byte[] badPadding = Stock.Bytes(random, 32);
            byte[] ragged = Stock.Bytes(random, 17);
            byte[] shortIv = iv[..8];
            cases.Add(("authentic, bad padding", aad, cek, iv, badPadding, Stock.Tag(cek, aad, iv, badPadding)));
            cases.Add(("authentic, 17-byte ciphertext", aad, cek, iv, ragged, Stock.Tag(cek, aad, iv, ragged)));
            cases.Add(("authentic, empty ciphertext", aad, cek, iv, [], Stock.Tag(cek, aad, iv, [])));
            cases.Add(("authentic, 8-byte IV", aad, cek, shortIv, ct, Stock.Tag(cek, aad, shortIv, ct)));
            cases.Add(("authentic, null IV", aad, cek, null, ct, Stock.Tag(cek, aad, [], ct)));
            cases.Add(("authentic, null ciphertext", aad, cek, iv, null, Stock.Tag(cek, aad, iv, [])));

            foreach (var c in cases)
            {
                Compare(mismatches, $"decrypt {size} B, {c.Name}",
                    () => stock.Decrypt(c.Aad!, c.Cek!, c.Iv!, c.Ct!, c.Tag!), () => cached.Decrypt(c.Aad!, c.Cek!, c.Iv!, c.Ct!, c.Tag!));
            }

            // Encryption with bad input (its output is random, so only failures are compared).
            foreach ((string name, byte[]? a, byte[]? p, byte[]? k) in new[]
            {
                ("null key", aad, plaintext, null), ("short key", aad, plaintext, cek[..^1]), ("long key", aad, plaintext, [.. cek, 0]),
                ("null aad", null, plaintext, cek), ("null plaintext", aad, null, cek),
            })
            {
                Compare(mismatches, $"encrypt {size} B, {name}",
                    () => stock.Encrypt(a!, p!, k!), () => cached.Encrypt(a!, p!, k!));
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches.Take(20)));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public void Tampered_and_misdirected_tokens_fail_as_with_jose_jwt(JweAlgorithm alg, JweEncryption enc)
    {
        var random = new Random(HashCode.Combine((int)alg, (int)enc));
        JwtSettings stock = Stock.StockSettings();
        JwtSettings cached = Stock.CachedSettings();
        byte[] kek = Stock.Bytes(random, Stock.KekBytes(alg));
        var mismatches = new List<string>();

        foreach (int size in new[] { 0, 5, 16, 300 })
        {
            string payload = Convert.ToBase64String(Stock.Bytes(random, size));
            foreach (string token in new[] { JWT.Encode(payload, kek, alg, enc, settings: stock), JWT.Encode(payload, kek, alg, enc, settings: cached) })
            {
                string[] parts = token.Split('.');
                var variants = new List<(string Name, string Token, object Key)>
                {
                    ("as made", token, kek),
                    ("as made, JWK key", token, new Jwk(kek)),
                    ("other key", token, Stock.Bytes(random, kek.Length)),
                    ("key of another size", token, Stock.Bytes(random, kek.Length == 16 ? 24 : 16)),
                    ("no encrypted key", Join(parts, 1, ""), kek),
                    ("no tag", Join(parts, 4, ""), kek),
                    ("no iv", Join(parts, 2, ""), kek),
                    ("four parts", string.Join('.', parts[..4]), kek),
                };
                for (int part = 0; part < 5; part++)
                {
                    for (int n = 0; n < 4; n++)
                    {
                        int at = random.Next(parts[part].Length);
                        variants.Add(($"part {part} char {at}", Join(parts, part, ChangeChar(parts[part], at)), kek));
                    }

                    variants.Add(($"part {part} one char short", Join(parts, part, parts[part][..^1]), kek));
                }

                foreach (var v in variants)
                {
                    Compare(mismatches, $"{alg}+{enc} {size} B, {v.Name}",
                        () => JWT.Decode(v.Token, v.Key, alg, enc, stock), () => JWT.Decode(v.Token, v.Key, alg, enc, cached));
                }
            }
        }

        Assert.True(mismatches.Count == 0, string.Join(Environment.NewLine, mismatches.Take(20)));
    }

    private static void Compare(List<string> mismatches, string name, Func<object?> stock, Func<object?> cached)
    {
        string expected = Stock.Outcome(stock);
        string actual = Stock.Outcome(cached);
        if (expected != actual)
        {
            mismatches.Add($"{name}: stock {Trim(expected)}; CachedAes {Trim(actual)}");
        }
    }

    private static string Trim(string text) => text.Length > 200 ? text[..200] + "..." : text;

    private static string Show(object? value) => value switch
    {
        null => "null",
        byte[] bytes => $"{bytes.Length}-byte array",
        Jwk jwk => $"JWK kty={jwk.Kty} k={(jwk.K is null ? "none" : jwk.OctKey().Length + " bytes")}",
        _ => value.GetType().Name,
    };

    private static byte[] Flip(byte[] data, int at)
    {
        byte[] copy = (byte[])data.Clone();
        copy[at] ^= 0x01;
        return copy;
    }

    private static string Join(string[] parts, int at, string replacement)
    {
        string[] copy = (string[])parts.Clone();
        copy[at] = replacement;
        return string.Join('.', copy);
    }

    private static string ChangeChar(string text, int at)
    {
        var builder = new StringBuilder(text);
        builder[at] = text[at] == 'A' ? 'B' : 'A';
        return builder.ToString();
    }
}
