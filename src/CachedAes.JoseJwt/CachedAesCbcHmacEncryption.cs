using System;
using System.Buffers.Binary;
using System.Security.Cryptography;
using Jose;

namespace CachedCryptography.JoseJwt;

/// <summary>
/// JWE content encryption by AES-CBC-HMAC-SHA2 (RFC 7518 section 5.2: A128CBC-HS256, A192CBC-HS384, A256CBC-HS512)
/// with the AES part on <see cref="CachedAes"/>, in place of jose-jwt's <see cref="AesCbcHmacEncryption"/>. For the same
/// content key, IV and data, the ciphertext and tag are byte for byte jose-jwt's, and bad input fails with jose-jwt's
/// exceptions.
/// </summary>
/// <remarks>
/// <para>
/// The content key of 2 × n bytes (n = 16, 24 or 32) is split into the MAC key (its first n bytes) and the AES key (the
/// next n). The IV is 16 random bytes; the ciphertext is AES-CBC with PKCS #7 padding; the tag is the first n bytes of
/// HMAC-SHA-256/384/512(MAC key, additional data ‖ IV ‖ ciphertext ‖ the additional data's length in bits as a 64-bit
/// big-endian number). Decryption checks the tag in constant time before it decrypts anything.
/// </para>
/// <para>
/// jose-jwt's own class makes a new <see cref="Aes"/>, a transform and a <see cref="CryptoStream"/> per token; this one
/// makes one <see cref="CachedAes"/> per call for its one-shot CBC call, and computes the HMAC with
/// <see cref="IncrementalHash"/>. The two halves of the content key are read in place, never copied into arrays of their
/// own; the CachedAes is disposed before the call returns, which zeroes its copy of the AES key. The content key itself
/// belongs to jose-jwt's caller and is left as it is.
/// </para>
/// <para>
/// Failures are jose-jwt's: a tag of the wrong length or value fails with <see cref="IntegrityException"/> and jose-jwt's
/// message, made here (a forged tag costs one HMAC, as with jose-jwt); an authentic ciphertext that does not decrypt with
/// <see cref="EncryptionException"/> and jose-jwt's message. Input jose-jwt rejects before it encrypts or checks a tag (a
/// content key of the wrong size, a null argument jose-jwt does not take) is handed to jose-jwt's own
/// <see cref="AesCbcHmacEncryption"/>, so the exception is jose-jwt's; so is an authentic token whose IV is not 16 bytes.
/// An authentic empty ciphertext decrypts to an empty plaintext, as with jose-jwt (its stream transform checks no padding
/// when there is no block).
/// One instance may be used from any number of threads.
/// </para>
/// </remarks>
public sealed class CachedAesCbcHmacEncryption : IJweAlgorithm
{
    // jose-jwt's messages (Jose.AesCbcHmacEncryption, 5.3.0); the tests compare each with the message jose-jwt throws.
    private const string TagMismatch = "Authentication tag do not match.";
    private const string EncryptFailed = "Unable to encrypt content.";
    private const string DecryptFailed = "Unable to decrypt content";

    private const int IvLength = 16;

    private readonly int _keyLengthBits;
    private readonly int _halfLength;
    private readonly HashAlgorithmName _hash;
    private readonly AesCbcHmacEncryption _stock;

    /// <summary>Creates the content encryption for one key size.</summary>
    /// <param name="keyLengthBits">The content key size in bits: 256 (A128CBC-HS256), 384 (A192CBC-HS384) or 512 (A256CBC-HS512).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="keyLengthBits"/> is not 256, 384 or 512.</exception>
    public CachedAesCbcHmacEncryption(int keyLengthBits)
    {
        (_hash, string jwsHash) = keyLengthBits switch
        {
            256 => (HashAlgorithmName.SHA256, "SHA256"),
            384 => (HashAlgorithmName.SHA384, "SHA384"),
            512 => (HashAlgorithmName.SHA512, "SHA512"),
            _ => throw new ArgumentOutOfRangeException(nameof(keyLengthBits), keyLengthBits, "AES-CBC-HMAC takes a 256, 384 or 512-bit content key."),
        };
        _keyLengthBits = keyLengthBits;
        _halfLength = keyLengthBits / 16;
        _stock = new AesCbcHmacEncryption(new HmacUsingSha(jwsHash), keyLengthBits);
    }

    /// <summary>The content key size in bits: 256, 384 or 512.</summary>
    public int KeySize => _keyLengthBits;

    /// <summary>Encrypts <paramref name="plainText"/> under <paramref name="cek"/> with a random IV.</summary>
    /// <param name="aad">The additional authenticated data (for a compact token, the ASCII of its encoded header).</param>
    /// <param name="plainText">The data to encrypt (may be empty).</param>
    /// <param name="cek">The content key, of exactly <see cref="KeySize"/> bits.</param>
    /// <returns>Three arrays: the IV, the ciphertext and the tag.</returns>
    /// <exception cref="ArgumentException"><paramref name="cek"/> is not of <see cref="KeySize"/> bits (jose-jwt's exception and message).</exception>
    /// <exception cref="EncryptionException">AES encryption failed.</exception>
    public byte[][] Encrypt(byte[] aad, byte[] plainText, byte[] cek)
    {
        if (!IsContentKey(cek) || aad is null || plainText is null)
        {
            // Input jose-jwt rejects: its own class throws its own exception for it.
            return _stock.Encrypt(aad!, plainText!, cek!);
        }

        return EncryptCore(aad, plainText, cek, RandomNumberGenerator.GetBytes(IvLength));
    }

    /// <summary>Encrypts with a given 16-byte IV (the vector tests use the IVs of published examples).</summary>
    internal byte[][] EncryptCore(byte[] aad, byte[] plainText, byte[] cek, byte[] iv)
    {
        byte[] cipherText;
        try
        {
            using var aes = new CachedAes();
            aes.SetKey(cek.AsSpan(_halfLength));
            cipherText = aes.EncryptCbc(plainText, iv, PaddingMode.PKCS7);
        }
        catch (CryptographicException e)
        {
            throw new EncryptionException(EncryptFailed, e);
        }

        byte[] tag = new byte[_halfLength];
        ComputeTag(cek.AsSpan(0, _halfLength), aad, iv, cipherText, tag);
        return [iv, cipherText, tag];
    }

    /// <summary>Checks the tag, then decrypts.</summary>
    /// <param name="aad">The additional authenticated data.</param>
    /// <param name="cek">The content key, of exactly <see cref="KeySize"/> bits.</param>
    /// <param name="iv">The IV.</param>
    /// <param name="cipherText">The ciphertext.</param>
    /// <param name="authTag">The tag.</param>
    /// <returns>The plaintext.</returns>
    /// <exception cref="IntegrityException">The tag is not the one for this key and data.</exception>
    /// <exception cref="EncryptionException">The tag is right but the ciphertext does not decrypt (its padding is wrong, or it is not whole blocks).</exception>
    /// <exception cref="ArgumentException"><paramref name="cek"/> is not of <see cref="KeySize"/> bits (jose-jwt's exception and message).</exception>
    public byte[] Decrypt(byte[] aad, byte[] cek, byte[] iv, byte[] cipherText, byte[] authTag)
    {
        if (!IsContentKey(cek) || aad is null)
        {
            // Input jose-jwt rejects before it checks the tag: its own class throws its own exception for it.
            return _stock.Decrypt(aad!, cek!, iv, cipherText, authTag);
        }

        // jose-jwt takes a null IV or ciphertext as empty in the MAC input; the tag decides first, as there.
        Span<byte> expected = stackalloc byte[_halfLength];
        ComputeTag(cek.AsSpan(0, _halfLength), aad, iv, cipherText, expected);
        if (authTag is null || !CryptographicOperations.FixedTimeEquals(expected, authTag))
        {
            throw new IntegrityException(TagMismatch);
        }

        if (iv is null || iv.Length != IvLength || cipherText is null)
        {
            // An authentic token that CachedAes's one-shot would take differently from jose-jwt's transform: jose-jwt's
            // own outcome. Only the holder of the key can make one.
            return _stock.Decrypt(aad, cek, iv!, cipherText!, authTag);
        }

        if (cipherText.Length == 0)
        {
            // jose-jwt's transform decrypts an authentic empty ciphertext (no block, so no padding to check) to an empty
            // plaintext, where a one-shot CBC call throws: jose-jwt's outcome. No encryptor makes one.
            return [];
        }

        try
        {
            using var aes = new CachedAes();
            aes.SetKey(cek.AsSpan(_halfLength));
            return aes.DecryptCbc(cipherText, iv, PaddingMode.PKCS7);
        }
        catch (CryptographicException e)
        {
            throw new EncryptionException(DecryptFailed, e);
        }
    }

    private bool IsContentKey(byte[]? cek) => cek is not null && cek.Length * 8L == _keyLengthBits;

    private void ComputeTag(ReadOnlySpan<byte> macKey, byte[] aad, byte[]? iv, byte[]? cipherText, Span<byte> tag)
    {
        using IncrementalHash hmac = IncrementalHash.CreateHMAC(_hash, macKey);
        hmac.AppendData(aad);
        hmac.AppendData(iv ?? []);
        hmac.AppendData(cipherText ?? []);
        Span<byte> lengthInBits = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(lengthInBits, 8L * aad.Length);
        hmac.AppendData(lengthInBits);
        Span<byte> mac = stackalloc byte[64];
        int written = hmac.GetHashAndReset(mac);
        mac[..(written / 2)].CopyTo(tag);
        CryptographicOperations.ZeroMemory(mac);
    }
}
