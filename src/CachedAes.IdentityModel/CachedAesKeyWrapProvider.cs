using System;
using System.Security.Cryptography;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>
/// IdentityModel's own RFC 3394 AES key wrap (<see cref="SymmetricKeyWrapProvider"/>: A128KW, A192KW, A256KW) running on
/// a <see cref="CachedAes"/>: only the AES instance it wraps with is replaced, so the wrapped keys, the checks and the
/// exceptions are IdentityModel's.
/// </summary>
/// <remarks>
/// IdentityModel's wrap makes one ECB transform from that instance and calls <c>TransformFinalBlock</c> on it for every
/// 64-bit step (6 × n steps for n 64-bit blocks of key), so each step runs on CachedAes's cached native handle. The
/// instance is made on first use and disposed with the provider. IdentityModel 8.x makes a provider for every token it
/// encrypts or decrypts and does not hand it back to be released, so the instance is then left to the garbage collector,
/// which releases its native memory (as it does with stock's).
/// </remarks>
public sealed class CachedAesKeyWrapProvider : SymmetricKeyWrapProvider
{
    private readonly Func<Aes> _createAes;

    /// <summary>Creates the provider.</summary>
    /// <param name="key">The key-encryption key: a <see cref="SymmetricSecurityKey"/> or an octet <see cref="JsonWebKey"/>
    /// of 128, 192 or 256 bits, as the algorithm says.</param>
    /// <param name="algorithm">A128KW, A192KW or A256KW.</param>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null or <paramref name="algorithm"/> is null or
    /// empty (IdentityModel's own check).</exception>
    /// <remarks>Like IdentityModel's, the key and its size are checked on first use, with IdentityModel's exceptions.</remarks>
    public CachedAesKeyWrapProvider(SecurityKey key, string algorithm)
        : this(key, algorithm, CachedAes.Create)
    {
    }

    /// <summary>Creates the provider with another maker of AES instances (the tests count them).</summary>
    internal CachedAesKeyWrapProvider(SecurityKey key, string algorithm, Func<Aes> createAes)
        : base(key, algorithm) => _createAes = createAes;

    /// <summary>
    /// The AES instance IdentityModel's key wrap runs on: a CachedAes in ECB mode without padding, keyed with the
    /// key-encryption key.
    /// </summary>
    /// <param name="key">The key-encryption key.</param>
    /// <param name="algorithm">The key-wrap algorithm.</param>
    /// <returns>The keyed instance; the provider disposes it.</returns>
    /// <remarks>
    /// The key, its type and its size for the algorithm are checked by IdentityModel's own
    /// <see cref="SymmetricKeyWrapProvider.GetSymmetricAlgorithm"/>, with IdentityModel's exceptions; the stock instance
    /// it returns only lends its checked key bytes and is disposed at once.
    /// </remarks>
    protected override SymmetricAlgorithm GetSymmetricAlgorithm(SecurityKey key, string algorithm)
    {
        using SymmetricAlgorithm checkedByIdentityModel = base.GetSymmetricAlgorithm(key, algorithm);
        byte[] keyBytes = checkedByIdentityModel.Key;
        Aes aes = _createAes();
        try
        {
            aes.Mode = CipherMode.ECB;
            aes.Padding = PaddingMode.None;
            aes.Key = keyBytes;
            return aes;
        }
        catch
        {
            aes.Dispose();
            throw;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(keyBytes);
        }
    }
}
