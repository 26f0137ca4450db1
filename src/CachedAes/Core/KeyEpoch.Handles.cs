using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>The native handles of one epoch: one slot per mode and direction, then a slot per processor once threads contend.</summary>
/// <remarks>
/// <para><b>Ownership.</b> A slot is empty, holds a handle nobody is using, or is reserved: marked busy by the one caller
/// that holds its handle (or is making one for it). <see cref="TryRent"/> reserves a slot with one
/// <see cref="Interlocked.Exchange(ref object, object)"/>, which hands it whatever the slot held, and the lease puts the
/// handle back with a plain store: nobody else writes a reserved slot (other callers exchange "busy" for "busy", which
/// changes nothing; a sweep leaves busy slots alone). So a native handle is never used by two callers at once, each
/// call pays one interlocked operation, and nothing waits or throws because another caller is busy.</para>
/// <para><b>One thread, then several.</b> An epoch used by one thread at a time keeps one slot per mode and direction
/// inline. The first time a caller finds that slot reserved, the epoch switches for good to shared slots: an array with
/// one slot per processor for each mode and direction, each slot on a cache line of its own, and each thread starting at
/// a slot of its own (<see cref="t_hint"/>). Threads then neither wait for each other nor write a cache line that another
/// thread reads on every call (the inline slots sit beside the fields every call reads). A caller that finds every
/// shared slot reserved uses a handle of its own for the call.</para>
/// <para><b>Retirement, and why a returned handle is never stranded.</b> After a key change no new call reaches this
/// epoch, so all that is left is to release its handles promptly. Two parties race: a caller giving a handle back
/// stores it in its slot and then reads the retired mark (<see cref="Return"/>); the key change sets the mark with a
/// full fence and then sweeps the slots (<see cref="ReleaseIdleHandles"/>). If the sweep finds the handle, it releases it;
/// if the caller sees the mark, it takes the handle back out and releases it (whichever empties the slot first releases
/// it). A slot the sweep reads as empty or idle can only be reserved later, by an interlocked exchange that follows the
/// fenced mark, so that caller's later read sees the mark. The one gap is a slot the sweep finds reserved: the caller's
/// plain store may still sit in its processor's store buffer while its read of the mark is already satisfied, so both
/// sides miss. For that case alone (a call in flight during a key change) the sweep issues
/// <see cref="Interlocked.MemoryBarrierProcessWide"/>, which makes every processor's earlier stores visible and orders its
/// later reads after the mark, and sweeps again.</para>
/// <para><b>Bounds.</b> At most <see cref="HandlesPerMode"/> handles per mode and direction stay cached (the processor
/// count, at least 1, at most 64), one per slot; a handle is made only by a caller that reserved an empty slot or found
/// every slot reserved, so with k callers at once no more than k handles per mode and direction are kept.</para>
/// </remarks>
internal sealed partial class KeyEpoch
{
    /// <summary>How many handles per mode and direction stay cached at most.</summary>
    internal static readonly int HandlesPerMode = Math.Clamp(Environment.ProcessorCount, 1, 64);

    // Shared slots are this many references apart (64 bytes), so no two share a cache line. The first stride of the
    // array is left empty: a slot there would share a line with the array's length, which every caller reads.
    private const int SharedStride = 8;

    // Marks a reserved slot. Never used as a handle.
    private static readonly BlockCipher s_busy = new BusyMarker();

    // Where a thread starts looking among the shared slots: threads are numbered in the order they first need one, so
    // that concurrent threads start at different slots.
    [ThreadStatic]
    private static int t_hint;

    private static int s_lastHint;

    private BlockCipher? _ecbEncrypt;
    private BlockCipher? _ecbDecrypt;
    private BlockCipher? _cbcEncrypt;
    private BlockCipher? _cbcDecrypt;

    // HandlesPerMode shared slots per mode and direction, SharedStride apart, allocated the first time two callers
    // contend; from then on the inline slots are no longer used (a handle taken from one moves to a shared slot).
    private BlockCipher?[]? _shared;

    private static int ThreadHint
    {
        get
        {
            int hint = t_hint;
            return hint != 0 ? hint : t_hint = Interlocked.Increment(ref s_lastHint) & int.MaxValue;
        }
    }

    /// <summary>
    /// Takes a handle for <paramref name="mode"/> and direction keyed with the key of the epoch in
    /// <paramref name="current"/> (generated first if there is none): the cached one, a spare, or a new one made by
    /// <paramref name="backend"/>. Dispose the lease to give it back.
    /// </summary>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static HandleLease Rent(ref KeyEpoch? current, CipherBackend backend, int keySizeBits, BlockCipherMode mode, bool encrypting) =>
        CurrentOrGenerated(ref current, keySizeBits).TryRent(mode, encrypting, backend, out HandleLease lease)
            ? lease
            : RentAfterKeyChange(ref current, backend, keySizeBits, mode, encrypting);

    /// <summary>How many handles for <paramref name="mode"/> and direction are cached and not in use right now (a test seam).</summary>
    internal int CachedCount(BlockCipherMode mode, bool encrypting)
    {
        int count = IsHandle(InlineSlot(mode, encrypting)) ? 1 : 0;
        if (Volatile.Read(ref _shared) is { } shared)
        {
            for (int i = 0; i < HandlesPerMode; i++)
            {
                count += IsHandle(shared[SharedIndex(mode, encrypting, i)]) ? 1 : 0;
            }
        }

        return count;
    }

    /// <summary>The handle cached in the inline slot for <paramref name="mode"/> and direction, or null (a test seam).</summary>
    internal BlockCipher? PeekInline(BlockCipherMode mode, bool encrypting)
    {
        BlockCipher? held = InlineSlot(mode, encrypting);
        return IsHandle(held) ? held : null;
    }

    /// <summary>Gives back a handle taken by <see cref="TryRent"/> (called by <see cref="HandleLease.Dispose"/>).</summary>
    /// <param name="slot">The slot the caller reserved, or a null reference for a handle of the caller's own.</param>
    /// <param name="cipher">The handle.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (!Unsafe.IsNullRef(ref slot) && !cipher.IsFaulted && (_shared is null || !IsInlineSlot(ref slot)))
        {
            Volatile.Write(ref slot, cipher);

            // The half of the ordering argument (see the remarks) on this side: store, then read the mark.
            if (Volatile.Read(ref _retired) != 0)
            {
                ReleaseFromSlot(ref slot, cipher);
            }

            return;
        }

        ReturnSlow(ref slot, cipher);
    }

    /// <summary>
    /// A handle for <paramref name="mode"/> and direction with this epoch's key; false only when the epoch was retired
    /// and released before a handle could be made with its key (the caller then uses the instance's new epoch).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryRent(BlockCipherMode mode, bool encrypting, CipherBackend backend, out HandleLease lease)
    {
        if (_shared is not null)
        {
            return TryRentShared(mode, encrypting, backend, out lease);
        }

        ref BlockCipher? slot = ref InlineSlot(mode, encrypting);
        BlockCipher? held = Reserve(ref slot);
        if (held is not null && held != s_busy)
        {
            lease = new HandleLease(this, ref slot, held);
            return true;
        }

        return TryRentInlineSlow(ref slot, held, mode, encrypting, backend, out lease);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static HandleLease RentAfterKeyChange(ref KeyEpoch? current, CipherBackend backend, int keySizeBits, BlockCipherMode mode, bool encrypting)
    {
        // The epoch read was retired and released before a handle could be made with its key: a key change overtook
        // this call, which then takes the new key (the old one no longer exists).
        while (true)
        {
            if (CurrentOrGenerated(ref current, keySizeBits).TryRent(mode, encrypting, backend, out HandleLease lease))
            {
                return lease;
            }
        }
    }

    // The inline slot was empty (this caller now holds its reservation) or reserved by another caller.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentInlineSlow(ref BlockCipher? slot, BlockCipher? held, BlockCipherMode mode, bool encrypting, CipherBackend backend, out HandleLease lease)
    {
        if (held != s_busy)
        {
            return TryFill(ref slot, mode, encrypting, backend, out lease);
        }

        // Two callers at once: switch to the shared slots for good.
        if (Volatile.Read(ref _shared) is null)
        {
            Interlocked.CompareExchange(ref _shared, new BlockCipher?[((4 * HandlesPerMode) + 1) * SharedStride], null);
        }

        return TryRentShared(mode, encrypting, backend, out lease);
    }

    // A shared slot, starting at this thread's own; a handle of the call's own when every one is reserved.
    private bool TryRentShared(BlockCipherMode mode, bool encrypting, CipherBackend backend, out HandleLease lease)
    {
        BlockCipher?[] shared = Volatile.Read(ref _shared)!;
        int count = HandlesPerMode;
        int start = ThreadHint % count;
        for (int n = 0; n < count; n++)
        {
            int i = start + n < count ? start + n : start + n - count;
            ref BlockCipher? slot = ref shared[SharedIndex(mode, encrypting, i)];
            if (Volatile.Read(ref slot) == s_busy)
            {
                continue;
            }

            BlockCipher? held = Reserve(ref slot);
            if (held == s_busy)
            {
                continue;
            }

            // An empty shared slot: a handle still waiting in the inline slot (made before the switch) moves here.
            held ??= TakeInline(mode, encrypting);
            if (held is not null)
            {
                lease = new HandleLease(this, ref slot, held);
                return true;
            }

            return TryFill(ref slot, mode, encrypting, backend, out lease);
        }

        // Every slot is reserved: a handle of this call's own, released when it returns (not cached).
        BlockCipher? own = TryCreate(mode, encrypting, backend);
        lease = own is null ? default : new HandleLease(this, ref Unsafe.NullRef<BlockCipher?>(), own);
        return own is not null;
    }

    // This caller holds the reservation of the empty `slot`: a new handle for it.
    private bool TryFill(ref BlockCipher? slot, BlockCipherMode mode, bool encrypting, CipherBackend backend, out HandleLease lease)
    {
        BlockCipher? created;
        try
        {
            created = TryCreate(mode, encrypting, backend);
        }
        catch
        {
            // Give the reservation up, or the slot would stay busy for good.
            Volatile.Write(ref slot, null);
            throw;
        }

        if (created is null)
        {
            Volatile.Write(ref slot, null);
            lease = default;
            return false;
        }

        lease = new HandleLease(this, ref slot, created);
        return true;
    }

    // A new handle with this epoch's key, or null when the epoch is already released.
    private BlockCipher? TryCreate(BlockCipherMode mode, bool encrypting, CipherBackend backend)
    {
        if (!TryAddRef())
        {
            return null;
        }

        try
        {
            return backend.Create(mode, encrypting, DangerousKey);
        }
        finally
        {
            DangerousRelease();
        }
    }

    // The handle in the inline slot, if one is waiting there (the slot is left empty); null otherwise.
    private BlockCipher? TakeInline(BlockCipherMode mode, bool encrypting)
    {
        ref BlockCipher? inline = ref InlineSlot(mode, encrypting);
        if (!IsHandle(Volatile.Read(ref inline)))
        {
            return null;
        }

        BlockCipher? held = Reserve(ref inline);
        if (held == s_busy)
        {
            return null;
        }

        Volatile.Write(ref inline, null);
        return held;
    }

    // A handle of the caller's own, a faulted one (released, and the slot freed), or a handle taken from the inline
    // slot after the switch to shared slots (moved to a free shared slot if there is one).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (Unsafe.IsNullRef(ref slot))
        {
            cipher.Release();
            return;
        }

        Volatile.Write(ref slot, null);
        if (cipher.IsFaulted || Volatile.Read(ref _shared) is not { } shared)
        {
            cipher.Release();
            return;
        }

        for (int i = 0; i < HandlesPerMode; i++)
        {
            ref BlockCipher? free = ref shared[SharedIndex(cipher.Mode, cipher.Encrypting, i)];
            if (Volatile.Read(ref free) is null
                && Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref free), cipher, null) is null)
            {
                // The compare-exchange is a full fence, so this read cannot miss a retirement that missed the handle.
                if (Volatile.Read(ref _retired) != 0)
                {
                    ReleaseFromSlot(ref free, cipher);
                }

                return;
            }
        }

        cipher.Release();
    }

    // Empties every slot that holds a handle (the retirement's half of the ordering argument in the remarks).
    private void ReleaseIdleHandles()
    {
        if (SweepHandles())
        {
            Interlocked.MemoryBarrierProcessWide();
            SweepHandles();
        }
    }

    // True when a slot was reserved.
    private bool SweepHandles()
    {
        bool reserved = Sweep(ref _ecbEncrypt) | Sweep(ref _ecbDecrypt) | Sweep(ref _cbcEncrypt) | Sweep(ref _cbcDecrypt);
        if (Volatile.Read(ref _shared) is { } shared)
        {
            for (int i = SharedStride; i < shared.Length; i += SharedStride)
            {
                reserved |= Sweep(ref shared[i]);
            }
        }

        return reserved;
    }

    private static bool Sweep(ref BlockCipher? slot)
    {
        // A plain read first: most slots are empty, and an interlocked operation on each would cost more than the rest of
        // a key change. A reserved slot is left to the caller that holds it.
        BlockCipher? held = Volatile.Read(ref slot);
        if (held is null)
        {
            return false;
        }

        if (held == s_busy)
        {
            return true;
        }

        ReleaseFromSlot(ref slot, held);
        return false;
    }

    // Takes `cipher` out of `slot` and releases it, unless another caller emptied or reserved the slot first (that
    // caller then owns the handle, and releases it when it sees the epoch retired).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReleaseFromSlot(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null, cipher) == cipher)
        {
            cipher.Release();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref BlockCipher? InlineSlot(BlockCipherMode mode, bool encrypting)
    {
        if (mode == BlockCipherMode.Ecb)
        {
            return ref encrypting ? ref _ecbEncrypt : ref _ecbDecrypt;
        }

        return ref encrypting ? ref _cbcEncrypt : ref _cbcDecrypt;
    }

    private bool IsInlineSlot(ref BlockCipher? slot) =>
        Unsafe.AreSame(ref slot, ref _ecbEncrypt) || Unsafe.AreSame(ref slot, ref _ecbDecrypt)
        || Unsafe.AreSame(ref slot, ref _cbcEncrypt) || Unsafe.AreSame(ref slot, ref _cbcDecrypt);

    private static int SharedIndex(BlockCipherMode mode, bool encrypting, int i) =>
        ((((int)mode * 2) + (encrypting ? 0 : 1)) * HandlesPerMode + i + 1) * SharedStride;

    private static bool IsHandle(BlockCipher? held) => held is not null && held != s_busy;

    // The object overloads of Interlocked: the generic ones run as shared generic code with a run-time type test on every
    // call, which this hot path would pay each time.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static BlockCipher? Reserve(ref BlockCipher? slot) =>
        Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), s_busy));

    /// <summary>The object that marks a reserved slot.</summary>
    private sealed class BusyMarker : BlockCipher
    {
        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output) =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        public override CryptographicException CreateFailure() =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        public override void Release() =>
            throw new InvalidOperationException("The busy marker is not a handle.");
    }
}
