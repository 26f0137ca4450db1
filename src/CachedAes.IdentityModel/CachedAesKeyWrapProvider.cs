using System;
using System.Security.Cryptography;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>
/// IdentityModel's RFC 3394 AES key wrap (<see cref="SymmetricKeyWrapProvider"/>: A128KW, A192KW, A256KW) on
/// <see cref="CachedAes"/>: the wrapped keys are byte for byte IdentityModel's, and every check and exception is
/// IdentityModel's own.
/// </summary>
/// <remarks>
/// <para>
/// <b>The common case</b> (a <see cref="SymmetricSecurityKey"/> of the algorithm's size, a content key of at least two
/// 64-bit blocks, a provider not disposed): each <see cref="WrapKey"/> or <see cref="UnwrapKey"/> makes one
/// <see cref="CachedAes"/>, keys it with a copy of the key-encryption key, runs the whole wrap or unwrap on its cached ECB
/// handle (<c>EncryptKeyWrap</c>, <c>DecryptKeyWrap</c>) and disposes it before returning, which zeroes its key and hands
/// its native handle back to the process's pool; the copy of the key is zeroed too. IdentityModel's own wrap instead
/// calls <c>TransformFinalBlock</c> once for every 64-bit step (6 × n steps for n 64-bit blocks), allocating on each.
/// </para>
/// <para>
/// Nothing is kept between calls. That matters because IdentityModel 8.x makes a provider for every token it encrypts
/// or decrypts and never hands it back: a provider that kept a keyed instance would leave one never-disposed instance
/// per token for the garbage collector to find, with its native handle held until then.
/// </para>
/// <para>
/// <b>Everything else</b> is IdentityModel's own code (<see cref="SymmetricKeyWrapProvider"/>'s
/// <c>WrapKey</c>/<c>UnwrapKey</c>): other key types (an octet <see cref="JsonWebKey"/>, a subclass of
/// <see cref="SymmetricSecurityKey"/>), keys of the wrong size, other algorithm names, input it rejects, and a disposed
/// provider, so the exceptions are IdentityModel's. Its wrap then runs on a <see cref="CachedAes"/> too
/// (<see cref="GetSymmetricAlgorithm"/>). A wrapped key that does not unwrap under the key (a wrong key or a tampered
/// token) is handed to IdentityModel's <c>UnwrapKey</c> as well, which fails with its own exception and message.
/// </para>
/// </remarks>
public sealed class CachedAesKeyWrapProvider : SymmetricKeyWrapProvider
{
    // RFC 3394: at least two 64-bit blocks to wrap, and the wrap adds one.
    private const int SemiblockLength = 8;
    private const int MinKeyDataLength = 2 * SemiblockLength;

    private readonly Func<CachedAes> _createAes;
    private volatile bool _disposed;

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
    internal CachedAesKeyWrapProvider(SecurityKey key, string algorithm, Func<CachedAes> createAes)
        : base(key, algorithm) => _createAes = createAes;

    /// <summary>Wraps <paramref name="keyBytes"/> under the provider's key (RFC 3394, the default initial value).</summary>
    /// <param name="keyBytes">The key to wrap.</param>
    /// <returns>The wrapped key, 8 bytes longer than <paramref name="keyBytes"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="keyBytes"/> is null or empty (IdentityModel's exception).</exception>
    /// <exception cref="ArgumentException"><paramref name="keyBytes"/> is not a multiple of 64 bits (IdentityModel's exception).</exception>
    /// <exception cref="ObjectDisposedException">The provider was disposed (IdentityModel's exception).</exception>
    /// <exception cref="SecurityTokenKeyWrapException">The key or algorithm is not usable (IdentityModel's exception).</exception>
    public override byte[] WrapKey(byte[] keyBytes)
    {
        if (!IsKeyData(keyBytes, minLength: MinKeyDataLength) || KeyEncryptionKey() is not { } kek)
        {
            return base.WrapKey(keyBytes);
        }

        try
        {
            using CachedAes aes = _createAes();
            aes.SetKey(kek);
            return aes.EncryptKeyWrap(keyBytes);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(kek);
        }
    }

    /// <summary>Unwraps <paramref name="keyBytes"/> under the provider's key and checks RFC 3394's initial value.</summary>
    /// <param name="keyBytes">The wrapped key.</param>
    /// <returns>The key, 8 bytes shorter than <paramref name="keyBytes"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="keyBytes"/> is null or empty (IdentityModel's exception).</exception>
    /// <exception cref="ArgumentException"><paramref name="keyBytes"/> is not a multiple of 64 bits (IdentityModel's exception).</exception>
    /// <exception cref="ObjectDisposedException">The provider was disposed (IdentityModel's exception).</exception>
    /// <exception cref="SecurityTokenKeyWrapException">The wrapped key does not unwrap under this key, or the key or
    /// algorithm is not usable (IdentityModel's exception and message).</exception>
    public override byte[] UnwrapKey(byte[] keyBytes)
    {
        if (!IsKeyData(keyBytes, minLength: MinKeyDataLength + SemiblockLength) || KeyEncryptionKey() is not { } kek)
        {
            return base.UnwrapKey(keyBytes);
        }

        try
        {
            using CachedAes aes = _createAes();
            aes.SetKey(kek);
            return aes.DecryptKeyWrap(keyBytes);
        }
        catch (CryptographicException)
        {
            // RFC 3394's integrity check failed (CachedAes zeroed what it unwrapped): IdentityModel's own unwrap fails the
            // same way and throws its exception, with its message.
        }
        finally
        {
            CryptographicOperations.ZeroMemory(kek);
        }

        return base.UnwrapKey(keyBytes);
    }

    /// <summary>
    /// The AES instance IdentityModel's own wrap code runs on, for the input <see cref="WrapKey"/> and
    /// <see cref="UnwrapKey"/> hand to it: a CachedAes in ECB mode without padding, keyed with the key-encryption key.
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
        CachedAes aes = _createAes();
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

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _disposed = true;
        }

        base.Dispose(disposing);
    }

    // Input IdentityModel accepts and RFC 3394 takes: at least `minLength` bytes, whole 64-bit blocks.
    private bool IsKeyData(byte[]? data, int minLength) =>
        !_disposed && data is not null && data.Length >= minLength && data.Length % SemiblockLength == 0;

    /// <summary>
    /// A copy of the key-encryption key when it is one IdentityModel's own provider accepts as it is: a
    /// <see cref="SymmetricSecurityKey"/> itself (whose <c>Key</c> returns a new copy each time, so the caller zeroes it),
    /// of the size the algorithm says. Otherwise null, and the caller hands the call to IdentityModel's code.
    /// </summary>
    private byte[]? KeyEncryptionKey()
    {
        int size = Algorithm switch
        {
            SecurityAlgorithms.Aes128KW => 16,
            SecurityAlgorithms.Aes192KW => 24,
            SecurityAlgorithms.Aes256KW => 32,
            _ => 0,
        };
        if (size == 0 || Key is not SymmetricSecurityKey symmetric || symmetric.GetType() != typeof(SymmetricSecurityKey))
        {
            return null;
        }

        byte[] bytes = symmetric.Key;
        if (bytes.Length == size)
        {
            return bytes;
        }

        CryptographicOperations.ZeroMemory(bytes);
        return null;
    }
}
