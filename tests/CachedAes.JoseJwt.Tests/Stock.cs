using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using Jose;

namespace CachedCryptography.JoseJwt.Tests;

/// <summary>The two "apps" the tests compare, and how an outcome (a result, or an exception) is written down.</summary>
internal static class Stock
{
    public static readonly (JweAlgorithm Alg, int KekBytes)[] KeyWraps =
        [(JweAlgorithm.A128KW, 16), (JweAlgorithm.A192KW, 24), (JweAlgorithm.A256KW, 32)];

    public static readonly (JweEncryption Enc, int CekBytes)[] ContentEncryptions =
        [(JweEncryption.A128CBC_HS256, 32), (JweEncryption.A192CBC_HS384, 48), (JweEncryption.A256CBC_HS512, 64)];

    /// <summary>Every key-wrap algorithm with every AES-CBC-HMAC algorithm: the nine pairs the package changes.</summary>
    public static IEnumerable<object[]> Pairs() =>
        from kw in KeyWraps from ce in ContentEncryptions select new object[] { kw.Alg, ce.Enc };

    /// <summary>Settings as jose-jwt makes them: the stock "app".</summary>
    public static JwtSettings StockSettings() => new();

    /// <summary>Settings after UseCachedAes(): the CachedAes "app".</summary>
    public static JwtSettings CachedSettings() => new JwtSettings().UseCachedAes();

    public static int KekBytes(JweAlgorithm alg) => KeyWraps.Single(k => k.Alg == alg).KekBytes;

    public static int CekBytes(JweEncryption enc) => ContentEncryptions.Single(c => c.Enc == enc).CekBytes;

    public static AesCbcHmacEncryption StockEncryption(int cekBytes) => cekBytes switch
    {
        32 => new AesCbcHmacEncryption(new HmacUsingSha("SHA256"), 256),
        48 => new AesCbcHmacEncryption(new HmacUsingSha("SHA384"), 384),
        64 => new AesCbcHmacEncryption(new HmacUsingSha("SHA512"), 512),
        _ => throw new ArgumentOutOfRangeException(nameof(cekBytes)),
    };

    public static byte[] Bytes(Random random, int length)
    {
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>
    /// What a call did, as text: its result's bytes, or its exception's type and message (and those of the exception
    /// inside it, which jose-jwt's EncryptionException carries). Two implementations agree when the texts are equal.
    /// </summary>
    public static string Outcome(Func<object?> call)
    {
        try
        {
            return "returned " + Describe(call());
        }
        catch (Exception e)
        {
            return Describe(e);
        }
    }

    public static string Describe(Exception e) =>
        $"threw {e.GetType().FullName}: {e.Message}" + (e.InnerException is null ? "" : $" (inner {e.InnerException.GetType().FullName})");

    private static string Describe(object? result) => result switch
    {
        null => "null",
        byte[] bytes => Convert.ToHexString(bytes),
        byte[][] parts => string.Join(" | ", parts.Select(Convert.ToHexString)),
        string text => text,
        _ => result.ToString() ?? "",
    };

    /// <summary>HMAC-SHA2 of AAD ‖ IV ‖ ciphertext ‖ AL, cut in half: RFC 7518 section 5.2.2.1, computed here to forge
    /// authentic tags over bad ciphertexts (only a key holder can), independent of the package's code.</summary>
    public static byte[] Tag(byte[] cek, byte[] aad, byte[] iv, byte[] cipherText)
    {
        int half = cek.Length / 2;
        byte[] al = BitConverter.GetBytes(8L * aad.Length);
        Array.Reverse(al);
        byte[] input = [.. aad, .. iv, .. cipherText, .. al];
        byte[] mac = half switch
        {
            16 => HMACSHA256.HashData(cek.AsSpan(0, half), input),
            24 => HMACSHA384.HashData(cek.AsSpan(0, half), input),
            _ => HMACSHA512.HashData(cek.AsSpan(0, half), input),
        };
        return mac[..half];
    }
}
