// CachedAes for Microsoft.IdentityModel JWE (A128KW/A192KW/A256KW key wrap, A128CBC-HS256/A192CBC-HS384/A256CBC-HS512
// content encryption), through IdentityModel's own extension point CryptoProviderFactory.CustomCryptoProvider.
// This file is what a user copies into an application: it depends only on Microsoft.IdentityModel.Tokens and CachedAes.
// Turn it on with one line, for every key that uses the default factory:
//
//     CryptoProviderFactory.Default.CustomCryptoProvider = new CachedAesCryptoProvider();
//
// or for some keys only: a factory of its own, set on the key-encryption key (making tokens) and on
// TokenValidationParameters.CryptoProviderFactory (reading them):
//
//     var factory = new CryptoProviderFactory { CustomCryptoProvider = new CachedAesCryptoProvider() };
//     kek.CryptoProviderFactory = factory;
//     validationParameters.CryptoProviderFactory = factory;
using System;
using System.Buffers.Binary;
using System.Security.Cryptography;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>
/// Hands IdentityModel CachedAes-backed providers for AES key wrap (A128KW, A192KW, A256KW) and AES-CBC-HMAC content
/// encryption (A128CBC-HS256, A192CBC-HS384, A256CBC-HS512); everything else stays IdentityModel's own.
/// </summary>
public sealed class CachedAesCryptoProvider : ICryptoProvider
{
    private readonly Func<Aes> _createAes;

    /// <summary>Creates the provider.</summary>
    /// <param name="createAes">Makes the AES instances (default <see cref="CachedAes.Create"/>; tests count them).</param>
    public CachedAesCryptoProvider(Func<Aes>? createAes = null) => _createAes = createAes ?? CachedAes.Create;

    private static bool IsKeyWrap(string algorithm) =>
        algorithm is SecurityAlgorithms.Aes128KW or SecurityAlgorithms.Aes192KW or SecurityAlgorithms.Aes256KW;

    private static bool IsCbcHmac(string algorithm) =>
        algorithm is SecurityAlgorithms.Aes128CbcHmacSha256 or SecurityAlgorithms.Aes192CbcHmacSha384 or SecurityAlgorithms.Aes256CbcHmacSha512;

    /// <inheritdoc />
    /// <remarks>
    /// IdentityModel asks with (key, willUnwrap) for a key-wrap provider, with (key) for a content-encryption provider, and
    /// with nothing when releasing a key-wrap provider. The (key, bool) shape is also how it asks for signature providers,
    /// so the algorithm name decides.
    /// </remarks>
    public bool IsSupportedAlgorithm(string algorithm, params object[] args) => args switch
    {
        [SecurityKey, bool] => IsKeyWrap(algorithm),
        [SymmetricSecurityKey] => IsCbcHmac(algorithm),
        [] => IsKeyWrap(algorithm),
        _ => false,
    };

    /// <inheritdoc />
    public object Create(string algorithm, params object[] args) => IsKeyWrap(algorithm)
        ? new CachedAesKeyWrapProvider((SecurityKey)args[0], algorithm, _createAes)
        : new CachedAesCbcHmacProvider((SecurityKey)args[0], algorithm, _createAes);

    /// <inheritdoc />
    public void Release(object cryptoInstance) => (cryptoInstance as IDisposable)?.Dispose();
}

/// <summary>
/// IdentityModel's own RFC 3394 key wrap (<see cref="SymmetricKeyWrapProvider"/>) running on a CachedAes: only the
/// AES instance it makes is replaced. Its wrap then makes one ECB transform and calls TransformFinalBlock for each
/// 64-bit step.
/// </summary>
public sealed class CachedAesKeyWrapProvider : SymmetricKeyWrapProvider
{
    private readonly Func<Aes> _createAes;

    /// <summary>Creates the provider.</summary>
    /// <param name="key">The key-encryption key.</param>
    /// <param name="algorithm">A128KW, A192KW or A256KW.</param>
    /// <param name="createAes">Makes the AES instance.</param>
    public CachedAesKeyWrapProvider(SecurityKey key, string algorithm, Func<Aes> createAes)
        : base(key, algorithm) => _createAes = createAes;

    /// <inheritdoc />
    protected override SymmetricAlgorithm GetSymmetricAlgorithm(SecurityKey key, string algorithm)
    {
        // The base checks the key (type, size for the algorithm) with IdentityModel's own exceptions; its instance only
        // lends its key bytes.
        using SymmetricAlgorithm checkedByIdentityModel = base.GetSymmetricAlgorithm(key, algorithm);
        Aes aes = _createAes();
        aes.Mode = CipherMode.ECB;
        aes.Padding = PaddingMode.None;
        aes.Key = checkedByIdentityModel.Key;
        return aes;
    }
}

/// <summary>
/// AES-CBC-HMAC-SHA2 (RFC 7518 section 5.2) with the AES part on CachedAes. IdentityModel's own provider calls the static
/// <see cref="Aes.Create()"/>, which nothing redirects, so this one does the whole algorithm: MAC key = first half of the
/// content key, AES key = second half; tag = the first half of HMAC(AAD ‖ IV ‖ ciphertext ‖ AAD length in bits, 64-bit
/// big-endian), compared in constant time before anything is decrypted.
/// </summary>
public sealed class CachedAesCbcHmacProvider : AuthenticatedEncryptionProvider
{
    private readonly Func<Aes> _createAes;
    private readonly byte[] _macKey;
    private readonly byte[] _aesKey;

    /// <summary>Creates the provider.</summary>
    /// <param name="key">The content-encryption key (32, 48 or 64 bytes).</param>
    /// <param name="algorithm">A128CBC-HS256, A192CBC-HS384 or A256CBC-HS512.</param>
    /// <param name="createAes">Makes the AES instances.</param>
    public CachedAesCbcHmacProvider(SecurityKey key, string algorithm, Func<Aes> createAes)
        : base(key, algorithm)
    {
        ValidateKeySize(key, algorithm);
        _createAes = createAes;
        int half = algorithm switch
        {
            SecurityAlgorithms.Aes128CbcHmacSha256 => 16,
            SecurityAlgorithms.Aes192CbcHmacSha384 => 24,
            _ => 32,
        };
        byte[] keyBytes = GetKeyBytes(key);
        _macKey = keyBytes.AsSpan(0, half).ToArray();
        _aesKey = keyBytes.AsSpan(half, half).ToArray();
    }

    /// <inheritdoc />
    public override AuthenticatedEncryptionResult Encrypt(byte[] plaintext, byte[] authenticatedData, byte[] iv)
    {
        ThrowIfNullOrEmpty(plaintext, nameof(plaintext));
        ThrowIfNullOrEmpty(authenticatedData, nameof(authenticatedData));
        iv ??= RandomNumberGenerator.GetBytes(16);
        byte[] ciphertext;
        try
        {
            using Aes aes = _createAes();
            aes.Key = _aesKey;
            ciphertext = aes.EncryptCbc(plaintext, iv);
        }
        catch (CryptographicException e)
        {
            throw new SecurityTokenEncryptionFailedException("AES-CBC encryption failed.", e);
        }

        return new AuthenticatedEncryptionResult(Key, ciphertext, iv, Tag(authenticatedData, iv, ciphertext));
    }

    /// <inheritdoc />
    public override byte[] Decrypt(byte[] ciphertext, byte[] authenticatedData, byte[] iv, byte[] authenticationTag)
    {
        ThrowIfNullOrEmpty(ciphertext, nameof(ciphertext));
        ThrowIfNullOrEmpty(authenticatedData, nameof(authenticatedData));
        ThrowIfNullOrEmpty(iv, nameof(iv));
        ThrowIfNullOrEmpty(authenticationTag, nameof(authenticationTag));
        if (!CryptographicOperations.FixedTimeEquals(Tag(authenticatedData, iv, ciphertext), authenticationTag))
        {
            throw new SecurityTokenDecryptionFailedException("The authentication tag does not match.");
        }

        try
        {
            using Aes aes = _createAes();
            aes.Key = _aesKey;
            return aes.DecryptCbc(ciphertext, iv);
        }
        catch (CryptographicException e)
        {
            throw new SecurityTokenDecryptionFailedException("AES-CBC decryption failed.", e);
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            CryptographicOperations.ZeroMemory(_macKey);
            CryptographicOperations.ZeroMemory(_aesKey);
        }

        base.Dispose(disposing);
    }

    private byte[] Tag(byte[] authenticatedData, byte[] iv, byte[] ciphertext)
    {
        using IncrementalHash hmac = IncrementalHash.CreateHMAC(
            _macKey.Length switch { 16 => HashAlgorithmName.SHA256, 24 => HashAlgorithmName.SHA384, _ => HashAlgorithmName.SHA512 }, _macKey);
        hmac.AppendData(authenticatedData);
        hmac.AppendData(iv);
        hmac.AppendData(ciphertext);
        Span<byte> bits = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(bits, 8L * authenticatedData.Length);
        hmac.AppendData(bits);
        return hmac.GetHashAndReset().AsSpan(0, _macKey.Length).ToArray();
    }

    private static void ThrowIfNullOrEmpty(byte[]? value, string name)
    {
        if (value is null || value.Length == 0)
        {
            throw new ArgumentNullException(name);
        }
    }
}
