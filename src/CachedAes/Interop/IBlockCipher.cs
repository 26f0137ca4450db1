using System;

namespace CachedCryptography.Interop;

/// <summary>The two AES modes that get a cached native handle.</summary>
internal enum BlockCipherMode
{
    Ecb,
    Cbc,
}

/// <summary>
/// One native AES handle, keyed once, for one mode and one direction, with the platform's padding off.
/// It is the only seam between the platform-neutral code (one-shot buffer logic, padding, key wrap,
/// the concurrency guard) and a platform's crypto library.
/// </summary>
/// <remarks>
/// Callers hold the owning <see cref="CachedAes"/>'s concurrency guard for every call, so
/// implementations need no locking of their own. Implementations throw
/// <see cref="System.Security.Cryptography.CryptographicException"/> for every native failure
/// (including use after <see cref="IDisposable.Dispose"/>) and then report <see cref="IsFaulted"/>,
/// after which the cache drops the handle and the next call creates a new one.
/// </remarks>
internal interface IBlockCipher : IDisposable
{
    /// <summary>
    /// Transforms <paramref name="input"/>, a whole number of 16-byte blocks, into
    /// <paramref name="output"/> (at least as long). The two spans are either the same memory
    /// (in place) or do not overlap at all. CBC continues the chain from the previous call or from
    /// the IV given to <see cref="Reset"/>.
    /// </summary>
    void Transform(ReadOnlySpan<byte> input, Span<byte> output);

    /// <summary>Starts a new CBC message at <paramref name="iv"/> (16 bytes). Never called for ECB.</summary>
    void Reset(ReadOnlySpan<byte> iv);

    /// <summary>True once a native call has failed or the handle was disposed: it must not be reused.</summary>
    bool IsFaulted { get; }
}

/// <summary>A platform's way of making <see cref="IBlockCipher"/> handles.</summary>
internal abstract class CipherBackend
{
    /// <summary>Which backend this is, as reported by <see cref="CachedAes.Backend"/>.</summary>
    public abstract CachedAesBackend Kind { get; }

    /// <summary>
    /// The longest CBC message, in blocks, that is cheaper to run as ECB plus a managed XOR chain
    /// than as a native CBC handle restarted at a new IV. Zero means always use the CBC handle.
    /// </summary>
    public virtual int ShortCbcEncryptBlocks => 0;

    /// <inheritdoc cref="ShortCbcEncryptBlocks"/>
    public virtual int ShortCbcDecryptBlocks => 0;

    /// <summary>Creates a handle keyed with <paramref name="key"/> (16, 24 or 32 bytes).</summary>
    public abstract IBlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key);
}
