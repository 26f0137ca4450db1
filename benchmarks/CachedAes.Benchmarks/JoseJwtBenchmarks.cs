using System;
using System.Collections.Generic;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using CachedCryptography.JoseJwt;
using Jose;

namespace CachedCryptography.Benchmarks;

/// <summary>What a jose-jwt row measures per token.</summary>
public enum JoseCall
{
    /// <summary><c>JWT.Encode</c>: a new content key, wrapped (A256KW), and the payload encrypted.</summary>
    Encode,

    /// <summary><c>JWT.Decode</c>: the content key unwrapped, the tag checked and the payload decrypted.</summary>
    Decode,

    /// <summary><c>JWT.Encode</c> then <c>JWT.Decode</c> of that token.</summary>
    RoundTrip,
}

/// <summary>The settings and key of the jose-jwt rows: stock jose-jwt, or with <c>UseCachedAes()</c>.</summary>
internal static class JoseJwtSetup
{
    /// <summary>The key-encryption key (A256KW).</summary>
    public static byte[] Kek { get; } = TestData.Fill(32, 0x4A4F5345);

    /// <summary>A small token payload: a few claims, as an access token has.</summary>
    public const string Payload = "{\"sub\":\"benchmark-user\",\"scope\":\"read write\",\"iss\":\"https://issuer.cachedaes.bench\",\"exp\":1900000000}";

    /// <summary>jose-jwt's own settings, or the same with the CachedAes.JoseJwt package's <c>UseCachedAes()</c>.</summary>
    public static JwtSettings Settings(bool cached) => cached ? new JwtSettings().UseCachedAes() : new JwtSettings();
}

/// <summary>
/// A real client: jose-jwt 5.3.0's <c>JWT.Encode</c> and <c>JWT.Decode</c> of a compact JWE with A256KW key wrap and
/// <see cref="Enc"/> content encryption and a small payload, per token. Stock jose-jwt (baseline: its RFC 3394 wrap
/// makes an <c>Aes</c>, a transform and a <c>CryptoStream</c> per 16-byte step; its content encryption an <c>Aes</c> per
/// token) against the same settings after <c>UseCachedAes()</c>. Each setup checks that tokens made by either side
/// read on the other.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Enc), JweEncryption.A128CBC_HS256)]
[QuickSubset(nameof(Call), JoseCall.RoundTrip)]
public class JoseJwtToken
{
    private JwtSettings _settings = null!;
    private string _token = "";

    /// <summary>The content encryption: A128CBC-HS256 (a 32-byte content key) or A256CBC-HS512 (64 bytes).</summary>
    [Params(JweEncryption.A128CBC_HS256, JweEncryption.A256CBC_HS512)]
    public JweEncryption Enc { get; set; } = JweEncryption.A128CBC_HS256;

    /// <summary>Encode, decode, or both.</summary>
    [ParamsAllValues]
    public JoseCall Call { get; set; }

    /// <summary>Stock jose-jwt's settings.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(cached: false);

    /// <summary>The settings with UseCachedAes().</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(cached: true);

    /// <summary>Stock (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Run();

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => Run();

    private int Run() => Call switch
    {
        JoseCall.Encode => JWT.Encode(JoseJwtSetup.Payload, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, settings: _settings).Length,
        JoseCall.Decode => JWT.Decode(_token, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, _settings).Length,
        _ => JWT.Decode(
            JWT.Encode(JoseJwtSetup.Payload, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, settings: _settings),
            JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, _settings).Length,
    };

    private void Setup(bool cached)
    {
        _settings = JoseJwtSetup.Settings(cached);
        JwtSettings other = JoseJwtSetup.Settings(!cached);
        _token = JWT.Encode(JoseJwtSetup.Payload, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, settings: _settings);
        string fromOther = JWT.Encode(JoseJwtSetup.Payload, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, settings: other);
        bool crosses = JWT.Decode(_token, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, other) == JoseJwtSetup.Payload
            && JWT.Decode(fromOther, JoseJwtSetup.Kek, JweAlgorithm.A256KW, Enc, _settings) == JoseJwtSetup.Payload
            && (_settings.Jwa("A256KW") is CachedAesKeyWrapManagement) == cached;
        if (!crosses || Run() <= 0)
        {
            throw BenchmarkCheck.Failure($"A jose-jwt JWE (A256KW, {Enc}) made by one side was not read by the other.");
        }
    }
}

/// <summary>The key-management call measured by <see cref="JoseJwtKeyWrap"/>.</summary>
public enum JoseKeyWrapCall
{
    /// <summary><c>WrapKey</c>, as <c>JWT.Encode</c> calls it.</summary>
    WrapKey,

    /// <summary><c>Unwrap</c>, as <c>JWT.Decode</c> calls it.</summary>
    Unwrap,

    /// <summary><c>WrapKey</c> then <c>Unwrap</c>: the key wrap of one token encoded and decoded.</summary>
    WrapAndUnwrap,
}

/// <summary>
/// jose-jwt's A256KW key management alone, as <c>JWT.Encode</c> and <c>JWT.Decode</c> call it per token, on a content key
/// of <see cref="CekLength"/> bytes (32 for A128CBC-HS256, 64 for A256CBC-HS512). Stock <see cref="AesKeyWrapManagement"/>
/// (baseline) against <see cref="CachedAesKeyWrapManagement"/> (a new CachedAes per call, the whole wrap on its one ECB
/// handle). Each setup checks the wrapped key against stock's bytes and the unwrapped key against the original.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public class JoseJwtKeyWrap
{
    private static readonly Dictionary<string, object> NoHeader = [];
    private IKeyManagement _management = null!;
    private byte[] _cek = [];
    private byte[] _wrapped = [];

    /// <summary>Wrap, unwrap, or both.</summary>
    [ParamsAllValues]
    public JoseKeyWrapCall Call { get; set; }

    /// <summary>The content key's length in bytes.</summary>
    [Params(32, 64)]
    public int CekLength { get; set; }

    /// <summary>jose-jwt's own key management.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(new AesKeyWrapManagement(256));

    /// <summary>CachedAes's.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(new CachedAesKeyWrapManagement(256));

    /// <summary>Stock (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Run();

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => Run();

    private int Run() => Call switch
    {
        JoseKeyWrapCall.WrapKey => _management.WrapKey(_cek, JoseJwtSetup.Kek, NoHeader).Length,
        JoseKeyWrapCall.Unwrap => _management.Unwrap(_wrapped, JoseJwtSetup.Kek, CekLength * 8, NoHeader).Length,
        _ => _management.Unwrap(_management.WrapKey(_cek, JoseJwtSetup.Kek, NoHeader), JoseJwtSetup.Kek, CekLength * 8, NoHeader).Length,
    };

    private void Setup(IKeyManagement management)
    {
        _management = management;
        _cek = TestData.Fill(CekLength, CekLength + 3394);
        _wrapped = new AesKeyWrapManagement(256).WrapKey(_cek, JoseJwtSetup.Kek, NoHeader);
        bool right = management.WrapKey(_cek, JoseJwtSetup.Kek, NoHeader).AsSpan().SequenceEqual(_wrapped)
            && management.Unwrap(_wrapped, JoseJwtSetup.Kek, CekLength * 8, NoHeader).AsSpan().SequenceEqual(_cek);
        if (!right)
        {
            throw BenchmarkCheck.Failure($"{management.GetType().Name} did not wrap or unwrap {CekLength} bytes as jose-jwt does.");
        }
    }
}
