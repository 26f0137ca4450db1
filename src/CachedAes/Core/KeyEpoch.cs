using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// A key and everything made with it: the key bytes, in unmanaged memory that the GC never moves or copies, and the
/// native handles keyed from them (<c>KeyEpoch.Handles.cs</c>, <c>KeyEpoch.Stock.cs</c>).
/// </summary>
/// <remarks>
/// <para><b>Ownership</b> (the rules: docs/design-notes.md, "Native ownership"). The epoch is the only finalizable object
/// that stands for a key: it owns the key memory and every native handle waiting in its slots. A handle in use belongs
/// to the one call that leased it, which gives it back to its slot; a handle given up goes back to its backend (which may
/// pool it: handles are plain objects, never finalizable, so a pool never holds anything the collector could finalize).
/// If the epoch is dropped without being released, its <see cref="ReleaseHandle"/> (a critical finalizer, run after every
/// normal one) zeroes and frees the key and frees whatever handles are still in its slots, directly, without pooling and
/// without touching any other finalizable object.</para>
/// <para><b>Holders</b> (<c>KeyEpoch.Holders.cs</c>): the instance whose current key it is, and every transform made
/// with it. When the last holder lets go, the epoch is released: its handles go back to the backend as soon as no call
/// uses them, and the key memory is zeroed and freed. A transform that is dropped without <c>Dispose</c> never lets go;
/// its epoch is then freed by the finalizer once nothing references it.</para>
/// <para><b>Key changes.</b> While the instance is the only holder, a key change rewrites the epoch in place
/// (<see cref="SetKey"/>): the new key overwrites the old one, the key's <see cref="Version"/> moves on, and the idle
/// handles are re-keyed at once (or given back, if no call used them since the last key change), so no schedule of the
/// old key survives the change and nothing is allocated. Once a transform holds the key, the key is frozen for it: a key
/// change then makes a new epoch, moves the old one's idle handles over (re-keyed) and retires the old one, which lives
/// on for its transforms. Calls in flight finish with the key they started with, as on stock: every handle records the
/// key version it was keyed with, and one of an older version is never used again (<c>KeyEpoch.Handles.cs</c>).</para>
/// <para><b>Reading the key.</b> Readers copy it under the version (<see cref="CopyKey"/>: a rewrite makes the version
/// odd while it writes, and a copy that saw it change is taken again), holding a reference (<see cref="TryAddRef"/>) so
/// that the memory stays allocated; a caller whose <see cref="TryAddRef"/> fails was overtaken by a key change and uses
/// the instance's new key instead.</para>
/// </remarks>
internal sealed unsafe partial class KeyEpoch : SafeHandle
{
    /// <summary>The size of the key memory: the longest AES key.</summary>
    internal const int MaxKeyLength = 32;

    // Bit 0: a key rewrite is in progress. Bit 1: the instance holds the epoch. Bits 2 and up: how many transforms hold
    // it. Zero (all but bit 0) once released. Read on every handle return (KeyEpoch.Handles.cs); changed only by
    // interlocked operations. 64 bits: a transform dropped without Dispose never lets go, and a long-lived key can see
    // billions of those (CryptoStream never disposes its transform).
    private const long Writing = 1;
    private const long InstanceHolds = 2;
    private const long OneTransform = 4;
    private long _state;

    // Even while the key is stable; odd while a rewrite writes it. Every handle records the version it was keyed with.
    // 32 bits: a handle of an older version is given up when it comes back, and every idle one at each key change, so a
    // version could only repeat for a call that stayed in flight across 2^31 key changes.
    private int _version;
    private int _length;

    /// <summary>An epoch holding a copy of <paramref name="key"/> (16, 24 or 32 bytes, validated by the caller).</summary>
    /// <param name="key">The key.</param>
    /// <param name="heldByInstance">True for an instance's key; false for a transform's own (held by the transform).</param>
    public KeyEpoch(ReadOnlySpan<byte> key, bool heldByInstance)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _state = heldByInstance ? InstanceHolds : OneTransform;
        _length = key.Length;
        void* memory = NativeMemory.Alloc(MaxKeyLength);
        SetHandle((IntPtr)memory);
        Span<byte> bytes = new(memory, MaxKeyLength);
        key.CopyTo(bytes);
        bytes[key.Length..].Clear();
    }

    /// <inheritdoc />
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>True once released: neither the instance nor any transform holds the epoch any more.</summary>
    public bool IsRetired => (Volatile.Read(ref _state) & ~Writing) == 0;

    /// <summary>The version of the key in the memory now (even), which handles keyed from it record.</summary>
    public int Version => Volatile.Read(ref _version);

    /// <summary>
    /// The key bytes, for a caller that knows no rewrite can happen: a transform (a holder; rewrites need the instance to
    /// be the only holder) holding a reference (<see cref="TryAddRef"/>) or otherwise knowing the epoch is alive.
    /// </summary>
    public ReadOnlySpan<byte> DangerousKey => new((void*)handle, _length);

    /// <summary>An epoch with a new random key of <paramref name="keySizeBits"/>, held by the instance.</summary>
    [SkipLocalsInit] // the key buffer is filled before it is read
    public static KeyEpoch Generate(int keySizeBits)
    {
        Span<byte> bytes = stackalloc byte[MaxKeyLength];
        bytes = bytes[..(keySizeBits / 8)];
        RandomNumberGenerator.Fill(bytes);
        var epoch = new KeyEpoch(bytes, heldByInstance: true);
        CryptographicOperations.ZeroMemory(bytes);
        return epoch;
    }

    /// <summary>
    /// The epoch in <paramref name="current"/>, or, when there is none yet, a generated one of
    /// <paramref name="keySizeBits"/> published there (a caller that loses the race takes the winner's).
    /// </summary>
    public static KeyEpoch CurrentOrGenerated(ref KeyEpoch? current, int keySizeBits) =>
        Volatile.Read(ref current) ?? PublishGenerated(ref current, keySizeBits);

    /// <summary>
    /// Makes <paramref name="key"/> the instance's key: in place when the instance alone holds its epoch, otherwise in a
    /// new epoch that takes over the old one's idle handles. No call that starts after this returns uses an older key.
    /// </summary>
    public static void SetKey(ref KeyEpoch? current, ReadOnlySpan<byte> key)
    {
        if (Volatile.Read(ref current) is { } epoch && epoch.TryRewrite(key))
        {
            return;
        }

        var next = new KeyEpoch(key, heldByInstance: true);
        Interlocked.Exchange(ref current, next)?.Retire(next, key);
    }

    /// <summary>
    /// Leaves the instance with no key (the next use generates one) and retires its epoch. Calls running on other threads
    /// are not disturbed.
    /// </summary>
    public static void Clear(ref KeyEpoch? current) => Interlocked.Exchange(ref current, null)?.Retire(null, default);

    /// <summary>Takes a reference that keeps the key memory allocated; false if the epoch is already released.</summary>
    public bool TryAddRef()
    {
        bool added = false;
        try
        {
            DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            // Released and disposed after the caller read it: the caller moves to the instance's new epoch.
        }

        return added;
    }

    /// <summary>
    /// Copies the key into <paramref name="destination"/> (at least <see cref="MaxKeyLength"/> bytes) as it is at one
    /// moment, never half rewritten; returns its length, and its version in <paramref name="version"/>. The caller holds
    /// a reference (<see cref="TryAddRef"/>) and zeroes the copy after use.
    /// </summary>
    public int CopyKey(Span<byte> destination, out int version)
    {
        var spinner = default(SpinWait);
        while (true)
        {
            version = Volatile.Read(ref _version);
            if ((version & 1) == 0)
            {
                int length = _length;
                new ReadOnlySpan<byte>((void*)handle, MaxKeyLength).CopyTo(destination);

                // The copy's loads must complete before the version is read again (a later load may not pass them).
                Volatile.ReadBarrier();
                if (Volatile.Read(ref _version) == version)
                {
                    return length;
                }
            }

            spinner.SpinOnce();
        }
    }

    /// <summary>
    /// The instance lets go of the epoch (a key change, Dispose, or a key size change; called once). Its idle handles
    /// move to <paramref name="next"/>, re-keyed with <paramref name="nextKey"/>, or go back to the backend; the epoch is
    /// released if no transform holds it.
    /// </summary>
    private void Retire(KeyEpoch? next, ReadOnlySpan<byte> nextKey)
    {
        long state = Interlocked.And(ref _state, ~InstanceHolds) & ~InstanceHolds;
        if ((state & ~Writing) == 0)
        {
            ReleaseAll(next, nextKey);
            return;
        }

        // Transforms still hold it: what no call is using moves on now; the rest stays cached for the transforms.
        SweepHandles(next is null ? HandleDisposal.Release : HandleDisposal.MoveOrRelease, next, nextKey, 0);
        ReleaseIdleStock();
    }

    /// <summary>The last holder let go: give up every handle as soon as no call uses it, and free the key.</summary>
    private void ReleaseAll(KeyEpoch? next, ReadOnlySpan<byte> nextKey)
    {
        ReleaseIdleHandles(next, nextKey);
        ReleaseIdleStock();
        Dispose();
    }

    // The instance alone holds the epoch: the new key overwrites the old one. False when a transform holds it (its key
    // is frozen), another rewrite is in progress, or the epoch is no longer the instance's.
    private bool TryRewrite(ReadOnlySpan<byte> key)
    {
        if (Interlocked.CompareExchange(ref _state, InstanceHolds | Writing, InstanceHolds) != InstanceHolds)
        {
            return false;
        }

        // Readers copy the key under the version: odd while the bytes change (a store barrier after it, so the mark is
        // visible before any byte is), even again after (a release, so every byte is visible before the new version is).
        int version = _version + 2;
        _version = version - 1;
        Volatile.WriteBarrier();
        Span<byte> memory = new((void*)handle, MaxKeyLength);
        key.CopyTo(memory);
        memory[key.Length..].Clear();
        _length = key.Length;
        Volatile.Write(ref _version, version);
        Interlocked.And(ref _state, ~Writing);

        // Idle handles now hold the old key's schedule: each is re-keyed in place, or given back if no call used it since
        // the last key change. A handle in use is given back when it returns (its version is old).
        SweepHandles(HandleDisposal.RekeyOrRelease, this, key, version);
        ReleaseIdleStock();
        return true;
    }

    private static KeyEpoch PublishGenerated(ref KeyEpoch? current, int keySizeBits)
    {
        KeyEpoch generated = Generate(keySizeBits);
        KeyEpoch? winner = Interlocked.CompareExchange(ref current, generated, null);
        if (winner is null)
        {
            return generated;
        }

        generated.Retire(null, default);
        return winner;
    }

    /// <summary>
    /// Zeroes and frees the key memory. An epoch released by its last holder (<see cref="ReleaseAll"/>, on a live thread)
    /// has already given up its handles, and a call returning one later gives it up itself. An epoch never released (an
    /// instance, or a transform made with it, dropped without <c>Dispose</c>) comes here from its finalizer with its
    /// cached handles, which are freed directly (<see cref="Seam.BlockCipher.FreeFromFinalizer"/>): nothing is pooled
    /// and no other finalizable object is touched.
    /// </summary>
    protected override bool ReleaseHandle()
    {
        CryptographicOperations.ZeroMemory(new Span<byte>((void*)handle, MaxKeyLength));
        NativeMemory.Free((void*)handle);
        if ((Volatile.Read(ref _state) & ~Writing) != 0)
        {
            SweepHandles(HandleDisposal.FreeFromFinalizer, null, default, 0);
        }

        return true;
    }
}
