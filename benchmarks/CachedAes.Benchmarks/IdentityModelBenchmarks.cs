using System;
using System.Collections.Generic;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using CachedCryptography.IdentityModel;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.Benchmarks;

/// <summary>The keys and factories of the IdentityModel rows: stock IdentityModel, or with CachedAes plugged in.</summary>
internal static class Jwe
{
    public const string Issuer = "https://issuer.cachedaes.bench";
    public const string Audience = "cachedaes-benchmarks";

    /// <summary>The key-encryption key (A256KW).</summary>
    public static byte[] KekBytes { get; } = TestData.Fill(32, 0x4B454B);

    public static SymmetricSecurityKey SigningKey { get; } = new(TestData.Fill(32, 0x5349));

    /// <summary>
    /// A factory of IdentityModel's own providers (stock <c>Aes</c>), or one switched to the CachedAes.IdentityModel
    /// package's <see cref="CachedAesCryptoProvider"/> with <c>UseCachedAes()</c>, the setup docs/integrations.md gives for some keys only.
    /// </summary>
    public static CryptoProviderFactory Factory(bool cached) =>
        cached ? new CryptoProviderFactory().UseCachedAes() : new CryptoProviderFactory();

    public static SymmetricSecurityKey Kek(CryptoProviderFactory factory) => new(KekBytes) { CryptoProviderFactory = factory };
}

/// <summary>
/// A real client: Microsoft.IdentityModel's <see cref="JsonWebTokenHandler"/> creates a signed and encrypted token
/// (JWE, A256KW key wrap and <see cref="Enc"/> content encryption, HS256 signature) and validates it (decrypts,
/// checks the signature, issuer, audience and lifetime). Stock IdentityModel (baseline) against the same with
/// <see cref="CachedAesCryptoProvider"/> on the key-encryption key and the validation parameters. Per token,
/// IdentityModel makes a key-wrap provider (an AES instance, one ECB transform, 6 x n <c>TransformFinalBlock</c> calls)
/// and a content-encryption provider (stock: a new instance, a transform, one <c>TransformFinalBlock</c>) in each
/// direction. Each setup checks that its tokens validate on the other side too.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Enc), SecurityAlgorithms.Aes128CbcHmacSha256)]
public class JweRoundTrip
{
    private readonly JsonWebTokenHandler _handler = new();
    private SecurityTokenDescriptor _descriptor = null!;
    private TokenValidationParameters _parameters = null!;

    /// <summary>The content encryption: A128CBC-HS256 (a 32-byte content key) or A256CBC-HS512 (64 bytes).</summary>
    [Params(SecurityAlgorithms.Aes128CbcHmacSha256, SecurityAlgorithms.Aes256CbcHmacSha512)]
    public string Enc { get; set; } = SecurityAlgorithms.Aes128CbcHmacSha256;

    /// <summary>Stock IdentityModel's providers.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(cached: false);

    /// <summary>CachedAes's providers.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(cached: true);

    /// <summary>Stock (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RoundTrip(_descriptor, _parameters);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RoundTrip(_descriptor, _parameters);

    private int RoundTrip(SecurityTokenDescriptor descriptor, TokenValidationParameters parameters)
    {
        string token = _handler.CreateToken(descriptor);
        TokenValidationResult result = _handler.ValidateTokenAsync(token, parameters).GetAwaiter().GetResult();
        return result.IsValid ? token.Length : throw new InvalidOperationException($"The token was rejected: {result.Exception}");
    }

    private void Setup(bool cached)
    {
        (_descriptor, _parameters) = Side(cached);
        (SecurityTokenDescriptor otherDescriptor, TokenValidationParameters otherParameters) = Side(!cached);
        RoundTrip(_descriptor, _parameters);
        ValidateOrThrow(_handler.CreateToken(_descriptor), otherParameters);
        ValidateOrThrow(_handler.CreateToken(otherDescriptor), _parameters);
    }

    private void ValidateOrThrow(string token, TokenValidationParameters parameters)
    {
        TokenValidationResult result = _handler.ValidateTokenAsync(token, parameters).GetAwaiter().GetResult();
        if (!result.IsValid || (string)result.Claims["sub"] != "benchmark-user")
        {
            throw BenchmarkCheck.Failure($"A JWE ({Enc}) made by one side was not read by the other: {result.Exception}");
        }
    }

    private (SecurityTokenDescriptor, TokenValidationParameters) Side(bool cached)
    {
        CryptoProviderFactory factory = Jwe.Factory(cached);
        SymmetricSecurityKey kek = Jwe.Kek(factory);
        SecurityTokenDescriptor descriptor = new()
        {
            Issuer = Jwe.Issuer,
            Audience = Jwe.Audience,
            Claims = new Dictionary<string, object> { ["sub"] = "benchmark-user", ["scope"] = "read write" },
            Expires = DateTime.UtcNow.AddHours(2),
            SigningCredentials = new SigningCredentials(Jwe.SigningKey, SecurityAlgorithms.HmacSha256),
            EncryptingCredentials = new EncryptingCredentials(kek, SecurityAlgorithms.Aes256KW, Enc),
        };
        TokenValidationParameters parameters = new()
        {
            ValidIssuer = Jwe.Issuer,
            ValidAudience = Jwe.Audience,
            IssuerSigningKey = Jwe.SigningKey,
            TokenDecryptionKey = kek,
            CryptoProviderFactory = factory,
        };
        return (descriptor, parameters);
    }
}

/// <summary>The key-wrap call measured by <see cref="IdentityModelKeyWrap"/>.</summary>
public enum KeyWrapCall
{
    /// <summary><c>KeyWrapProvider.WrapKey</c>.</summary>
    WrapKey,

    /// <summary><c>KeyWrapProvider.UnwrapKey</c>.</summary>
    UnwrapKey,
}

/// <summary>Where the key-wrap provider comes from.</summary>
public enum ProviderUse
{
    /// <summary>As IdentityModel does for every token: the factory makes a provider, one call, and the provider is
    /// never released (IdentityModel 8.23.0 does not hand key-wrap providers back), so the collector finalizes it.</summary>
    PerToken,

    /// <summary>One provider made once and kept (stock's keeps its AES instance and transform between calls; CachedAes's
    /// makes one instance per call and disposes it).</summary>
    Kept,
}

/// <summary>
/// IdentityModel's RFC 3394 key wrap alone (A256KW), <c>WrapKey</c>/<c>UnwrapKey</c> of a content key of
/// <see cref="CekLength"/> bytes (32 for A128CBC-HS256, 64 for A256CBC-HS512): stock <see cref="SymmetricKeyWrapProvider"/>
/// (baseline) against <see cref="CachedAesKeyWrapProvider"/> (the whole wrap on one CachedAes per call), both made by
/// their factory. Each setup checks the wrapped key against stock's bytes and the unwrapped key against the original.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public class IdentityModelKeyWrap
{
    private CryptoProviderFactory _factory = null!;
    private SymmetricSecurityKey _kek = null!;
    private KeyWrapProvider? _kept;
    private byte[] _input = [];

    /// <summary>Wrap or unwrap.</summary>
    [ParamsAllValues]
    public KeyWrapCall Call { get; set; }

    /// <summary>A provider per token or one kept.</summary>
    [ParamsAllValues]
    public ProviderUse Provider { get; set; }

    /// <summary>The content key's length in bytes.</summary>
    [Params(32, 64)]
    public int CekLength { get; set; }

    /// <summary>Stock IdentityModel's provider.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(cached: false);

    /// <summary>CachedAes's provider.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(cached: true);

    /// <summary>Disposes the kept provider.</summary>
    [GlobalCleanup]
    public void Cleanup() => _kept?.Dispose();

    /// <summary>Stock (baseline).</summary>
    [Benchmark(Baseline = true)]
    public byte[] Stock() => Run();

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public byte[] Cached() => Run();

    private byte[] Run()
    {
        KeyWrapProvider provider = _kept ?? CreateProvider();
        return Call == KeyWrapCall.WrapKey ? provider.WrapKey(_input) : provider.UnwrapKey(_input);
    }

    private KeyWrapProvider CreateProvider() => Call == KeyWrapCall.WrapKey
        ? _factory.CreateKeyWrapProvider(_kek, SecurityAlgorithms.Aes256KW)
        : _factory.CreateKeyWrapProviderForUnwrap(_kek, SecurityAlgorithms.Aes256KW);

    private void Setup(bool cached)
    {
        _factory = Jwe.Factory(cached);
        _kek = Jwe.Kek(_factory);
        byte[] cek = TestData.Fill(CekLength, CekLength + 7518);
        byte[] wrapped = new SymmetricKeyWrapProvider(Jwe.Kek(new CryptoProviderFactory()), SecurityAlgorithms.Aes256KW).WrapKey(cek);
        _input = Call == KeyWrapCall.WrapKey ? cek : wrapped;
        byte[] expected = Call == KeyWrapCall.WrapKey ? wrapped : cek;
        if (Provider == ProviderUse.Kept)
        {
            _kept = CreateProvider();
        }

        bool right = CreateProvider() is var provider
            && provider.GetType() == (cached ? typeof(CachedAesKeyWrapProvider) : typeof(SymmetricKeyWrapProvider))
            && Run().AsSpan().SequenceEqual(expected) && Run().AsSpan().SequenceEqual(expected);
        if (!right)
        {
            throw BenchmarkCheck.Failure(
                $"{(cached ? "CachedAes" : "Stock")} IdentityModel {Call} of {CekLength} bytes did not produce stock's output " +
                $"(provider {provider.GetType().Name}).");
        }
    }
}

/// <summary>The authentication tag handed to <see cref="IdentityModelContentDecryption"/>.</summary>
public enum TagKind
{
    /// <summary>The tag encryption made: the token decrypts.</summary>
    Valid,

    /// <summary>The same tag with one bit flipped: a forged token, rejected with IDX10650.</summary>
    Forged,
}

/// <summary>
/// IdentityModel's content decryption alone, as <see cref="JsonWebTokenHandler"/> does it per token once the content key
/// is unwrapped: a content key, a provider from the factory (<c>CreateAuthenticatedEncryptionProvider</c>), one
/// <c>Decrypt</c> of a 256-byte payload under a JWE header's AAD, and the provider disposed. With a <see cref="TagKind.Valid"/>
/// tag it decrypts; with a <see cref="TagKind.Forged"/> one both reject it with IDX10650 (the time includes throwing and
/// catching the exception). Stock <see cref="AuthenticatedEncryptionProvider"/> (baseline) against
/// <see cref="CachedAesCbcHmacProvider"/>. Each setup checks the plaintext, or the rejection and its message, against
/// stock's.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public class IdentityModelContentDecryption
{
    private static readonly byte[] s_aad = System.Text.Encoding.ASCII.GetBytes("eyJhbGciOiJBMjU2S1ciLCJlbmMiOiJBMTI4Q0JDLUhTMjU2IiwidHlwIjoiSldUIn0");
    private static readonly byte[] s_plaintext = TestData.Fill(256, 0x7E57);

    private CryptoProviderFactory _factory = null!;
    private byte[] _cek = [];
    private byte[] _ciphertext = [];
    private byte[] _iv = [];
    private byte[] _tag = [];

    /// <summary>A valid or a forged tag.</summary>
    [ParamsAllValues]
    public TagKind Tag { get; set; }

    /// <summary>The content encryption: A128CBC-HS256 (a 32-byte content key) or A256CBC-HS512 (64 bytes).</summary>
    [Params(SecurityAlgorithms.Aes128CbcHmacSha256, SecurityAlgorithms.Aes256CbcHmacSha512)]
    public string Enc { get; set; } = SecurityAlgorithms.Aes128CbcHmacSha256;

    /// <summary>Stock IdentityModel's provider.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(cached: false);

    /// <summary>CachedAes's provider.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(cached: true);

    /// <summary>Stock (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => DecryptOne();

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => DecryptOne();

    // The plaintext's length, or -1 for a rejected token.
    private int DecryptOne()
    {
        var key = new SymmetricSecurityKey(_cek) { CryptoProviderFactory = _factory };
        using AuthenticatedEncryptionProvider provider = _factory.CreateAuthenticatedEncryptionProvider(key, Enc);
        try
        {
            return provider.Decrypt(_ciphertext, s_aad, _iv, _tag).Length;
        }
        catch (SecurityTokenDecryptionFailedException)
        {
            return -1;
        }
    }

    private void Setup(bool cached)
    {
        _factory = Jwe.Factory(cached);
        _cek = TestData.Fill(Enc == SecurityAlgorithms.Aes128CbcHmacSha256 ? 32 : 64, 0xCE4);
        using var stock = new AuthenticatedEncryptionProvider(new SymmetricSecurityKey(_cek), Enc);
        AuthenticatedEncryptionResult r = stock.Encrypt(s_plaintext, s_aad, TestData.Fill(16, 0x1F));
        (_ciphertext, _iv, _tag) = (r.Ciphertext, r.IV, (byte[])r.AuthenticationTag.Clone());
        if (Tag == TagKind.Forged)
        {
            _tag[^1] ^= 0x01;
        }

        var key = new SymmetricSecurityKey(_cek) { CryptoProviderFactory = _factory };
        using AuthenticatedEncryptionProvider provider = _factory.CreateAuthenticatedEncryptionProvider(key, Enc);
        bool right = provider.GetType() == (cached ? typeof(CachedAesCbcHmacProvider) : typeof(AuthenticatedEncryptionProvider));
        string? stockMessage = null;
        string? message = null;
        try
        {
            _ = stock.Decrypt(_ciphertext, s_aad, _iv, _tag);
        }
        catch (SecurityTokenDecryptionFailedException e)
        {
            stockMessage = e.Message;
        }

        try
        {
            right &= provider.Decrypt(_ciphertext, s_aad, _iv, _tag).AsSpan().SequenceEqual(s_plaintext) && Tag == TagKind.Valid;
        }
        catch (SecurityTokenDecryptionFailedException e)
        {
            message = e.Message;
            right &= Tag == TagKind.Forged && message == stockMessage && message.StartsWith("IDX10650:", StringComparison.Ordinal);
        }

        if (!right || DecryptOne() != (Tag == TagKind.Valid ? s_plaintext.Length : -1))
        {
            throw BenchmarkCheck.Failure(
                $"{(cached ? "CachedAes" : "Stock")} IdentityModel {Enc} with a {Tag} tag did not end as stock's (provider {provider.GetType().Name}, " +
                $"message {message ?? "none"}, stock's {stockMessage ?? "none"}).");
        }
    }
}
