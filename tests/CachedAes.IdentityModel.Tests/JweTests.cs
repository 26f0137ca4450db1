using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;
using Xunit.Abstractions;

// One test changes CryptoProviderFactory.Default (the README's one-line setup): no test may run beside it.
[assembly: CollectionBehavior(DisableTestParallelization = true)]

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>
/// Counts what IdentityModel asks the CachedAes provider for and the AES instances it gets, so a test can prove that
/// CachedAes did the work (a test that passed on stock's code path alone would prove nothing).
/// </summary>
internal sealed class CountingCryptoProvider : ICryptoProvider
{
    private readonly CachedAesCryptoProvider _inner;
    private int _keyWrapProviders;
    private int _cbcHmacProviders;
    private int _aesInstances;
    private int _released;

    public CountingCryptoProvider() => _inner = new CachedAesCryptoProvider(() =>
    {
        Interlocked.Increment(ref _aesInstances);
        return CachedAes.Create();
    });

    public int KeyWrapProviders => Volatile.Read(ref _keyWrapProviders);

    public int CbcHmacProviders => Volatile.Read(ref _cbcHmacProviders);

    public int AesInstances => Volatile.Read(ref _aesInstances);

    public bool IsSupportedAlgorithm(string algorithm, params object[] args) => _inner.IsSupportedAlgorithm(algorithm, args);

    public object Create(string algorithm, params object[] args)
    {
        object created = _inner.Create(algorithm, args);
        Interlocked.Increment(ref created is CachedAesKeyWrapProvider ? ref _keyWrapProviders : ref _cbcHmacProviders);
        return created;
    }

    /// <summary>How many providers IdentityModel handed back through <see cref="Release"/>.</summary>
    public int Released => Volatile.Read(ref _released);

    public void Release(object cryptoInstance)
    {
        Interlocked.Increment(ref _released);
        _inner.Release(cryptoInstance);
    }
}

/// <summary>
/// Microsoft.IdentityModel JWE (JsonWebTokenHandler; A256KW with A128CBC-HS256 and A256CBC-HS512) with stock
/// <see cref="Aes"/> on one side and CachedAes on the other (the CachedAes.IdentityModel package), over the same keys: tokens made by one are
/// read by the other, tampered tokens are rejected by both the same way, and the byte-level pieces (wrapped keys,
/// ciphertexts, tags) are identical.
/// </summary>
public sealed class JweTests
{
    private const string Issuer = "https://issuer.cachedaes.test";
    private const string Audience = "cachedaes-tests";

    private static readonly JsonWebTokenHandler s_handler = new();
    private static readonly string[] s_encs = [SecurityAlgorithms.Aes128CbcHmacSha256, SecurityAlgorithms.Aes256CbcHmacSha512];

    private readonly byte[] _kekBytes;
    private readonly SymmetricSecurityKey _signingKey;
    private readonly SymmetricSecurityKey _stockKek;
    private readonly SymmetricSecurityKey _cachedKek;
    private readonly CryptoProviderFactory _stockFactory = new();
    private readonly CryptoProviderFactory _cachedFactory;
    private readonly CountingCryptoProvider _counting = new();
    private readonly ITestOutputHelper _output;

    public JweTests(ITestOutputHelper output)
    {
        _output = output;
        var rng = new Random(0x15E);
        _kekBytes = new byte[32];
        rng.NextBytes(_kekBytes);
        byte[] signing = new byte[32];
        rng.NextBytes(signing);
        _signingKey = new SymmetricSecurityKey(signing);
        _cachedFactory = new CryptoProviderFactory { CustomCryptoProvider = _counting };
        _stockKek = new SymmetricSecurityKey(_kekBytes) { CryptoProviderFactory = _stockFactory };
        _cachedKek = new SymmetricSecurityKey(_kekBytes) { CryptoProviderFactory = _cachedFactory };
    }

    public static TheoryData<string> Encs() => new(s_encs);

    private static Dictionary<string, object> Claims(Random rng, int extraBytes) => new()
    {
        ["sub"] = $"user-{rng.Next()}",
        ["scope"] = "read write",
        ["data"] = Convert.ToBase64String(RandomNumberGenerator.GetBytes(extraBytes)),
    };

    private static string CreateToken(SymmetricSecurityKey kek, SymmetricSecurityKey signingKey, string enc, Dictionary<string, object> claims) =>
        s_handler.CreateToken(new SecurityTokenDescriptor
        {
            Issuer = Issuer,
            Audience = Audience,
            Claims = claims,
            Expires = DateTime.UtcNow.AddMinutes(10),
            SigningCredentials = new SigningCredentials(signingKey, SecurityAlgorithms.HmacSha256),
            EncryptingCredentials = new EncryptingCredentials(kek, SecurityAlgorithms.Aes256KW, enc),
        });

    private TokenValidationParameters Parameters(SymmetricSecurityKey kek, CryptoProviderFactory? factory) => new()
    {
        ValidIssuer = Issuer,
        ValidAudience = Audience,
        IssuerSigningKey = _signingKey,
        TokenDecryptionKey = kek,
        CryptoProviderFactory = factory,
    };

    private TokenValidationParameters StockParameters => Parameters(_stockKek, _stockFactory);

    private TokenValidationParameters CachedParameters => Parameters(_cachedKek, _cachedFactory);

    private static async Task<string> ClaimsOf(string token, TokenValidationParameters parameters)
    {
        TokenValidationResult result = await s_handler.ValidateTokenAsync(token, parameters);
        Assert.True(result.IsValid, $"token rejected: {result.Exception}");
        return (string)result.Claims["sub"] + "|" + (string)result.Claims["data"];
    }

    [Theory]
    [MemberData(nameof(Encs))]
    public async Task Tokens_cross_validate_both_ways_and_CachedAes_does_the_work(string enc)
    {
        var rng = new Random(enc.Length);
        int tokens = 0;
        foreach (int extra in new[] { 0, 1, 15, 16, 100, 2000 })
        {
            Dictionary<string, object> claims = Claims(rng, extra);
            string expected = (string)claims["sub"] + "|" + (string)claims["data"];
            int kwBefore = _counting.KeyWrapProviders;
            int aeBefore = _counting.CbcHmacProviders;
            int aesBefore = _counting.AesInstances;

            string byStock = CreateToken(_stockKek, _signingKey, enc, claims);
            Assert.Equal((kwBefore, aeBefore, aesBefore), (_counting.KeyWrapProviders, _counting.CbcHmacProviders, _counting.AesInstances));

            string byCached = CreateToken(_cachedKek, _signingKey, enc, claims);
            Assert.Equal(byStock.Split('.').Select(p => p.Length), byCached.Split('.').Select(p => p.Length));
            Assert.Equal(byStock.Split('.')[0], byCached.Split('.')[0]);
            Assert.Equal(kwBefore + 1, _counting.KeyWrapProviders);
            Assert.Equal(aeBefore + 1, _counting.CbcHmacProviders);
            Assert.Equal(aesBefore + 2, _counting.AesInstances);

            Assert.Equal(expected, await ClaimsOf(byStock, CachedParameters));
            Assert.Equal(expected, await ClaimsOf(byCached, StockParameters));
            Assert.Equal(expected, await ClaimsOf(byCached, CachedParameters));

            // Two tokens read with CachedAes: each needed an unwrap and a content decryption.
            Assert.Equal(kwBefore + 3, _counting.KeyWrapProviders);
            Assert.Equal(aeBefore + 3, _counting.CbcHmacProviders);
            Assert.Equal(aesBefore + 6, _counting.AesInstances);
            tokens++;
        }

        Assert.Equal(6, tokens);
        _output.WriteLine($"{enc}: {_counting.KeyWrapProviders} key-wrap providers and {_counting.CbcHmacProviders} content providers made, " +
            $"{_counting.AesInstances} CachedAes instances, {_counting.Released} providers released through ICryptoProvider.Release");
    }

    private static string FlipBit(string token, int part, Random rng)
    {
        string[] parts = token.Split('.');
        byte[] bytes = Base64UrlEncoder.DecodeBytes(parts[part]);
        bytes[rng.Next(bytes.Length)] ^= (byte)(1 << rng.Next(8));
        parts[part] = Base64UrlEncoder.Encode(bytes);
        return string.Join('.', parts);
    }

    private static string ReplacePart(string token, int part, Func<byte[], byte[]> change)
    {
        string[] parts = token.Split('.');
        parts[part] = Base64UrlEncoder.Encode(change(Base64UrlEncoder.DecodeBytes(parts[part])));
        return string.Join('.', parts);
    }

    private static string WithHeader(string token, Action<Dictionary<string, JsonElement>> change)
    {
        string[] parts = token.Split('.');
        var header = JsonSerializer.Deserialize<Dictionary<string, JsonElement>>(Base64UrlEncoder.Decode(parts[0]))!;
        change(header);
        parts[0] = Base64UrlEncoder.Encode(JsonSerializer.Serialize(header));
        return string.Join('.', parts);
    }

    /// <summary>Every way of damaging a compact JWE (5 parts: header, encrypted key, IV, ciphertext, tag).</summary>
    private static IEnumerable<(string Name, string Token)> Tampered(string token, Random rng)
    {
        foreach ((int part, string name) in new[] { (1, "encrypted key"), (2, "IV"), (3, "ciphertext"), (4, "tag") })
        {
            for (int i = 0; i < 4; i++)
            {
                yield return ($"{name}: one bit flipped", FlipBit(token, part, rng));
            }

            yield return ($"{name}: last byte removed", ReplacePart(token, part, b => b.AsSpan(0, b.Length - 1).ToArray()));
            yield return ($"{name}: one byte appended", ReplacePart(token, part, b => [.. b, 0x00]));
        }

        yield return ("ciphertext: last block removed", ReplacePart(token, 3, b => b.AsSpan(0, b.Length - 16).ToArray()));
        yield return ("ciphertext: first block removed", ReplacePart(token, 3, b => b.AsSpan(16).ToArray()));
        yield return ("tag: half of it", ReplacePart(token, 4, b => b.AsSpan(0, b.Length / 2).ToArray()));
        yield return ("tag: doubled", ReplacePart(token, 4, b => [.. b, .. b]));
        yield return ("header: a member added", WithHeader(token, h => h["x"] = JsonSerializer.SerializeToElement(1)));
        yield return ("header: enc swapped", WithHeader(token, h => h["enc"] = JsonSerializer.SerializeToElement(
            h["enc"].GetString() == SecurityAlgorithms.Aes128CbcHmacSha256 ? SecurityAlgorithms.Aes256CbcHmacSha512 : SecurityAlgorithms.Aes128CbcHmacSha256)));
        yield return ("header: alg A128KW", WithHeader(token, h => h["alg"] = JsonSerializer.SerializeToElement(SecurityAlgorithms.Aes128KW)));
        yield return ("header: one bit flipped", FlipBit(token, 0, rng));
        yield return ("IV: empty", ReplacePart(token, 2, _ => []));
        yield return ("tag: empty", ReplacePart(token, 4, _ => []));
    }

    private static string Outcome(TokenValidationResult result) => result.IsValid
        ? "valid"
        : $"{result.Exception?.GetType().Name} (inner {result.Exception?.InnerException?.GetType().Name ?? "none"})";

    [Theory]
    [MemberData(nameof(Encs))]
    public async Task Tampered_tokens_are_rejected_the_same_way_by_both(string enc)
    {
        var rng = new Random(0x7A3 + enc.Length);
        var problems = new List<string>();
        var outcomes = new SortedSet<string>(StringComparer.Ordinal);
        int cases = 0;
        foreach ((string maker, SymmetricSecurityKey kek) in new[] { ("stock", _stockKek), ("CachedAes", _cachedKek) })
        {
            string token = CreateToken(kek, _signingKey, enc, Claims(rng, 40));
            foreach ((string name, string damaged) in Tampered(token, rng))
            {
                TokenValidationResult byStock = await s_handler.ValidateTokenAsync(damaged, StockParameters);
                TokenValidationResult byCached = await s_handler.ValidateTokenAsync(damaged, CachedParameters);
                string s = Outcome(byStock);
                string c = Outcome(byCached);
                outcomes.Add($"{name}: {s}");
                cases++;
                if (s != c)
                {
                    problems.Add($"token made by {maker}, {name}: stock {s}; CachedAes {c}");
                }

                if (byStock.IsValid && name != "header: one bit flipped")
                {
                    problems.Add($"token made by {maker}, {name}: stock accepted it");
                }
            }
        }

        _output.WriteLine(string.Join(Environment.NewLine, outcomes));
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems) + Environment.NewLine + "stock outcomes:" + Environment.NewLine + string.Join(Environment.NewLine, outcomes));
        Assert.True(cases > 50, $"only {cases} tampered tokens");
    }

    [Theory]
    [MemberData(nameof(Encs))]
    public async Task Four_threads_make_and_read_tokens_with_both(string enc)
    {
        const int Threads = 4;
        const int TokensPerThread = 60;
        int aesBefore = _counting.AesInstances;
        var problems = new ConcurrentQueue<string>();
        Task[] workers = Enumerable.Range(0, Threads).Select(n => Task.Run(async () =>
        {
            var rng = new Random(n * 7919);
            for (int i = 0; i < TokensPerThread; i++)
            {
                Dictionary<string, object> claims = Claims(rng, rng.Next(0, 300));
                string expected = (string)claims["sub"] + "|" + (string)claims["data"];
                bool cachedMakes = i % 2 == 0;
                string token = CreateToken(cachedMakes ? _cachedKek : _stockKek, _signingKey, enc, claims);
                TokenValidationResult result = await s_handler.ValidateTokenAsync(token, cachedMakes ? StockParameters : CachedParameters);
                string got = result.IsValid ? (string)result.Claims["sub"] + "|" + (string)result.Claims["data"] : $"rejected: {result.Exception}";
                if (got != expected)
                {
                    problems.Enqueue($"thread {n}, token {i}: {got}");
                }
            }
        })).ToArray();
        await Task.WhenAll(workers);
        Assert.True(problems.IsEmpty, string.Join(Environment.NewLine, problems.Take(10)));

        // Every token either made or read by CachedAes: a key wrap and a content AES instance each.
        Assert.Equal(aesBefore + (2 * Threads * TokensPerThread), _counting.AesInstances);
    }

    public static TheoryData<string, int> KeyWraps() => new()
    {
        { SecurityAlgorithms.Aes128KW, 16 },
        { SecurityAlgorithms.Aes192KW, 24 },
        { SecurityAlgorithms.Aes256KW, 32 },
    };

    /// <summary>The key wrap alone: CachedAes's wrapped keys are stock's, byte for byte; damaged ones fail alike.</summary>
    [Theory]
    [MemberData(nameof(KeyWraps))]
    public void Key_wrap_provider_gives_stocks_bytes_and_failures(string algorithm, int kekLength)
    {
        var rng = new Random(3394 + kekLength);
        byte[] kekBytes = _kekBytes.AsSpan(0, kekLength).ToArray();
        var stockKek = new SymmetricSecurityKey(kekBytes) { CryptoProviderFactory = _stockFactory };
        var cachedKek = new SymmetricSecurityKey(kekBytes) { CryptoProviderFactory = _cachedFactory };
        KeyWrapProvider stockWrap = _stockFactory.CreateKeyWrapProvider(stockKek, algorithm);
        KeyWrapProvider cachedWrap = _cachedFactory.CreateKeyWrapProvider(cachedKek, algorithm);
        KeyWrapProvider cachedUnwrap = _cachedFactory.CreateKeyWrapProviderForUnwrap(cachedKek, algorithm);
        Assert.IsType<CachedAesKeyWrapProvider>(cachedWrap);
        Assert.IsType<CachedAesKeyWrapProvider>(cachedUnwrap);
        Assert.IsNotType<CachedAesKeyWrapProvider>(stockWrap);
        foreach (int length in new[] { 16, 24, 32, 48, 64, 72 })
        {
            byte[] cek = new byte[length];
            rng.NextBytes(cek);
            byte[] wrapped = stockWrap.WrapKey(cek);
            Assert.Equal(wrapped, cachedWrap.WrapKey(cek));
            Assert.Equal(cek, cachedUnwrap.UnwrapKey(wrapped));
            for (int i = 0; i < wrapped.Length; i++)
            {
                byte[] damaged = (byte[])wrapped.Clone();
                damaged[i] ^= (byte)(1 << rng.Next(8));
                Exception s = Assert.ThrowsAny<Exception>(() => stockWrap.UnwrapKey(damaged));
                Exception c = Assert.ThrowsAny<Exception>(() => cachedUnwrap.UnwrapKey(damaged));
                Assert.Equal(s.GetType(), c.GetType());
            }
        }

        foreach (byte[]? bad in new byte[]?[] { null, [], new byte[12], new byte[8] })
        {
            Exception? s = Record.Exception(() => stockWrap.WrapKey(bad!));
            Exception? c = Record.Exception(() => cachedWrap.WrapKey(bad!));
            Assert.Equal(s?.GetType(), c?.GetType());
            Assert.Equal((s as ArgumentException)?.ParamName, (c as ArgumentException)?.ParamName);
            s = Record.Exception(() => stockWrap.UnwrapKey(bad!));
            c = Record.Exception(() => cachedUnwrap.UnwrapKey(bad!));
            Assert.Equal(s?.GetType(), c?.GetType());
            Assert.Equal((s as ArgumentException)?.ParamName, (c as ArgumentException)?.ParamName);
        }

        // A key of the wrong size for the algorithm fails as IdentityModel's own check says.
        byte[] wrongSize = new byte[kekLength == 16 ? 32 : 16];
        var shortKek = new SymmetricSecurityKey(wrongSize) { CryptoProviderFactory = _cachedFactory };
        var shortStockKek = new SymmetricSecurityKey(wrongSize) { CryptoProviderFactory = _stockFactory };
        Exception? fromStock = Record.Exception(() => _stockFactory.CreateKeyWrapProvider(shortStockKek, algorithm).WrapKey(new byte[32]));
        Exception? fromCached = Record.Exception(() => _cachedFactory.CreateKeyWrapProvider(shortKek, algorithm).WrapKey(new byte[32]));
        Assert.NotNull(fromStock);
        Assert.Equal(fromStock.GetType(), fromCached?.GetType());
        Assert.Equal(fromStock.InnerException?.GetType(), fromCached?.InnerException?.GetType());
        _cachedFactory.ReleaseKeyWrapProvider(cachedWrap);
        _cachedFactory.ReleaseKeyWrapProvider(cachedUnwrap);
        _stockFactory.ReleaseKeyWrapProvider(stockWrap);
    }

    /// <summary>The three AES-CBC-HMAC algorithms and their content-key lengths.</summary>
    public static TheoryData<string, int> AllEncs() => new()
    {
        { SecurityAlgorithms.Aes128CbcHmacSha256, 32 },
        { SecurityAlgorithms.Aes192CbcHmacSha384, 48 },
        { SecurityAlgorithms.Aes256CbcHmacSha512, 64 },
    };

    /// <summary>The content encryption alone, with a given IV: ciphertext and tag are stock's, byte for byte.</summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Content_encryption_provider_gives_stocks_bytes_and_failures(string enc, int cekLength)
    {
        var rng = new Random(7518 + enc.Length + cekLength);
        byte[] cek = new byte[cekLength];
        rng.NextBytes(cek);
        var stockKey = new SymmetricSecurityKey(cek);
        var cachedKey = new SymmetricSecurityKey(cek);
        using AuthenticatedEncryptionProvider stock = _stockFactory.CreateAuthenticatedEncryptionProvider(stockKey, enc);
        using AuthenticatedEncryptionProvider cached = _cachedFactory.CreateAuthenticatedEncryptionProvider(cachedKey, enc);
        Assert.IsType<CachedAesCbcHmacProvider>(cached);
        Assert.IsNotType<CachedAesCbcHmacProvider>(stock);
        foreach (int length in new[] { 1, 15, 16, 17, 100, 1000 })
        {
            byte[] plaintext = new byte[length];
            rng.NextBytes(plaintext);
            byte[] aad = Encoding.ASCII.GetBytes("eyJhbGciOiJBMjU2S1ciLCJlbmMiOiJBMTI4Q0JDLUhTMjU2In0");
            byte[] iv = new byte[16];
            rng.NextBytes(iv);
            AuthenticatedEncryptionResult s = stock.Encrypt(plaintext, aad, iv);
            AuthenticatedEncryptionResult c = cached.Encrypt(plaintext, aad, iv);
            Assert.Equal(s.Ciphertext, c.Ciphertext);
            Assert.Equal(s.IV, c.IV);
            Assert.Equal(s.AuthenticationTag, c.AuthenticationTag);
            Assert.Equal(plaintext, cached.Decrypt(s.Ciphertext, aad, s.IV, s.AuthenticationTag));

            // Without an IV, each makes a random one; the other still decrypts.
            AuthenticatedEncryptionResult r = cached.Encrypt(plaintext, aad);
            Assert.Equal(16, r.IV.Length);
            Assert.Equal(plaintext, stock.Decrypt(r.Ciphertext, aad, r.IV, r.AuthenticationTag));

            (string Name, byte[] Ciphertext, byte[] Aad, byte[] Iv, byte[] Tag)[] damaged =
            [
                ("ciphertext bit", Flip(s.Ciphertext, rng), aad, s.IV, s.AuthenticationTag),
                ("aad bit", s.Ciphertext, Flip(aad, rng), s.IV, s.AuthenticationTag),
                ("iv bit", s.Ciphertext, aad, Flip(s.IV, rng), s.AuthenticationTag),
                ("tag bit", s.Ciphertext, aad, s.IV, Flip(s.AuthenticationTag, rng)),
                ("tag short", s.Ciphertext, aad, s.IV, s.AuthenticationTag.AsSpan(1).ToArray()),
                ("tag long", s.Ciphertext, aad, s.IV, [.. s.AuthenticationTag, 0]),
                ("ciphertext empty", [], aad, s.IV, s.AuthenticationTag),
                ("aad empty", s.Ciphertext, [], s.IV, s.AuthenticationTag),
                ("iv empty", s.Ciphertext, aad, [], s.AuthenticationTag),
                ("tag empty", s.Ciphertext, aad, s.IV, []),
                ("ciphertext null", null!, aad, s.IV, s.AuthenticationTag),
            ];
            foreach ((string name, byte[] ct, byte[] a, byte[] i, byte[] tag) in damaged)
            {
                Exception? fromStock = Record.Exception(() => stock.Decrypt(ct, a, i, tag));
                Exception? fromCached = Record.Exception(() => cached.Decrypt(ct, a, i, tag));
                Assert.True(fromStock is not null, $"{enc}, {length} bytes, {name}: stock accepted it");
                Assert.True(fromStock.GetType() == fromCached?.GetType(), $"{enc}, {length} bytes, {name}: stock {fromStock.GetType().Name}, CachedAes {fromCached?.GetType().Name ?? "nothing"}");
                Assert.Equal((fromStock as ArgumentException)?.ParamName, (fromCached as ArgumentException)?.ParamName);
                Assert.True(fromStock.Message == fromCached?.Message, $"{enc}, {length} bytes, {name}: stock's message \"{fromStock.Message}\", CachedAes's \"{fromCached?.Message}\"");
                if (length == 1)
                {
                    _output.WriteLine($"{name}: {fromStock.GetType().Name} ({(fromStock as ArgumentException)?.ParamName})");
                }
            }

            foreach ((byte[]? p, byte[]? a) in new (byte[]?, byte[]?)[] { (null, aad), ([], aad), (plaintext, null), (plaintext, []) })
            {
                Exception? fromStock = Record.Exception(() => stock.Encrypt(p!, a!, iv));
                Exception? fromCached = Record.Exception(() => cached.Encrypt(p!, a!, iv));
                Assert.NotNull(fromStock);
                Assert.Equal(fromStock.GetType(), fromCached?.GetType());
                Assert.Equal((fromStock as ArgumentException)?.ParamName, (fromCached as ArgumentException)?.ParamName);
            }
        }
    }

    private static byte[] Flip(byte[] data, Random rng)
    {
        byte[] copy = (byte[])data.Clone();
        copy[rng.Next(copy.Length)] ^= (byte)(1 << rng.Next(8));
        return copy;
    }

    /// <summary>
    /// Reading tokens with the factory on the key-encryption key only: the unwrap uses it, but the content key IdentityModel
    /// unwraps is a new key on the default factory, so content decryption stays on stock (why the README sets the factory
    /// on the validation parameters too).
    /// </summary>
    [Fact]
    public async Task A_factory_on_the_key_encryption_key_alone_leaves_content_decryption_on_stock()
    {
        Dictionary<string, object> claims = Claims(new Random(2), 64);
        string token = CreateToken(_stockKek, _signingKey, SecurityAlgorithms.Aes128CbcHmacSha256, claims);
        int kwBefore = _counting.KeyWrapProviders;
        int aeBefore = _counting.CbcHmacProviders;
        Assert.Equal((string)claims["sub"] + "|" + (string)claims["data"], await ClaimsOf(token, Parameters(_cachedKek, factory: null)));
        Assert.Equal(kwBefore + 1, _counting.KeyWrapProviders);
        Assert.Equal(aeBefore, _counting.CbcHmacProviders);
    }

    /// <summary>
    /// A <see cref="CachedAesCryptoProvider"/> on <see cref="CryptoProviderFactory.Default"/> (what
    /// <c>CryptoProviderFactory.Default.UseCachedAes()</c> sets; counted here): keys and validation parameters that name no
    /// factory then go through CachedAes; stock's tokens still read.
    /// </summary>
    [Fact]
    public async Task One_line_on_the_default_factory_is_enough()
    {
        var plainKek = new SymmetricSecurityKey(_kekBytes);
        Dictionary<string, object> claims = Claims(new Random(1), 64);
        string expected = (string)claims["sub"] + "|" + (string)claims["data"];
        string byStock = CreateToken(plainKek, _signingKey, SecurityAlgorithms.Aes128CbcHmacSha256, claims);
        var counting = new CountingCryptoProvider();
        ICryptoProvider? before = CryptoProviderFactory.Default.CustomCryptoProvider;
        CryptoProviderFactory.Default.CustomCryptoProvider = counting;
        try
        {
            string byCached = CreateToken(plainKek, _signingKey, SecurityAlgorithms.Aes256CbcHmacSha512, claims);
            Assert.Equal(expected, await ClaimsOf(byCached, Parameters(plainKek, factory: null)));
            Assert.Equal(expected, await ClaimsOf(byStock, Parameters(plainKek, factory: null)));
            Assert.Equal(3, counting.KeyWrapProviders);
            Assert.Equal(3, counting.CbcHmacProviders);
            Assert.Equal(6, counting.AesInstances);
        }
        finally
        {
            CryptoProviderFactory.Default.CustomCryptoProvider = before;
        }

        Assert.Equal(expected, await ClaimsOf(CreateToken(plainKek, _signingKey, SecurityAlgorithms.Aes128CbcHmacSha256, claims), Parameters(plainKek, factory: null)));
        Assert.Equal(6, counting.AesInstances);
    }
}
