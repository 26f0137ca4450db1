using System;
using System.Security.Cryptography;

namespace CachedCryptography.Seam;

/// <summary>
/// One native AES context keyed for one mode and one direction, padding off: the only seam between the
/// platform-neutral code (one-shot buffer logic, padding, key wrap, handle ownership) and a platform's crypto library.
/// Each platform supplies a subclass and a <see cref="CipherBackend"/> that makes it.
/// </summary>
/// <remarks>
/// <para>One caller at a time holds a handle (the owner hands it out with a compare-exchange on its slot), so
/// implementations need no locking and may keep per-message state such as a CBC chaining block.</para>
/// <para>A handle is a plain object, never finalizable itself: a backend may pool it (<see cref="Release"/>) without the
/// collector ever finalizing a pooled object. It is owned by the key epoch whose slot holds it, by the call that leased
/// it, or by its backend's pool.</para>
/// <para>Failures are reported by return value, never by an exception on the hot path: an exception handler around a
/// P/Invoke stops the JIT from inlining the call. After <see cref="TryTransform"/> returns false the handle is faulted:
/// the caller throws <see cref="CreateFailure"/> and the owner releases the handle instead of reusing it. A subclass
/// records what failed with <see cref="Fail"/>.</para>
/// <para>Keys reach a handle already checked: <see cref="CipherBackend.Create"/> and <see cref="TryRekey"/> accept only the
/// AES key sizes (<see cref="IsKeySize"/>) before a subclass sees the key.</para>
/// </remarks>
internal abstract class BlockCipher
{
    /// <summary>The AES block size in bytes: the unit of every transform, padding and key-wrap step.</summary>
    public const int BlockSize = 16;

    // What failed, recorded by Fail: the whole message, or what a subclass's CreateFailure builds one from.
    private string? _failure;

    /// <summary>ECB or CBC.</summary>
    public BlockCipherMode Mode { get; protected set; }

    /// <summary>True for an encryption handle, false for a decryption handle.</summary>
    public bool Encrypting { get; protected set; }

    /// <summary>True once a native call has failed: the handle's state is unknown, so it is released, never reused.</summary>
    public bool IsFaulted { get; private set; }

    /// <summary>
    /// The version of its key epoch's key that this handle was keyed with (set by the epoch; see <c>Ownership/KeyEpoch.cs</c>):
    /// a handle of an older version is never used again.
    /// </summary>
    public int KeyVersion { get; set; }

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
    /// error text where it has one. Call it right after the failure, on the same thread. This default makes it from
    /// what <see cref="Fail"/> recorded.
    /// </summary>
    public virtual CryptographicException CreateFailure() =>
        _failure is null ? Errors.NoFailureRecorded(GetType().Name) : new CryptographicException(_failure);

    /// <summary>
    /// Frees the native state, or, where the backend pools contexts, cleanses (no key survives) and pools it. Called
    /// once, by the holder (for an epoch dropped without being released, by the sweep of dropped keys), on a live object,
    /// never from a finalizer; the object is not used afterwards.
    /// </summary>
    public abstract void Release();

    /// <summary>
    /// Re-keys the handle in place with <paramref name="key"/>, for the same mode and direction, so that a key change costs
    /// no new native object; the old key's schedule is overwritten. Returns false when <paramref name="key"/> is no AES key
    /// size (the handle is then unchanged), when the backend cannot re-key in place, or when the native call failed (the
    /// handle is then faulted); the caller then releases the handle and makes a new one.
    /// </summary>
    public bool TryRekey(ReadOnlySpan<byte> key) => IsKeySize(key.Length) && TryRekeyCore(key);

    /// <summary>
    /// <see cref="TryRekey"/> with a key of 16, 24 or 32 bytes. This default cannot re-key: a backend that can overrides it,
    /// and reports a native failure with <see cref="Fail"/>.
    /// </summary>
    protected virtual bool TryRekeyCore(ReadOnlySpan<byte> key) => false;

    /// <summary>Whether <paramref name="length"/> bytes is an AES key size (16, 24 or 32): the one key size check.</summary>
    public static bool IsKeySize(int length) => length is 16 or 24 or 32;

    /// <summary>Marks the handle unusable after a native failure whose description is another object's (a wrapped handle's).</summary>
    protected void Fault() => IsFaulted = true;

    /// <summary>
    /// Records <paramref name="failure"/> (the whole message, or what an override of <see cref="CreateFailure"/> builds
    /// one from) and marks the handle unusable. Returns false, so that a failed call can end with <c>return Fail(...)</c>.
    /// </summary>
    protected bool Fail(string failure)
    {
        _failure = failure;
        IsFaulted = true;
        return false;
    }

    /// <summary>What <see cref="Fail"/> recorded, or null.</summary>
    protected string? RecordedFailure => _failure;
}
