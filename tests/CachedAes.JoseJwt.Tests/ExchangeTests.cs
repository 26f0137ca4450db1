using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using Jose;

namespace CachedCryptography.JoseJwt.Tests;

/// <summary>
/// Two "apps" that share keys, one with stock jose-jwt settings and one with UseCachedAes(), exchange tokens both ways:
/// 1,000 each way for every key-wrap and AES-CBC-HMAC pair, and fewer for ECDH-ES+A*KW and PBES2+A*KW (whose key
/// agreement or PBKDF2 is jose-jwt's, and slow). Every token must read on the other side with the payload sent, and a
/// token's header must not depend on which app made it (no lock-in).
/// </summary>
public sealed class ExchangeTests
{
    private const int TokensEachWay = 1000;

    public static IEnumerable<object[]> Pairs() => Stock.Pairs();

    [Theory]
    [MemberData(nameof(Pairs))]
    public void A_stock_app_and_a_CachedAes_app_exchange_1000_tokens_each_way(JweAlgorithm alg, JweEncryption enc)
    {
        var random = new Random(HashCode.Combine(1000, (int)alg, (int)enc));
        JwtSettings stockApp = Stock.StockSettings();
        JwtSettings cachedApp = Stock.CachedSettings();
        byte[] kek = Stock.Bytes(random, Stock.KekBytes(alg));
        var failures = new List<string>();

        for (int i = 0; i < TokensEachWay; i++)
        {
            // Mostly small payloads, as tokens are; every 100th up to 64 KiB. A JWK key every other token.
            byte[] payload = Stock.Bytes(random, i % 100 == 99 ? random.Next(0, 65537) : random.Next(0, 600));
            object key = i % 2 == 0 ? kek : new Jwk(kek);
            Exchange(failures, $"{i} stock->CachedAes", payload, key, alg, enc, from: stockApp, to: cachedApp);
            Exchange(failures, $"{i} CachedAes->stock", payload, key, alg, enc, from: cachedApp, to: stockApp);
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {2 * TokensEachWay} failed: " + string.Join(Environment.NewLine, failures.Take(10)));
    }

    public static IEnumerable<object[]> EcdhPairs() =>
        from alg in new[] { JweAlgorithm.ECDH_ES_A128KW, JweAlgorithm.ECDH_ES_A192KW, JweAlgorithm.ECDH_ES_A256KW }
        from ce in Stock.ContentEncryptions
        select new object[] { alg, ce.Enc };

    [Theory]
    [MemberData(nameof(EcdhPairs))]
    public void ECDH_ES_with_key_wrap_crosses_both_ways(JweAlgorithm alg, JweEncryption enc)
    {
        var random = new Random(HashCode.Combine(7518, (int)alg, (int)enc));
        using var receiver = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var publicKey = new Jwk(receiver, isPrivate: false);
        var privateKey = new Jwk(receiver, isPrivate: true);
        var failures = new List<string>();
        for (int i = 0; i < 50; i++)
        {
            byte[] payload = Stock.Bytes(random, random.Next(0, 600));
            Exchange(failures, $"{i} stock->CachedAes", payload, publicKey, privateKey, alg, enc, Stock.StockSettings(), Stock.CachedSettings());
            Exchange(failures, $"{i} CachedAes->stock", payload, publicKey, privateKey, alg, enc, Stock.CachedSettings(), Stock.StockSettings());
        }

        Assert.True(failures.Count == 0, string.Join(Environment.NewLine, failures.Take(10)));
    }

    public static IEnumerable<object[]> Pbes2Pairs() =>
        from alg in new[] { JweAlgorithm.PBES2_HS256_A128KW, JweAlgorithm.PBES2_HS384_A192KW, JweAlgorithm.PBES2_HS512_A256KW }
        from ce in Stock.ContentEncryptions
        select new object[] { alg, ce.Enc };

    [Theory]
    [MemberData(nameof(Pbes2Pairs))]
    public void PBES2_with_key_wrap_crosses_both_ways(JweAlgorithm alg, JweEncryption enc)
    {
        var random = new Random(HashCode.Combine(2898, (int)alg, (int)enc));
        var failures = new List<string>();

        // jose-jwt's default iteration count (8,192) when the header names none; 10 tokens each way, as PBKDF2 dominates.
        for (int i = 0; i < 10; i++)
        {
            string password = Convert.ToBase64String(Stock.Bytes(random, 12));
            byte[] payload = Stock.Bytes(random, random.Next(0, 600));
            Exchange(failures, $"{i} stock->CachedAes", payload, password, password, alg, enc, Stock.StockSettings(), Stock.CachedSettings());
            Exchange(failures, $"{i} CachedAes->stock", payload, password, password, alg, enc, Stock.CachedSettings(), Stock.StockSettings());
        }

        Assert.True(failures.Count == 0, string.Join(Environment.NewLine, failures.Take(10)));
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public void A_tokens_header_does_not_depend_on_the_package(JweAlgorithm alg, JweEncryption enc)
    {
        byte[] kek = RandomNumberGenerator.GetBytes(Stock.KekBytes(alg));
        var extraHeaders = new Dictionary<string, object> { ["kid"] = "key-1", ["typ"] = "JWT" };
        string byStock = JWT.Encode("{\"sub\":\"42\"}", kek, alg, enc, extraHeaders: extraHeaders, settings: Stock.StockSettings());
        string byCached = JWT.Encode("{\"sub\":\"42\"}", kek, alg, enc, extraHeaders: extraHeaders, settings: Stock.CachedSettings());

        // The encoded header is the same text; the other parts have the lengths stock's have (their bytes are random).
        string[] stockParts = byStock.Split('.');
        string[] cachedParts = byCached.Split('.');
        Assert.Equal(stockParts[0], cachedParts[0]);
        Assert.Equal(stockParts.Select(p => p.Length), cachedParts.Select(p => p.Length));
        Assert.DoesNotContain("CachedAes", JWT.Headers(byCached).Values.Select(v => v?.ToString() ?? ""), StringComparer.OrdinalIgnoreCase);
    }

    private static void Exchange(List<string> failures, string name, byte[] payload, object key, JweAlgorithm alg, JweEncryption enc, JwtSettings from, JwtSettings to) =>
        Exchange(failures, name, payload, key, key, alg, enc, from, to);

    private static void Exchange(
        List<string> failures, string name, byte[] payload, object encryptKey, object decryptKey, JweAlgorithm alg, JweEncryption enc, JwtSettings from, JwtSettings to)
    {
        try
        {
            string token = JWT.EncodeBytes(payload, encryptKey, alg, enc, settings: from);
            byte[] read = JWT.DecodeBytes(token, decryptKey, alg, enc, to);
            if (!read.AsSpan().SequenceEqual(payload))
            {
                failures.Add($"{name}: {payload.Length} B sent, {read.Length} B read, different");
            }
        }
        catch (Exception e)
        {
            failures.Add($"{name}: {payload.Length} B: {Stock.Describe(e)}");
        }
    }
}
