using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using Jose;

namespace CachedCryptography.JoseJwt;

/// <summary>
/// JWE key management by RFC 3394 AES key wrap (A128KW, A192KW, A256KW) on <see cref="CachedAes"/>, in place of
/// jose-jwt's <see cref="AesKeyWrapManagement"/>. The wrapped keys are byte for byte jose-jwt's, and bad input fails
/// with jose-jwt's exceptions.
/// </summary>
/// <remarks>
/// <para>
/// jose-jwt's own wrap (<see cref="AesKeyWrap"/>) makes a new <see cref="Aes"/>, an ECB transform and a
/// <see cref="System.Security.Cryptography.CryptoStream"/> for each of its 6 × n single-block steps (n is the number of
/// 64-bit blocks of the content key, so 24 steps for a 256-bit key). This class makes one <see cref="CachedAes"/> per
/// call, keyed with the key-encryption key, and runs the whole wrap or unwrap on its one cached ECB handle
/// (<c>EncryptKeyWrap</c> and <c>DecryptKeyWrap</c>); the instance is disposed before the call returns, which zeroes its
/// copy of the key. Nothing is kept between calls, and the key-encryption key handed in (the caller's array, or the
/// array a <see cref="Jwk"/> keeps) is only read.
/// </para>
/// <para>
/// The key is what jose-jwt takes: a <see cref="byte"/> array, or a <see cref="Jwk"/> whose <see cref="Jwk.Kty"/> is
/// <c>oct</c>, of exactly 128, 192 or 256 bits as the algorithm says. Input that jose-jwt rejects (another key type or
/// size, a null key or content key, a content key shorter than 128 bits or not a multiple of 64 bits) is handed to
/// jose-jwt's own <see cref="AesKeyWrapManagement"/>, so the exception is jose-jwt's, with its message. So is the one
/// shape jose-jwt accepts and RFC 3394 does not: a 128-bit wrapped key, which jose-jwt unwraps as a 64-bit key. A wrapped
/// key that does not unwrap under the key (a wrong key, or a tampered token) fails with jose-jwt's
/// <see cref="IntegrityException"/> and message, made here without a second unwrap.
/// </para>
/// <para>
/// Like jose-jwt's, <see cref="Unwrap"/> returns the content key whatever its length; jose-jwt's content encryption then
/// checks it. One instance may be used from any number of threads.
/// </para>
/// </remarks>
public sealed class CachedAesKeyWrapManagement : IKeyManagement
{
    // jose-jwt's message for a wrapped key that fails RFC 3394's integrity check (Jose.AesKeyWrap.Unwrap, 5.3.0); the
    // tests compare it with the message jose-jwt itself throws.
    private const string IntegrityFailed = "AesKeyWrap integrity check failed.";

    // RFC 3394: at least two 64-bit blocks to wrap, and the wrap adds one.
    private const int MinContentKeyLength = 16;
    private const int BlockLength = 8;

    private readonly int _kekLengthBits;
    private readonly AesKeyWrapManagement _stock;

    /// <summary>Creates the key management for one key size.</summary>
    /// <param name="kekLengthBits">The size of the key-encryption key in bits: 128 (A128KW), 192 (A192KW) or 256 (A256KW).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="kekLengthBits"/> is not 128, 192 or 256.</exception>
    public CachedAesKeyWrapManagement(int kekLengthBits)
    {
        if (kekLengthBits is not (128 or 192 or 256))
        {
            throw new ArgumentOutOfRangeException(nameof(kekLengthBits), kekLengthBits, "AES key wrap takes a 128, 192 or 256-bit key-encryption key.");
        }

        _kekLengthBits = kekLengthBits;
        _stock = new AesKeyWrapManagement(kekLengthBits);
    }

    /// <summary>The size of the key-encryption key in bits: 128, 192 or 256.</summary>
    public int KekLengthBits => _kekLengthBits;

    /// <summary>Generates a random content key and wraps it under <paramref name="key"/>.</summary>
    /// <param name="cekSizeBits">The size of the content key to generate, in bits (the content encryption's key size).</param>
    /// <param name="key">The key-encryption key: a <see cref="byte"/> array or an octet <see cref="Jwk"/>.</param>
    /// <param name="header">The JOSE header; not read or changed (as with jose-jwt's).</param>
    /// <returns>Two arrays: the content key, and its wrap.</returns>
    /// <exception cref="ArgumentException">The key is not a byte array or an octet JWK, or not of the algorithm's size (jose-jwt's exception and message).</exception>
    public byte[][] WrapNewKey(int cekSizeBits, object key, IDictionary<string, object> header)
    {
        byte[] cek = new byte[cekSizeBits / 8];
        RandomNumberGenerator.Fill(cek);
        try
        {
            return [cek, WrapKey(cek, key, header)];
        }
        catch
        {
            // The new content key was never handed out.
            CryptographicOperations.ZeroMemory(cek);
            throw;
        }
    }

    /// <summary>Wraps <paramref name="cek"/> under <paramref name="key"/> (RFC 3394, the default initial value).</summary>
    /// <param name="cek">The content key: at least 128 bits, a multiple of 64 bits.</param>
    /// <param name="key">The key-encryption key: a <see cref="byte"/> array or an octet <see cref="Jwk"/>.</param>
    /// <param name="header">The JOSE header; not read or changed (as with jose-jwt's).</param>
    /// <returns>The wrapped key, 8 bytes longer than <paramref name="cek"/>.</returns>
    /// <exception cref="ArgumentException">
    /// The key is not a byte array or an octet JWK, or not of the algorithm's size; or <paramref name="cek"/> is shorter
    /// than 128 bits or not a multiple of 64 bits (jose-jwt's exceptions and messages).
    /// </exception>
    public byte[] WrapKey(byte[] cek, object key, IDictionary<string, object> header)
    {
        byte[]? kek = KeyEncryptionKey(key);
        if (kek is null || !IsContentKeyLength(cek))
        {
            // Input jose-jwt rejects: its own management throws its own exception for it.
            return _stock.WrapKey(cek, key, header);
        }

        using var aes = new CachedAes();
        aes.SetKey(kek);
        return aes.EncryptKeyWrap(cek);
    }

    /// <summary>Unwraps <paramref name="encryptedCek"/> under <paramref name="key"/> and checks RFC 3394's initial value.</summary>
    /// <param name="encryptedCek">The wrapped content key.</param>
    /// <param name="key">The key-encryption key: a <see cref="byte"/> array or an octet <see cref="Jwk"/>.</param>
    /// <param name="cekSizeBits">The content key size the content encryption expects; not checked here, as with jose-jwt's.</param>
    /// <param name="header">The JOSE header; not read or changed (as with jose-jwt's).</param>
    /// <returns>The content key, 8 bytes shorter than <paramref name="encryptedCek"/>.</returns>
    /// <exception cref="IntegrityException">The wrapped key does not unwrap under this key: a wrong key or a changed wrap.</exception>
    /// <exception cref="ArgumentException">
    /// The key is not a byte array or an octet JWK, or not of the algorithm's size; or <paramref name="encryptedCek"/> is
    /// shorter than 128 bits or not a multiple of 64 bits (jose-jwt's exceptions and messages).
    /// </exception>
    public byte[] Unwrap(byte[] encryptedCek, object key, int cekSizeBits, IDictionary<string, object> header)
    {
        byte[]? kek = KeyEncryptionKey(key);
        if (kek is null || encryptedCek is null || !IsContentKeyLength(encryptedCek) || encryptedCek.Length < MinContentKeyLength + BlockLength)
        {
            // Input jose-jwt rejects, or a 128-bit wrap (RFC 3394 has none; jose-jwt unwraps it to 64 bits): jose-jwt's
            // own management gives its own outcome for it.
            return _stock.Unwrap(encryptedCek!, key, cekSizeBits, header);
        }

        using var aes = new CachedAes();
        aes.SetKey(kek);
        try
        {
            return aes.DecryptKeyWrap(encryptedCek);
        }
        catch (CryptographicException)
        {
            // RFC 3394's integrity check failed (CachedAes has cleared what it unwrapped).
            throw new IntegrityException(IntegrityFailed);
        }
    }

    /// <summary>
    /// The key-encryption key's bytes when <paramref name="key"/> is one that jose-jwt's management takes (a byte array, or
    /// an octet JWK) and has the algorithm's size; otherwise null. The array is the caller's or the JWK's own: read only.
    /// </summary>
    private byte[]? KeyEncryptionKey(object key)
    {
        byte[]? bytes = key switch
        {
            byte[] array => array,
            Jwk { Kty: Jwk.KeyTypes.OCT } jwk => jwk.OctKey(),
            _ => null,
        };
        return bytes is not null && bytes.Length * 8L == _kekLengthBits ? bytes : null;
    }

    private static bool IsContentKeyLength(byte[]? data) =>
        data is not null && data.Length >= MinContentKeyLength && data.Length % BlockLength == 0;
}
