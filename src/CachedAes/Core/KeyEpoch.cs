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
/// <para><b>Key changes</b>, and every other change of holders by the instance, happen under the instance's lifecycle
/// lock (<see cref="InstanceKey"/>), so at most one of them runs on an epoch at a time; only a transform's
/// <c>Dispose</c> lets go without it. While the instance is the only holder, a key change rewrites the epoch in place
/// (<see cref="TryRewrite"/>): the new key overwrites the old one, the key's <see cref="Version"/> moves on, and the idle
/// handles are re-keyed at once (or given back, if no call used them since the last key change), so no schedule of the
/// old key survives the change and nothing is allocated. Once a transform holds the key, the key is frozen for it: a key
/// change then makes a new epoch, moves the old one's idle handles over (re-keyed) and retires the old one
/// (<see cref="Retire"/>), which lives on for its transforms. Calls in flight finish with the key they started with, as
/// on stock: every handle records the key version it was keyed with, and one of an older version is never used
/// again (<c>KeyEpoch.Handles.cs</c>).</para>
/// <para><b>Reading and writing the key memory.</b> Every access holds a reference on it (<see cref="TryAddRef"/>, or
/// <see cref="SafeHandle.DangerousAddRef"/> in a rewrite), so the memory stays allocated for the whole access whatever
/// another thread releases meanwhile: a release only marks the handle closed, and the memory is freed when the last
/// reference goes. Readers copy the key under the version (<see cref="CopyKey"/>: a rewrite makes the version odd while
/// it writes, and a copy that saw it change is taken again); a caller whose <see cref="TryAddRef"/> fails was overtaken
/// by a release and uses the instance's new key instead.</para>
/// </remarks>
internal sealed unsafe partial class KeyEpoch : SafeHandle
{
    /// <summary>The size of the key memory: the longest AES key.</summary>
    internal const int MaxKeyLength = 32;

    // Bit 0: the instance holds the epoch. Bits 1 and up: how many transforms hold it. Zero once released, for good.
    // Changed only by interlocked operations. 64 bits: a transform dropped without Dispose never lets go, and a
    // long-lived key can see billions of those (CryptoStream never disposes its transform).
    private const long InstanceHolds = 1;
    private const long OneTransform = 2;
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

    /// <summary>The version of the key in the memory now (even), which handles keyed from it record.</summary>
    public int Version => Volatile.Read(ref _version);

    /// <summary>
    /// The key bytes, for a caller that knows no rewrite can happen and holds a reference (<see cref="TryAddRef"/>): a
    /// transform holding the epoch (rewrites need the instance to be the only holder), or the instance under its lock.
    /// </summary>
    public ReadOnlySpan<byte> DangerousKey => new((void*)handle, _length);

    /// <summary>True once neither the instance nor any transform holds the epoch (for good).</summary>
    internal bool IsReleased => Volatile.Read(ref _state) == 0;

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
    /// The instance's key change, under its lifecycle lock: when the instance alone holds the epoch, the new key
    /// overwrites the old one and the idle handles are re-keyed (or given back); false, changing nothing, when a
    /// transform holds the epoch (its key is frozen: the caller makes a new epoch instead).
    /// </summary>
    /// <remarks>
    /// Under the lock no other lifecycle operation runs, and no transform can become a holder, so a state of "the
    /// instance alone" cannot change under the rewrite; transforms let go without the lock, but none holds it. The
    /// rewrite still holds a reference on the key memory while it writes, so that the memory's lifetime never rests on
    /// that argument alone.
    /// </remarks>
    internal bool TryRewrite(ReadOnlySpan<byte> key)
    {
        if (Volatile.Read(ref _state) != InstanceHolds)
        {
            return false;
        }

        bool added = false;
        DangerousAddRef(ref added);
        int version = _version + 2;
        try
        {
            // Readers copy the key under the version: odd while the bytes change (a store barrier after it, so the mark
            // is visible before any byte is), even again after (a release, so every byte is visible before the new
            // version is).
            _version = version - 1;
            Volatile.WriteBarrier();
            Span<byte> memory = new((void*)handle, MaxKeyLength);
            key.CopyTo(memory);
            memory[key.Length..].Clear();
            _length = key.Length;
            Volatile.Write(ref _version, version);
        }
        finally
        {
            DangerousRelease();
        }

        // A full fence: the new version is visible to every processor before the sweep reads a single slot (the key
        // change's half of the ordering argument in KeyEpoch.Handles.cs). Idle handles now hold the old key's schedule:
        // each is re-keyed in place, or given back if no call used it since the last key change. A handle in use is
        // given back when it returns (its version is old).
        Interlocked.MemoryBarrier();
        SweepUntilSettled(HandleDisposal.RekeyOrRelease, this, key, version);
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
        if (Interlocked.Add(ref _state, -InstanceHolds) == 0)
        {
            ReleaseAll(next, nextKey);
            return;
        }

        // Transforms still hold it: what no call is using moves on now; the rest stays cached for the transforms.
        SweepHandles(next is null ? HandleDisposal.Release : HandleDisposal.MoveOrRelease, next, nextKey, 0);
        ReleaseIdleStock();
    }

    /// <summary>
    /// The last holder let go: give up every handle as soon as no call uses it, and free the key (once no reader holds a
    /// reference). The key memory is released even if giving up a handle throws.
    /// </summary>
    private void ReleaseAll(KeyEpoch? next, ReadOnlySpan<byte> nextKey)
    {
        try
        {
            SweepUntilSettled(next is null ? HandleDisposal.Release : HandleDisposal.MoveOrRelease, next, nextKey, 0);
            ReleaseIdleStock();
        }
        finally
        {
            Dispose();
        }
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
        if (Volatile.Read(ref _state) != 0)
        {
            SweepHandles(HandleDisposal.FreeFromFinalizer, null, default, 0);
        }

        return true;
    }
}
