using System;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Core;

namespace CachedCryptography.Interop;

/// <summary>The two AES modes that get cached native handles.</summary>
internal enum BlockCipherMode
{
    Ecb,
    Cbc,
}

/// <summary>
/// One native AES context keyed for one mode and one direction, padding off: the only seam between the
/// platform-neutral code (one-shot buffer logic, padding, key wrap, handle ownership) and a platform's
/// crypto library. Each platform supplies a subclass and a <see cref="CipherBackend"/> that makes it.
/// </summary>
/// <remarks>
/// <para>One caller at a time holds a handle (<see cref="KeyedHandles"/> hands it out by an interlocked
/// exchange), so implementations need no locking and may keep per-message state such as a CBC chaining block.</para>
/// <para>Failures are reported by return value, never by an exception on the hot path (an exception handler
/// around a P/Invoke stops the JIT from inlining the call). After <see cref="TryTransform"/> returns false the
/// handle is faulted: the caller throws <see cref="CreateFailure"/> and the owner releases the handle.</para>
/// </remarks>
internal abstract class BlockCipher : KeyedResource
{
    /// <summary>The AES block size in bytes.</summary>
    protected const int BlockSize = 16;

    private readonly CipherBackend _backend;

    /// <summary>Creates the managed side of a handle made by <paramref name="backend"/>.</summary>
    protected BlockCipher(CipherBackend backend) => _backend = backend;

    /// <summary>ECB or CBC.</summary>
    public BlockCipherMode Mode { get; protected set; }

    /// <summary>True for an encryption handle, false for a decryption handle.</summary>
    public bool Encrypting { get; protected set; }

    /// <summary>
    /// ECB: transforms whole blocks, and <paramref name="iv"/> is empty. CBC: transforms one whole message that
    /// starts at <paramref name="iv"/> (16 bytes), whatever the handle did before.
    /// </summary>
    /// <param name="iv">Empty for ECB; the message's IV for CBC.</param>
    /// <param name="input">Whole blocks, at least one.</param>
    /// <param name="output">The same length as <paramref name="input"/>, and either the same memory (in place) or
    /// not overlapping it at all. In place, the implementation may modify the input before transforming it.</param>
    /// <returns>False when a native call failed; the handle is then faulted.</returns>
    public abstract bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output);

    /// <summary>
    /// The exception that describes why <see cref="TryTransform"/> returned false, with the native library's own
    /// error text where it has one. Call it right after the failure, on the same thread.
    /// </summary>
    public abstract CryptographicException CreateFailure();

    /// <summary>Gives the native state back to the backend; called once, by the holder.</summary>
    public sealed override void Release()
    {
        Key = null;
        _backend.OnReleased();
        ReleaseCore();
    }

    /// <summary>Frees the native state, or, where the backend pools contexts, cleanses and pools it.</summary>
    protected abstract void ReleaseCore();

    /// <summary>Marks the handle unusable after a native failure.</summary>
    protected void Fault() => IsFaulted = true;
}

/// <summary>A platform's way of making <see cref="BlockCipher"/> handles.</summary>
internal abstract class CipherBackend
{
    private int _live;
    private int _creations;

    /// <summary>Which backend this is, as reported by <see cref="CachedAes.Backend"/>.</summary>
    public abstract CachedAesBackend Kind { get; }

    /// <summary>
    /// Handles made by <see cref="Create"/> and not yet released: the native contexts that hold a key
    /// (a test seam; a pooled, cleansed context does not count).
    /// </summary>
    internal int LiveHandles => Volatile.Read(ref _live);

    /// <summary>How many handles <see cref="Create"/> has made (a test seam; never decreases).</summary>
    internal int Creations => Volatile.Read(ref _creations);

    /// <summary>Makes a handle keyed with <paramref name="key"/> (16, 24 or 32 bytes).</summary>
    /// <exception cref="CryptographicException">The native library could not make it.</exception>
    public BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        BlockCipher cipher = CreateCore(mode, encrypting, key);
        Interlocked.Increment(ref _live);
        Interlocked.Increment(ref _creations);
        return cipher;
    }

    internal void OnReleased() => Interlocked.Decrement(ref _live);

    /// <inheritdoc cref="Create"/>
    protected abstract BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key);
}
