using System;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>
/// The native handles of one epoch: the lease protocol over its slots (<see cref="HandleSlots"/>), and the one sweep
/// that re-keys, moves or gives back idle handles when the key changes or the epoch closes.
/// </summary>
/// <remarks>
/// <para><b>Slots</b> (docs/design-notes.md, "Ownership", table S). A slot is empty, holds a handle nobody is using, or is
/// busy: held by the one party (a caller, a sweep) that set its flag (<see cref="Slot.TryHold"/>, one compare-exchange on
/// an int), and only that party reads or writes its handle until it lets go with a release store (<see cref="Slot.Let"/>).
/// A handle stays in its slot while a call uses it, so giving it back is that one store; a sweep leaves busy slots alone. So a handle is never used by two callers at once, each call pays one interlocked
/// operation, and nothing waits or throws because another caller is busy. One slot per mode and direction until two
/// callers meet on one; then, for good, a slot per processor (64 at most) for each, each on a cache line of its own
/// (<see cref="HandleSlots.Shared"/>). A caller that finds every slot busy uses a handle of its own for the call.</para>
/// <para><b>Key versions.</b> Every handle records the key version it was keyed with. A call takes a handle only if its
/// version is the epoch's current one, and a handle that comes back with an older version (its call began before a key
/// change rewrote the key) is given back instead of cached.</para>
/// <para><b>Why a returned handle is never stranded</b> (docs/design-notes.md, "Ownership", point 3): a close or key
/// change publishes its new value with a full fence and then sweeps; a returning call stores and then reads
/// (<see cref="Return"/>, <see cref="IsStale"/>); a sweep that finds a slot busy issues
/// <see cref="Interlocked.MemoryBarrierProcessWide"/> and sweeps again (<see cref="SweepUntilSettled"/>).</para>
/// <para><b>The first handle.</b> An epoch's first handle is given back when its call returns, and handles are cached
/// from the second on (docs/design-notes.md, "The first handle"): a key used for one call (a new instance per message,
/// one never disposed) then costs a pooled context and no slots. About <see cref="CachedKeyBudget.Limit"/> keys keep a
/// backend's handles cached at once (<see cref="CachedKeyBudget"/>); every call of a key past that bound runs as a first
/// call does.</para>
/// </remarks>
internal sealed partial class KeyEpoch
{
    /// <summary>How many handles per mode and direction stay cached at most.</summary>
    internal static int HandlesPerMode => HandleSlots.PerMode;

    // False until the epoch's first handle has been made (see the remarks). A plain field: two first calls racing may
    // both give theirs back.
    private bool _cachesHandles;

    // The slots, made when the epoch caches its first handle and attached to its key memory then, so that the reclaimer
    // can give the handles back if the epoch is dropped. Null until then.
    private HandleSlots? _slots;

    /// <summary>How many handles for <paramref name="mode"/> and direction are cached and idle right now (a test seam).</summary>
    internal int CachedCount(BlockCipherMode mode, bool encrypting) => Volatile.Read(ref _slots)?.IdleCount(mode, encrypting) ?? 0;

    /// <summary>How many idle handles in the slots were keyed with an older version of the key (a test seam).</summary>
    internal int CachedWithOlderKey() => Volatile.Read(ref _slots)?.IdleNotOfVersion(Version) ?? 0;

    /// <summary>The handle cached in the inline slot for <paramref name="mode"/> and direction, or null (a test seam).</summary>
    internal BlockCipher? PeekInline(BlockCipherMode mode, bool encrypting) =>
        Volatile.Read(ref _slots) is { } slots && slots.Inline(mode, encrypting).HasIdleHandle ? slots.Inline(mode, encrypting).Handle : null;

    /// <summary>
    /// A handle for <paramref name="mode"/> and direction keyed with this epoch's current key; a lease with no handle
    /// (<see cref="HandleLease.IsTaken"/> false) only when the epoch is closed or a rewrite is writing its key (the caller
    /// then retries once under the instance's lifecycle lock).
    /// </summary>
    /// <remarks>
    /// Inlined into every one-shot: the inline slot held, with a handle of the current version, is the whole path. It
    /// returns the lease by value, and the out-of-line paths write theirs to locals of their own, so that no call takes
    /// the address of the caller's lease.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal HandleLease Rent(BlockCipherMode mode, bool encrypting)
    {
        HandleSlots? slots = _slots;
        if (slots is not null && slots.Shared is null)
        {
            ref Slot slot = ref slots.Inline(mode, encrypting);
            if (slot.TryHold())
            {
                BlockCipher? held = slot.Handle;
                if (held is not null && held.KeyVersion == Volatile.Read(ref _version))
                {
                    return new HandleLease(this, ref slot, held);
                }

                _ = TryRentHeldSlot(ref slot, held, mode, encrypting, out HandleLease refilled);
                return refilled;
            }
        }

        _ = slots is null
            ? TryRentUnslotted(mode, encrypting, out HandleLease other)
            : TryRentShared(slots, mode, encrypting, out other);
        return other;
    }

    /// <summary><see cref="Rent"/>, for callers that test a bool: false when the lease it returned is empty.</summary>
    internal bool TryRent(BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        lease = Rent(mode, encrypting);
        return lease.IsTaken;
    }

    /// <summary>
    /// For a transform made with version <paramref name="version"/> of this epoch's key: a handle keyed with exactly that
    /// version. Dispose the lease to give it back.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The epoch is closed, or its key is no longer that version: either is
    /// possible only after the transform let go (its <c>Dispose</c> on another thread), and stock's disposed transform
    /// throws this there (<see cref="Errors.ThrowDisposedTransform"/>). Never a handle of another key.</exception>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The native library could not make a handle.</exception>
    public HandleLease RentHeld(BlockCipherMode mode, bool encrypting, int version)
    {
        if (Volatile.Read(ref _version) != version || !TryRent(mode, encrypting, out HandleLease lease))
        {
            Errors.ThrowDisposedTransform();
            return default;
        }

        if (lease.Cipher.KeyVersion != version)
        {
            // Rewritten between the check and the rent: the key is not this transform's any more.
            lease.Dispose();
            Errors.ThrowDisposedTransform();
        }

        return lease;
    }

    /// <summary>Gives back a handle taken by <see cref="Rent"/> (called by <see cref="HandleLease.Dispose"/>).</summary>
    /// <param name="slot">The slot the caller holds, or a null reference for a handle of the caller's own.</param>
    /// <param name="cipher">The handle.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(ref Slot slot, BlockCipher cipher)
    {
        if (!Unsafe.IsNullRef(ref slot) && !cipher.IsFaulted && cipher.KeyVersion == Volatile.Read(ref _version)
            && (_slots!.Shared is null || !_slots.IsInline(ref slot)))
        {
            // The handle is in the slot already (put there when it was made): letting the slot go is all.
            slot.Let();

            // This side of the ordering argument (docs/design-notes.md, "Ownership", point 3): let go, then read the
            // holders and the version. A close or key change whose sweep found the slot held is seen here.
            if (IsStale(cipher))
            {
                GiveBackFromSlot(ref slot, cipher);
            }

            return;
        }

        ReturnSlow(ref slot, cipher);
    }

    // No slots yet: the epoch's first handle, given back after its call (see _cachesHandles); from the second on, the
    // slots are made (once) and attached to the key memory, and the call goes through them. While about as many keys
    // have slots as the backend's bound allows (CachedKeyBudget), every call of an epoch without slots runs as its
    // first did, on a handle given back after the call.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentUnslotted(BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        bool first = !_cachesHandles;
        if (first || !_backend.CachedKeys.HasRoom())
        {
            if (!first)
            {
                CachedAesMetrics.CallUncached();
            }

            // Set once a first handle exists: after a failed (or thrown) first creation, the next call is the first.
            BlockCipher? own = TryCreate(mode, encrypting);
            if (own is null)
            {
                lease = default;
                return false;
            }

            _cachesHandles = true;
            lease = new HandleLease(this, ref Unsafe.NullRef<Slot>(), own);
            return true;
        }

        EnsureSlots();
        return TryRent(mode, encrypting, out lease);
    }

    // The slots, made once (by a call's second handle, or a key change that moves handles here) and attached to the key
    // memory under a reference, so only while the memory is still this epoch's.
    private HandleSlots EnsureSlots()
    {
        if (Volatile.Read(ref _slots) is { } slots)
        {
            return slots;
        }

        _cachesHandles = true;
        HandleSlots made = new(_backend.CachedKeys);
        if (Interlocked.CompareExchange(ref _slots, made, null) is { } won)
        {
            return won;
        }

        if (_memory.TryAddRef(_generation))
        {
            _memory.AttachSlots(made);
            _memory.Release();
        }

        GC.KeepAlive(this);
        return made;
    }

    // This caller holds `slot`, which was empty or held a handle of an older key (a key change rewrote the key after it
    // was cached, and its sweep has not reached it yet): that one goes back, and a new one is made here.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentHeldSlot(ref Slot slot, BlockCipher? held, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        if (held is not null)
        {
            slot.Set(null);
            GiveBack(held);
        }

        return TryFill(ref slot, mode, encrypting, out lease);
    }

    // The inline slot is held by another caller (two callers at once: the epoch switches to the shared slots for good),
    // or the switch is made already: a shared slot, starting at this thread's own; a handle of the call's own when every
    // one is held.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryRentShared(HandleSlots slots, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        slots.EnsureShared();
        Slot[] shared = Volatile.Read(ref slots.Shared)!;
        int count = HandlesPerMode;
        int start = HandleSlots.ThreadHint % count;
        for (int n = 0; n < count; n++)
        {
            int i = start + n < count ? start + n : start + n - count;
            ref Slot slot = ref HandleSlots.SharedSlot(shared, mode, encrypting, i);
            if (Volatile.Read(ref slot.Busy) != 0 || !slot.TryHold())
            {
                continue;
            }

            // An empty shared slot: a handle still waiting in the inline slot (made before the switch) moves here.
            BlockCipher? held = slot.Handle;
            if (held is null && slots.TakeInline(mode, encrypting) is { } moved)
            {
                slot.Set(moved);
                held = moved;
            }

            if (held is not null && held.KeyVersion == Volatile.Read(ref _version))
            {
                lease = new HandleLease(this, ref slot, held);
                return true;
            }

            return TryRentHeldSlot(ref slot, held, mode, encrypting, out lease);
        }

        // Every slot is held: a handle of this call's own, given back when it returns (not cached).
        CachedAesMetrics.CallContended();
        BlockCipher? own = TryCreate(mode, encrypting);
        lease = own is null ? default : new HandleLease(this, ref Unsafe.NullRef<Slot>(), own);
        return own is not null;
    }

    // This caller holds the empty `slot`: a new handle for it, put in the slot at once (the return then only lets go).
    private bool TryFill(ref Slot slot, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        BlockCipher? created;
        try
        {
            created = TryCreate(mode, encrypting);
        }
        catch
        {
            // Let the slot go, or it would stay held for good.
            slot.Let();
            throw;
        }

        if (created is null)
        {
            slot.Let();
            lease = default;
            return false;
        }

        slot.Set(created);
        lease = new HandleLease(this, ref slot, created);
        return true;
    }

    // A new handle with this epoch's key, or null when the epoch is closed or its key being rewritten. Whoever makes a
    // handle first gives back a few a dropped epoch left (Reclaimer.Help), so that reclaiming keeps up with the threads
    // that drop them.
    private BlockCipher? TryCreate(BlockCipherMode mode, bool encrypting)
    {
        Reclaimer.Help();
        return TryUseKey((this, mode, encrypting), s_create, out BlockCipher created) ? created : null;
    }

    private static readonly KeyUse<(KeyEpoch Epoch, BlockCipherMode Mode, bool Encrypting), BlockCipher> s_create = static (key, version, state) =>
    {
        BlockCipher created = state.Epoch._backend.Create(state.Mode, state.Encrypting, key);
        created.KeyVersion = version;
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Take(created, state.Epoch);
        }

        CachedAesMetrics.HandleCreated();
        return created;
    };

    // A handle of the caller's own, a faulted one or one of an older key (the slot emptied, and the handle given back),
    // or a handle taken from the inline slot after the switch to shared slots (moved to a free shared slot if there is
    // one).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(ref Slot slot, BlockCipher cipher)
    {
        if (Unsafe.IsNullRef(ref slot))
        {
            GiveBack(cipher);
            return;
        }

        slot.Set(null);
        slot.Let();
        if (cipher.IsFaulted || cipher.KeyVersion != Volatile.Read(ref _version) || Volatile.Read(ref _slots!.Shared) is not { } shared)
        {
            GiveBack(cipher);
            return;
        }

        ref Slot free = ref HandleSlots.TryFillFree(shared, cipher);
        if (Unsafe.IsNullRef(ref free))
        {
            GiveBack(cipher);
            return;
        }

        // The compare-exchange that held the free slot is a full fence: these reads cannot miss a close or key change
        // that missed the handle.
        if (IsStale(cipher))
        {
            GiveBackFromSlot(ref free, cipher);
        }
    }

    // Takes `cipher` out of `slot` and gives it back, unless another party holds the slot or put another handle there
    // meanwhile (that party then decides about it).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void GiveBackFromSlot(ref Slot slot, BlockCipher cipher)
    {
        if (!slot.TryHold())
        {
            return;
        }

        bool mine = slot.Handle == cipher;
        if (mine)
        {
            slot.Set(null);
        }

        slot.Let();
        if (mine)
        {
            GiveBack(cipher);
        }
    }

    // Every handle a live epoch gives up goes through here (a dropped epoch's go through HandleSlots.GiveBackDropped).
    private void GiveBack(BlockCipher cipher)
    {
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Give(cipher, this);
        }

        cipher.Release();
        CachedAesMetrics.HandleReleased();
    }

    // A handle just put back into a slot that must not stay there: the epoch closed, or its key changed, after the
    // caller checked (the reads follow the caller's release store; see the ordering argument).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool IsStale(BlockCipher cipher) => IsClosed || cipher.KeyVersion != Volatile.Read(ref _version);

    // ---- The sweep: what a key change or a close does with every idle handle ----

    /// <summary>What a sweep does with each idle handle it takes out of its slot.</summary>
    private readonly ref struct SweepPlan
    {
        private SweepPlan(SweepKind kind, KeyEpoch? target, ReadOnlySpan<byte> key, int version)
        {
            Kind = kind;
            Target = target;
            Key = key;
            Version = version;
        }

        /// <summary>Give every idle handle back to the backend.</summary>
        public static SweepPlan Release => new(SweepKind.Release, null, default, 0);

        public SweepKind Kind { get; }

        public KeyEpoch? Target { get; }

        public ReadOnlySpan<byte> Key { get; }

        public int Version { get; }

        /// <summary>This epoch's key was rewritten to <paramref name="key"/> at <paramref name="version"/>: re-key the idle inline handles in place.</summary>
        public static SweepPlan RekeyTo(ReadOnlySpan<byte> key, int version) => new(SweepKind.RekeyTo, null, key, version);

        /// <summary>A key change made <paramref name="target"/>: move the idle inline handles there, re-keyed with <paramref name="key"/>.</summary>
        public static SweepPlan MoveTo(KeyEpoch target, ReadOnlySpan<byte> key) => new(SweepKind.MoveTo, target, key, 0);
    }

    private enum SweepKind
    {
        Release,
        RekeyTo,
        MoveTo,
    }

    // After a close or a key change whose full fence made it visible: a sweep, and when it found a slot busy with a call
    // in flight, a process-wide barrier and a second sweep (the ordering argument in the remarks).
    private void SweepUntilSettled(scoped in SweepPlan plan)
    {
        if (SweepHandles(plan))
        {
            Interlocked.MemoryBarrierProcessWide();
            SweepHandles(plan);
        }
    }

    // Every slot once; true when one was held by a call in flight. Re-keying (in place, or into the next epoch) is for
    // the inline slots, the handles of an instance used by one thread at a time; the shared slots' handles are given
    // back, and the threads that share the instance make new ones from the backend's pool as they need them.
    private bool SweepHandles(scoped in SweepPlan plan)
    {
        // No slots yet: no handle is cached. Slots made after this read are made by a call whose interlocked operations
        // follow the close's or key change's fence, so that call sees the change.
        if (Volatile.Read(ref _slots) is not { } slots)
        {
            return false;
        }

        bool held = Sweep(ref slots.EcbEncrypt, plan) | Sweep(ref slots.EcbDecrypt, plan) | Sweep(ref slots.CbcEncrypt, plan) | Sweep(ref slots.CbcDecrypt, plan);
        if (Volatile.Read(ref slots.Shared) is { } shared)
        {
            for (int i = 0; i < CacheLineSlots<Slot>.Count(shared); i++)
            {
                held |= Sweep(ref CacheLineSlots<Slot>.At(shared, i), SweepPlan.Release);
            }
        }

        return held;
    }

    // True when the slot is held by someone else (a call in flight, or one that took it just now).
    private bool Sweep(ref Slot slot, scoped in SweepPlan plan)
    {
        // Plain reads first: most slots are empty, and an interlocked operation on each would cost more than the rest of
        // a key change.
        if (Volatile.Read(ref slot.Busy) != 0)
        {
            return true;
        }

        if (Volatile.Read(ref slot.Handle) is null)
        {
            return false;
        }

        if (!slot.TryHold())
        {
            return true;
        }

        BlockCipher? held = slot.Handle;
        if (held is null)
        {
            slot.Let();
            return false;
        }

        switch (plan.Kind)
        {
            case SweepKind.RekeyTo:
                RekeyInPlace(ref slot, held, plan.Key, plan.Version);
                break;
            case SweepKind.MoveTo:
                slot.Set(null);
                slot.Let();
                MoveTo(held, plan.Target!, plan.Key);
                break;
            default:
                slot.Set(null);
                slot.Let();
                GiveBack(held);
                break;
        }

        return false;
    }

    // A key rewrite: the handle in the held `slot` gets the new key and stays, or is given back.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RekeyInPlace(ref Slot slot, BlockCipher held, ReadOnlySpan<byte> key, int version)
    {
        if (held.KeyVersion != version)
        {
            bool rekeyed = false;
            try
            {
                rekeyed = !held.IsFaulted && held.TryRekey(key);
            }
            finally
            {
                if (!rekeyed)
                {
                    // The backend cannot re-key it (or failed, or threw): the slot is emptied and the handle given back,
                    // so neither stays with the old key's schedule.
                    slot.Set(null);
                    slot.Let();
                    GiveBack(held);
                }
            }

            if (!rekeyed)
            {
                return;
            }

            held.KeyVersion = version;
            CachedAesMetrics.HandleRekeyed();
        }

        slot.Let();
        if (IsStale(held))
        {
            GiveBackFromSlot(ref slot, held);
        }
    }

    // A key change to a new epoch: the handle (already out of its slot) leaves this epoch for `target`, re-keyed, or is
    // given back.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void MoveTo(BlockCipher held, KeyEpoch target, ReadOnlySpan<byte> key)
    {
        bool rekeyed = false;
        try
        {
            rekeyed = !held.IsFaulted && held.TryRekey(key);
        }
        finally
        {
            if (!rekeyed)
            {
                GiveBack(held);
            }
        }

        if (rekeyed)
        {
            // A new epoch's key is version 0 (a later rewrite of it makes this handle's version old, and it is given back).
            held.KeyVersion = 0;
            CachedAesMetrics.HandleRekeyed();
            if (OwnershipAudit.Enabled)
            {
                OwnershipAudit.Give(held, this);
                OwnershipAudit.Take(held, target);
            }

            target.Adopt(held);
        }
    }

    // Takes a handle that a key change re-keyed to this epoch: into its empty inline slot, or back to the backend.
    private void Adopt(BlockCipher cipher)
    {
        HandleSlots slots = EnsureSlots();
        ref Slot slot = ref slots.Inline(cipher.Mode, cipher.Encrypting);
        if (Volatile.Read(ref slots.Shared) is not null || !slot.TryHold())
        {
            GiveBack(cipher);
            return;
        }

        if (slot.Handle is not null)
        {
            slot.Let();
            GiveBack(cipher);
            return;
        }

        slot.Set(cipher);
        slot.Let();

        // The compare-exchange that held the slot is a full fence: a close or key change that missed the handle is seen
        // here.
        if (IsStale(cipher))
        {
            GiveBackFromSlot(ref slot, cipher);
        }
    }
}
