using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// The native handles of one epoch and the lease protocol: one slot per mode and direction, then a slot per processor
/// (64 at most) once threads contend.
/// </summary>
/// <remarks>
/// <para><b>Ownership.</b> A slot is empty, holds a handle nobody is using, or is reserved: marked busy by the one caller
/// that holds its handle (or is making one for it). <see cref="TryRent"/> reserves a slot with one
/// <see cref="Interlocked.Exchange(ref object, object)"/>, which hands it whatever the slot held, and the lease puts the
/// handle back with a plain store: nobody else writes a reserved slot (other callers exchange "busy" for "busy", which
/// changes nothing; a sweep leaves busy slots alone). So a native handle is never used by two callers at once, each
/// call pays one interlocked operation, and nothing waits or throws because another caller is busy.</para>
/// <para><b>Key versions.</b> Every handle records the key version it was keyed with (<see cref="BlockCipher.KeyVersion"/>).
/// A call takes a handle only if its version is the epoch's current one (<see cref="Version"/>), and a handle that comes
/// back with an older version (its call began before a key change rewrote the key) is given up instead of cached. So a
/// call that starts after a key change never sees a handle of an older key, and one in flight finishes with the key it
/// started with. A key change re-keys or gives up every idle handle at once (<c>KeyEpoch.Sweep.cs</c>), and no handle of
/// the old key is left in a slot once both the key change and the calls that were in flight have returned (the
/// ordering argument below).</para>
/// <para><b>Release and key change, and why a returned handle is never stranded.</b> Two events make a cached handle
/// unwanted: the last holder lets go (the holder state reaches zero, see <c>KeyEpoch.cs</c>), or a key change
/// rewrites the key (the version moves on). Each is published with a full fence and then followed by a sweep of the
/// slots (<see cref="SweepUntilSettled"/>). Two parties race: a caller giving a handle back stores it in its slot and
/// then reads the holder state and the version (<see cref="Return"/>, <see cref="IsStale"/>); the release or key change
/// publishes its new value and then sweeps. If the sweep finds the handle, it gives it up (or re-keys it); if the caller
/// sees the new value, it takes the handle back out and gives it up (whichever empties the slot first owns the handle).
/// A slot the sweep reads as empty or idle can only be reserved later, by an interlocked exchange that follows the
/// fenced publication, so that caller's later reads see the new value. The one gap is a slot the sweep finds reserved:
/// the caller's plain store may still sit in its processor's store buffer while its reads are already satisfied, so
/// both sides miss. For that case alone (a call in flight during the release or key change) the sweep issues
/// <see cref="Interlocked.MemoryBarrierProcessWide"/>, which makes every processor's earlier stores visible and orders
/// its later reads after the publication, and sweeps again. A caller that stores after that barrier reads the new value.
/// A handle that is nevertheless missed (a call that reserved a slot and has not returned yet) is given up by that caller
/// when it returns, or, if the epoch is dropped, freed with it.</para>
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

    // False until the epoch's first handle has been made. That handle is given back (reset and pooled, on OpenSSL) when
    // its call returns, and handles are cached from the second on: a key used for one call (a new instance per message,
    // and above all one never disposed) then costs a pooled context and no slots object; a key used for more calls pays
    // one more keying, once (docs/design-notes.md, "The first handle"). A plain field: two first calls racing may both
    // give theirs back.
    private bool _cachesHandles;

    // The slots, made when the epoch caches its first handle and attached to its key memory then, so that the sweep of
    // dropped keys can give the handles back if the epoch is dropped (HandleSlots.cs). Null until then.
    private HandleSlots? _slots;

    /// <summary>How many handles for <paramref name="mode"/> and direction are cached and not in use right now (a test seam).</summary>
    internal int CachedCount(BlockCipherMode mode, bool encrypting)
    {
        if (Volatile.Read(ref _slots) is not { } slots)
        {
            return 0;
        }

        int count = IsHandle(slots.Inline(mode, encrypting)) ? 1 : 0;
        if (Volatile.Read(ref slots.Shared) is { } shared)
        {
            for (int i = 0; i < HandlesPerMode; i++)
            {
                count += IsHandle(shared[SharedIndex(mode, encrypting, i)]) ? 1 : 0;
            }
        }

        return count;
    }

    /// <summary>How many idle handles in the slots were keyed with an older version of the key (a test seam).</summary>
    internal int CachedWithOlderKey()
    {
        int version = Version;
        int count = 0;
        if (Volatile.Read(ref _slots) is not { } slots)
        {
            return 0;
        }

        foreach (BlockCipher? held in (BlockCipher?[])[slots.EcbEncrypt, slots.EcbDecrypt, slots.CbcEncrypt, slots.CbcDecrypt, .. Volatile.Read(ref slots.Shared) ?? []])
        {
            count += IsHandle(held) && held!.KeyVersion != version ? 1 : 0;
        }

        return count;
    }

    /// <summary>The handle cached in the inline slot for <paramref name="mode"/> and direction, or null (a test seam).</summary>
    internal BlockCipher? PeekInline(BlockCipherMode mode, bool encrypting)
    {
        BlockCipher? held = Volatile.Read(ref _slots)?.Inline(mode, encrypting);
        return IsHandle(held) ? held : null;
    }

    /// <summary>Gives back a handle taken by <see cref="TryRent"/> (called by <see cref="HandleLease.Dispose"/>).</summary>
    /// <param name="slot">The slot the caller reserved, or a null reference for a handle of the caller's own.</param>
    /// <param name="cipher">The handle.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (!Unsafe.IsNullRef(ref slot) && !cipher.IsFaulted && cipher.KeyVersion == Volatile.Read(ref _version)
            && (_slots!.Shared is null || !_slots.IsInline(ref slot)))
        {
            Volatile.Write(ref slot, cipher);

            // The half of the ordering argument (see the remarks) on this side: store, then read the holder count and
            // the key version. A release or a key change that the sweep made without seeing the handle is seen here.
            if (IsStale(cipher))
            {
                GiveBackFromSlot(ref slot, cipher);
            }

            return;
        }

        ReturnSlow(ref slot, cipher);
    }

    /// <summary>
    /// A handle for <paramref name="mode"/> and direction with this epoch's key; false only when the epoch was released
    /// before a handle could be made with its key (the caller then uses the instance's new epoch).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryRent(BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        HandleSlots? slots = _slots;
        if (slots is null)
        {
            return TryRentUnslotted(mode, encrypting, out lease);
        }

        if (slots.Shared is not null)
        {
            return TryRentShared(slots, mode, encrypting, out lease);
        }

        ref BlockCipher? slot = ref slots.Inline(mode, encrypting);
        BlockCipher? held = Reserve(ref slot);
        if (held is not null && held != HandleSlots.Busy && held.KeyVersion == Volatile.Read(ref _version))
        {
            held.Used = true;
            lease = new HandleLease(this, ref slot, held);
            return true;
        }

        return TryRentInlineSlow(slots, ref slot, held, mode, encrypting, out lease);
    }

    // No slots yet: the epoch's first handle, given back after its call (see _cachesHandles); from the second on, the
    // slots are made (once) and attached to the key memory, and the call goes through them.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentUnslotted(BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        if (!_cachesHandles)
        {
            // Set once a first handle exists: after a failed (or thrown) first creation, the next call is the first.
            BlockCipher? first = TryCreate(mode, encrypting);
            if (first is null)
            {
                lease = default;
                return false;
            }

            _cachesHandles = true;
            lease = new HandleLease(this, ref Unsafe.NullRef<BlockCipher?>(), first);
            return true;
        }

        EnsureSlots();
        return TryRent(mode, encrypting, out lease);
    }

    // The slots, made once (by a call's second handle, or a key change that moves handles here) and attached to the key
    // memory, under a reference so the memory still belongs to this epoch: a released epoch's memory may already hold
    // another key, and a released epoch's handles are given back by its release, not by the sweep of dropped keys.
    private HandleSlots EnsureSlots()
    {
        if (Volatile.Read(ref _slots) is { } slots)
        {
            return slots;
        }

        _cachesHandles = true;
        HandleSlots made = new();
        if (Interlocked.CompareExchange(ref _slots, made, null) is { } won)
        {
            return won;
        }

        if (_memory.TryAddRef(_generation))
        {
            _memory.AttachSlots(made);
            _memory.Release();
        }

        return made;
    }

    /// <summary>
    /// For a holder (a transform): a handle from this epoch's slots, made with its key if none is free. Dispose the lease
    /// to give it back.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The caller let go of the epoch already: a transform used while another
    /// thread disposed it (what stock's disposed transform throws, <see cref="Errors.ThrowDisposedTransform"/>).</exception>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    public HandleLease RentHeld(BlockCipherMode mode, bool encrypting)
    {
        if (!TryRent(mode, encrypting, out HandleLease lease))
        {
            // Only a holder that has already let go can find its epoch released.
            Errors.ThrowDisposedTransform();
        }

        return lease;
    }

    // The inline slot was empty or held a handle of an older key (this caller now holds its reservation either way), or
    // was reserved by another caller.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentInlineSlow(HandleSlots slots, ref BlockCipher? slot, BlockCipher? held, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        if (held != HandleSlots.Busy)
        {
            // A key change rewrote the key after this handle was cached, and its sweep has not reached it yet.
            if (held is not null)
            {
                GiveBack(held);
            }

            return TryFill(ref slot, mode, encrypting, out lease);
        }

        // Two callers at once: switch to the shared slots for good.
        if (Volatile.Read(ref slots.Shared) is null)
        {
            Interlocked.CompareExchange(ref slots.Shared, new BlockCipher?[((4 * HandlesPerMode) + 1) * SharedStride], null);
        }

        return TryRentShared(slots, mode, encrypting, out lease);
    }

    // This caller holds the reservation of the empty `slot`: a new handle for it.
    private bool TryFill(ref BlockCipher? slot, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        BlockCipher? created;
        try
        {
            created = TryCreate(mode, encrypting);
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
    private BlockCipher? TryCreate(BlockCipherMode mode, bool encrypting) =>
        TryUseKey((this, mode, encrypting), s_create, out BlockCipher created) ? created : null;

    private static readonly KeyUse<(KeyEpoch Epoch, BlockCipherMode Mode, bool Encrypting), BlockCipher> s_create = static (key, version, state) =>
    {
        BlockCipher created = state.Epoch._backend.Create(state.Mode, state.Encrypting, key);
        created.KeyVersion = version;
        created.Used = true;
        CachedAesMetrics.HandleCreated();
        return created;
    };

    // A handle of the caller's own, a faulted one or one of an older key (released, and the slot freed), or a handle
    // taken from the inline slot after the switch to shared slots (moved to a free shared slot if there is one).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (Unsafe.IsNullRef(ref slot))
        {
            GiveBack(cipher);
            return;
        }

        Volatile.Write(ref slot, null);
        if (cipher.IsFaulted || cipher.KeyVersion != Volatile.Read(ref _version) || Volatile.Read(ref _slots!.Shared) is not { } shared)
        {
            GiveBack(cipher);
            return;
        }

        for (int i = 0; i < HandlesPerMode; i++)
        {
            ref BlockCipher? free = ref shared[SharedIndex(cipher.Mode, cipher.Encrypting, i)];
            if (Volatile.Read(ref free) is null
                && Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref free), cipher, null) is null)
            {
                // The compare-exchange is a full fence, so these reads cannot miss a release or key change that missed the
                // handle.
                if (IsStale(cipher))
                {
                    GiveBackFromSlot(ref free, cipher);
                }

                return;
            }
        }

        GiveBack(cipher);
    }

    // Takes `cipher` out of `slot` and gives it back, unless another caller emptied or reserved the slot first (that
    // caller then owns the handle).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void GiveBackFromSlot(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null, cipher) == cipher)
        {
            GiveBack(cipher);
        }
    }

    // Every handle a live epoch gives up goes through here (a dropped epoch's are given back by HandleSlots, counted apart).
    private static void GiveBack(BlockCipher cipher)
    {
        cipher.Release();
        CachedAesMetrics.HandleReleased();
    }

    // A handle just put back into a slot that must not stay there: the epoch was released, or its key changed, after the
    // caller checked (the reads follow the caller's store; see the ordering argument in the remarks).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool IsStale(BlockCipher cipher) => IsReleased || cipher.KeyVersion != Volatile.Read(ref _version);

    private static bool IsHandle(BlockCipher? held) => HandleSlots.IsHandle(held);

    // The object overloads of Interlocked: the generic ones run as shared generic code with a run-time type test on every
    // call, which this hot path would pay each time.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static BlockCipher? Reserve(ref BlockCipher? slot) =>
        Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), HandleSlots.Busy));

}
