using System;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>
/// One place for a cached handle: the handle, and whether one party holds the slot (table S of docs/design-notes.md,
/// "Ownership"). Only the party that set <see cref="Busy"/> from 0 to 1 reads or writes <see cref="Handle"/> until it
/// sets it back to 0, so taking a slot is one interlocked operation on an int (no object exchange, no write barrier)
/// and giving it back one plain store.
/// </summary>
internal struct Slot
{
    /// <summary>The handle kept here: idle while <see cref="Busy"/> is 0, in use by the holder while it is 1. Null when empty.</summary>
    public BlockCipher? Handle;

    /// <summary>1 while one party (a call, a sweep, a move) holds the slot; 0 otherwise.</summary>
    public int Busy;

    /// <summary>Takes the slot if nobody holds it: one compare-exchange. Whoever gets true owns the slot, and its handle.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryHold() => Interlocked.CompareExchange(ref Busy, 1, 0) == 0;

    /// <summary>Lets the slot go (the holder only): a release store, after every write to <see cref="Handle"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Let() => Volatile.Write(ref Busy, 0);

    /// <summary>Whether an idle handle waits here (a racy look, for counts and sweeps: act only after <see cref="TryHold"/>).</summary>
    public readonly bool HasIdleHandle => Volatile.Read(in Busy) == 0 && Volatile.Read(in Handle) is not null;

    /// <summary>The holder puts <paramref name="cipher"/> in (or null to empty it), recorded by the audit when it is on.</summary>
    public void Set(BlockCipher? cipher)
    {
        if (OwnershipAudit.Enabled && Handle is { } before)
        {
            OwnershipAudit.InSlot(before, into: false);
        }

        if (OwnershipAudit.Enabled && cipher is not null)
        {
            OwnershipAudit.InSlot(cipher, into: true);
        }

        Handle = cipher;
    }
}

/// <summary>
/// Where one key epoch caches its native handles: one inline slot per mode and direction, then (once two callers meet on
/// one) the shared slots. The lease protocol that fills and empties them is in <c>KeyEpoch.Handles.cs</c>.
/// </summary>
/// <remarks>
/// A separate object from its epoch, made when the epoch caches its first handle and attached to its key memory, so that
/// when the epoch is dropped without being closed the handles are still reachable, and the reclaimer gives them back
/// (<see cref="GiveBackDropped"/>). Fields, not properties: the lease protocol takes references to the slots.
/// </remarks>
internal sealed class HandleSlots
{
    /// <summary>How many handles per mode and direction stay cached at most: the processor count, at least 1, at most 64.</summary>
    internal static readonly int PerMode = Math.Clamp(Environment.ProcessorCount, 1, 64);

    // Where a thread starts looking among the shared slots: threads are numbered in the order they first need one, so
    // that concurrent threads start at different slots.
    [ThreadStatic]
    private static int t_hint;

    private static int s_lastHint;

    /// <summary>Slots for a key of a backend whose bound on cached keys is <paramref name="budget"/>.</summary>
    internal HandleSlots(CachedKeyBudget budget) => Budget = budget;

    /// <summary>The bound these slots count in from when they are attached to their key's memory until it is recycled.</summary>
    internal CachedKeyBudget Budget { get; }

    /// <summary>The inline slots, used until two callers meet on one of them.</summary>
    internal Slot EcbEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal Slot EcbDecrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal Slot CbcEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal Slot CbcDecrypt;

    /// <summary>
    /// The shared slots, once two callers have met; null until then: a <see cref="CacheLineSlots{T}"/> array, in which
    /// slot i of a mode and direction is <see cref="SharedSlot"/>.
    /// </summary>
    internal Slot[]? Shared;

    /// <summary>This thread's starting slot among the shared ones (modulo their count).</summary>
    internal static int ThreadHint
    {
        get
        {
            int hint = t_hint;
            return hint != 0 ? hint : t_hint = Interlocked.Increment(ref s_lastHint) & int.MaxValue;
        }
    }

    /// <summary>Shared slot <paramref name="i"/> for a mode and direction.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref Slot SharedSlot(Slot[] shared, BlockCipherMode mode, bool encrypting, int i) =>
        ref CacheLineSlots<Slot>.At(shared, ((((int)mode * 2) + (encrypting ? 0 : 1)) * PerMode) + i);

    /// <summary>The inline slot for <paramref name="mode"/> and direction.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal ref Slot Inline(BlockCipherMode mode, bool encrypting)
    {
        if (mode == BlockCipherMode.Ecb)
        {
            return ref encrypting ? ref EcbEncrypt : ref EcbDecrypt;
        }

        return ref encrypting ? ref CbcEncrypt : ref CbcDecrypt;
    }

    /// <summary>Whether <paramref name="slot"/> is one of the inline slots.</summary>
    internal bool IsInline(ref Slot slot) =>
        Unsafe.AreSame(ref slot, ref EcbEncrypt) || Unsafe.AreSame(ref slot, ref EcbDecrypt)
        || Unsafe.AreSame(ref slot, ref CbcEncrypt) || Unsafe.AreSame(ref slot, ref CbcDecrypt);

    /// <summary>Makes the shared slots if nobody has yet (the switch is for good).</summary>
    internal void EnsureShared()
    {
        if (Volatile.Read(ref Shared) is null)
        {
            Interlocked.CompareExchange(ref Shared, CacheLineSlots<Slot>.Create(4 * PerMode), null);
        }
    }

    /// <summary>The handle waiting in the inline slot for <paramref name="mode"/> and direction, taken out; null if none.</summary>
    internal BlockCipher? TakeInline(BlockCipherMode mode, bool encrypting)
    {
        ref Slot inline = ref Inline(mode, encrypting);
        if (!inline.HasIdleHandle || !inline.TryHold())
        {
            return null;
        }

        BlockCipher? held = inline.Handle;
        inline.Set(null);
        inline.Let();
        return held;
    }

    /// <summary>
    /// Puts <paramref name="cipher"/> into an empty shared slot of its mode and direction and returns that slot (the caller
    /// then checks that the epoch did not change meanwhile: a full fence came with the hold); a null reference if none is
    /// empty.
    /// </summary>
    internal static ref Slot TryFillFree(Slot[] shared, BlockCipher cipher)
    {
        for (int i = 0; i < PerMode; i++)
        {
            ref Slot free = ref SharedSlot(shared, cipher.Mode, cipher.Encrypting, i);
            if (Volatile.Read(ref free.Busy) == 0 && Volatile.Read(ref free.Handle) is null && free.TryHold())
            {
                if (free.Handle is null)
                {
                    free.Set(cipher);
                    free.Let();
                    return ref free;
                }

                free.Let();
            }
        }

        return ref Unsafe.NullRef<Slot>();
    }

    /// <summary>How many idle handles for a mode and direction the slots hold (a test seam).</summary>
    internal int IdleCount(BlockCipherMode mode, bool encrypting)
    {
        int count = Inline(mode, encrypting).HasIdleHandle ? 1 : 0;
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < PerMode; i++)
            {
                count += SharedSlot(shared, mode, encrypting, i).HasIdleHandle ? 1 : 0;
            }
        }

        return count;
    }

    /// <summary>How many idle handles were keyed with another version than <paramref name="version"/> (a test seam).</summary>
    internal int IdleNotOfVersion(int version)
    {
        int count = Count(EcbEncrypt) + Count(EcbDecrypt) + Count(CbcEncrypt) + Count(CbcDecrypt);
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < CacheLineSlots<Slot>.Count(shared); i++)
            {
                count += Count(CacheLineSlots<Slot>.At(shared, i));
            }
        }

        return count;

        int Count(Slot slot) => slot.HasIdleHandle && slot.Handle!.KeyVersion != version ? 1 : 0;
    }

    /// <summary>
    /// The epoch was dropped without being closed, and the collector has found it unreachable: gives back every handle
    /// in the slots and returns how many. Nothing else can reach these slots any more: a call in flight holds its epoch,
    /// and the epoch is gone, so no slot is held.
    /// </summary>
    internal int GiveBackDropped()
    {
        int released = GiveBack(ref EcbEncrypt) + GiveBack(ref EcbDecrypt) + GiveBack(ref CbcEncrypt) + GiveBack(ref CbcDecrypt);
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < CacheLineSlots<Slot>.Count(shared); i++)
            {
                released += GiveBack(ref CacheLineSlots<Slot>.At(shared, i));
            }
        }

        return released;
    }

    private static int GiveBack(ref Slot slot)
    {
        // A lease references its epoch, so a dropped epoch has no call in flight. A slot still held was abandoned by a
        // call that threw between rent and return (the one-shots return their lease without an exception handler, and
        // only running out of memory for a temporary throws there): nobody can let it go any more, so it is taken as
        // it is.
        _ = slot.TryHold();
        BlockCipher? held = slot.Handle;
        if (held is null)
        {
            slot.Let();
            return 0;
        }

        slot.Set(null);
        slot.Let();
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.GiveDropped(held);
        }

        held.Release();
        return 1;
    }
}
