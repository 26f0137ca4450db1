using System;
using System.Security.Cryptography;

namespace CachedCryptography.Seam;

/// <summary>
/// One platform library's way of making <see cref="BlockCipher"/> handles. The process uses one, chosen and
/// self-tested once (see <c>Selection/</c>); tests give instances backends of their own.
/// </summary>
internal abstract class CipherBackend
{
    /// <summary>Which library this is, as reported by <see cref="CachedAes.Backend"/>.</summary>
    public abstract CachedAesBackend Kind { get; }

    /// <summary>Which library file and which variant of it, for diagnostics (for example <c>bcrypt.dll, opened AES providers</c>).</summary>
    public abstract string Description { get; }

    /// <summary>The bound on how many keys keep this backend's handles cached at once.</summary>
    public CachedKeyBudget CachedKeys { get; } = new();

    /// <summary>Makes a handle keyed with <paramref name="key"/> (16, 24 or 32 bytes).</summary>
    /// <exception cref="CryptographicException">The key is no AES key size, or the native library could not make it.</exception>
    public BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        if (!BlockCipher.IsKeySize(key.Length))
        {
            Errors.ThrowInvalidKeySize();
        }

        return CreateCore(mode, encrypting, key);
    }

    /// <summary><see cref="Create"/> with a key of 16, 24 or 32 bytes, checked.</summary>
    /// <exception cref="CryptographicException">The native library could not make it.</exception>
    protected abstract BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key);
}
