using System;
using System.Diagnostics;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// A key and everything made with it: the key bytes (in a <see cref="KeyMemory"/>), the native handles keyed from them
/// (<c>KeyEpoch.Slots.cs</c>, <c>KeyEpoch.Sweep.cs</c>) and the stock instance for CFB (<c>KeyEpoch.Stock.cs</c>).
/// </summary>
/// <remarks>
/// <para><b>Ownership</b> (the rules: docs/design-notes.md, "Native ownership"). The epoch owns its key memory and every
/// native handle waiting in its slots; it is a plain object, made per key, with no finalizer. A handle in use belongs to
/// the one call that leased it, which gives it back to its slot; a handle given up goes back to its backend (which may
/// pool it: handles are plain objects, never finalizable). If the epoch is dropped without being released, the sweep of
/// dropped keys finds it after the collection that found it unreachable, zeroes its key memory and gives back the
/// handles still in its slots (<see cref="DroppedKeys"/>).</para>
/// <para><b>Holders</b>: the instance whose current key it is, and every transform made with it. When the last holder
/// lets go, the epoch is released, for good: its handles go back to the backend as soon as no call uses them, and its
/// key memory is zeroed and recycled once no reader holds it. A transform dropped without <c>Dispose</c> never lets go;
/// its epoch is then found by the sweep of dropped keys once nothing references it.</para>
/// <para><b>Key changes</b>, and every other change of holders by the instance, happen under the instance's lifecycle
/// lock (<see cref="InstanceKey"/>), so at most one of them runs on an epoch at a time; only a transform's
/// <c>Dispose</c> lets go without it. While the instance is the only holder, a key change rewrites the epoch in place
/// (<see cref="TryRewrite"/>): the new key overwrites the old one, the key's <see cref="Version"/> moves on, and the idle
/// handles are re-keyed at once (or given back), so no schedule of the old key survives and nothing is allocated. Once a
/// transform holds the key, the key is frozen for it: a key change then makes a new epoch, moves the old one's idle
/// handles over (re-keyed) and retires the old one (<see cref="Retire"/>), which lives on for its transforms. Calls in
/// flight finish with the key they started with, as on stock: every handle records the key version it was keyed with,
/// and one of an older version is never used again.</para>
/// </remarks>
internal sealed partial class KeyEpoch
{
    // Bit 0: the instance holds the epoch. Bits 1 and up: how many transforms hold it. Zero once released, for good.
    // Changed only by interlocked operations. 64 bits: a transform dropped without Dispose never lets go, and a
    // long-lived key can see billions of those (CryptoStream never disposes its transform).
    private const long InstanceHolds = 1;
    private const long OneTransform = 2;
    private long _state;

    private readonly CipherBackend _backend;
    private readonly KeyMemory _memory;
    private readonly long _generation;

    /// <summary>An epoch holding a copy of <paramref name="key"/> (16, 24 or 32 bytes, validated by the caller).</summary>
    /// <param name="backend">Makes the epoch's handles.</param>
    /// <param name="key">The key.</param>
    /// <param name="heldByInstance">True for an instance's key; false for a transform's own (held by the transform).</param>
    public KeyEpoch(CipherBackend backend, ReadOnlySpan<byte> key, bool heldByInstance)
    {
        _backend = backend;
        _state = heldByInstance ? InstanceHolds : OneTransform;
        _memory = KeyMemory.Rent(this, out _generation);

        // Nobody else can reach the memory yet: the first write needs no reference.
        key.CopyTo(_memory.Bytes);
        _length = key.Length;
    }

    /// <summary>True once neither the instance nor any transform holds the epoch (for good).</summary>
    internal bool IsReleased => Volatile.Read(ref _state) == 0;

    /// <summary>An epoch with a new random key of <paramref name="keySizeBits"/>, held by the instance.</summary>
    [System.Runtime.CompilerServices.SkipLocalsInit] // the key buffer is filled before it is read
    public static KeyEpoch Generate(CipherBackend backend, int keySizeBits)
    {
        Span<byte> bytes = stackalloc byte[KeyMemory.Size];
        bytes = bytes[..(keySizeBits / 8)];
        RandomNumberGenerator.Fill(bytes);
        var epoch = new KeyEpoch(backend, bytes, heldByInstance: true);
        CryptographicOperations.ZeroMemory(bytes);
        return epoch;
    }

    /// <summary>
    /// Makes the caller (a transform being made) a holder. Called under the instance's lifecycle lock on its current
    /// epoch, which the instance holds, so the epoch cannot be released meanwhile.
    /// </summary>
    public void AddHolder()
    {
        long state = Interlocked.Add(ref _state, OneTransform);
        Debug.Assert((state & InstanceHolds) != 0);
    }

    /// <summary>A transform lets go (once); the last holder releases the epoch. Never called from a finalizer.</summary>
    public void RemoveHolder()
    {
        // A full fence: the release is visible before the sweep reads a single slot (KeyEpoch.Slots.cs, the ordering
        // argument).
        if (Interlocked.Add(ref _state, -OneTransform) == 0)
        {
            ReleaseAll(SweepPlan.Release);
        }
    }

    /// <summary>
    /// The instance's key change, under its lifecycle lock: when the instance alone holds the epoch, the new key
    /// overwrites the old one and the idle handles are re-keyed (or given back); false, changing nothing, when a
    /// transform holds the epoch (its key is frozen: the caller makes a new epoch instead).
    /// </summary>
    /// <remarks>
    /// Under the lock no other lifecycle operation runs and no transform can become a holder, so "the instance alone"
    /// cannot change under the rewrite; transforms let go without the lock, but none holds it. The rewrite still writes
    /// under a reference on the key memory (<see cref="WriteKey"/>), so the memory's lifetime never rests on that
    /// argument alone.
    /// </remarks>
    internal bool TryRewrite(ReadOnlySpan<byte> key)
    {
        if (Volatile.Read(ref _state) != InstanceHolds)
        {
            return false;
        }

        int version = WriteKey(key);

        // A full fence: the new version is visible to every processor before the sweep reads a single slot (the key
        // change's half of the ordering argument in KeyEpoch.Slots.cs). Idle handles now hold the old key's schedule:
        // each is re-keyed in place, or given back. A handle in use is given back when it returns (its version is old).
        Interlocked.MemoryBarrier();
        SweepUntilSettled(SweepPlan.RekeyTo(key, version));
        ReleaseIdleStock();
        return true;
    }

    /// <summary>
    /// The instance lets go of the epoch (a key change, Dispose, or a key size change; called once, under its lifecycle
    /// lock). Its idle handles move to <paramref name="next"/>, re-keyed with <paramref name="nextKey"/>, or go back to
    /// the backend; the epoch is released if no transform holds it.
    /// </summary>
    internal void Retire(KeyEpoch? next, ReadOnlySpan<byte> nextKey)
    {
        SweepPlan plan = next is null ? SweepPlan.Release : SweepPlan.MoveTo(next, nextKey);
        if (Interlocked.Add(ref _state, -InstanceHolds) == 0)
        {
            ReleaseAll(plan);
            return;
        }

        // Transforms still hold it: what no call is using moves on now; the rest stays cached for the transforms.
        SweepHandles(plan);
        ReleaseIdleStock();
    }

    /// <summary>
    /// The last holder let go: give up every handle as soon as no call uses it, and close the key memory (zeroed and
    /// recycled once no reader holds it), even if giving up a handle throws.
    /// </summary>
    private void ReleaseAll(scoped in SweepPlan plan)
    {
        try
        {
            SweepUntilSettled(plan);
            ReleaseIdleStock();
        }
        finally
        {
            _memory.Close(_generation);
        }
    }
}
