using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// Native memory for one key at a time (never moved or copied by the collector), owned by one key epoch at a time and
/// pooled once its owner has closed it. Not finalizable: an owner dropped without closing it is found through a weak
/// handle by the reclaimer (<c>Reclaimer.cs</c>), which goes through the list of every memory kept here.
/// </summary>
/// <remarks>
/// <para><b>The state word</b> (docs/design-notes.md, "Ownership", table M): the generation (bits 32-63), the references
/// readers hold (bits 2-31) and the phase (bits 0-1): <see cref="Pooled"/> (zeroed, no owner), <see cref="Owned"/> (one
/// owner; references may be taken) or <see cref="Closed"/> (the owner let go, or the reclaimer found it dropped; no new
/// reference; the last one out recycles). Every rent moves the generation on, so each owner's tenure has a generation of
/// its own and nothing done under an older one can succeed under a newer one. Every transition is a compare-exchange on
/// the exact state it starts from; one that finds another state is a broken invariant and throws
/// (<see cref="Invariant"/>), never a silent second close.</para>
/// <para><b>The weak handle</b> points at the owner for the whole of its tenure (set before the memory is published as
/// owned, and not changed until the next rent): it reads null only once the collector has found the owner unreachable
/// for good, and an owner keeps itself reachable until its own close has finished (<c>KeyEpoch.cs</c>), so the
/// reclaimer can close a memory only for an owner that will never act on it again.</para>
/// <para><b>The pool</b> (<see cref="PerProcessorStacks{T}"/>): instances never disposed take, between two collections,
/// about what the reclaimer recycled after the last one, so the pool holds what such code uses while it keeps coming. At
/// most every <see cref="TrimIntervalMilliseconds"/> (the reclaimer's sweep calls <see cref="TrimPool()"/>) the memory
/// each stack held all the time since the last trim is freed, keeping <see cref="FloorPerStack"/> per stack.</para>
/// <para><b>The list</b> of every memory, from its creation to its free (an array and a lock: memories are made and freed
/// rarely once warm), which the reclaimer goes through after each collection (<see cref="AddMayBeDropped"/>).</para>
/// </remarks>
internal sealed unsafe class KeyMemory
{
    /// <summary>The size of the memory: the longest AES key.</summary>
    internal const int Size = 32;

    private const long PhaseMask = 3, Pooled = 0, Owned = 1, Closed = 2;
    private const long OneReference = 4;
    private const long OneGeneration = 1L << 32, GenerationMask = ~(OneGeneration - 1);
    private const long ReferenceMask = ~GenerationMask & ~PhaseMask;

    /// <summary>How many pooled memories each stack keeps through a trim, however few were used.</summary>
    internal const int FloorPerStack = 8;

    /// <summary>The shortest time between two trims of the pool (as long as the OpenSSL context pool's idle time).</summary>
    internal const int TrimIntervalMilliseconds = 10_000;

    /// <summary>
    /// The longest list that <see cref="SweepMayFindWork"/> goes through itself (on the finalizer thread, which other
    /// finalizers wait behind): 1,024 reads of a state and a weak handle, a few microseconds.
    /// </summary>
    internal const int SweepCheckLimit = 1_024;

    private static readonly PerProcessorStacks<KeyMemory> s_pool = new();
    private static long s_trimmedAt = Environment.TickCount64;
    private static long s_created;

    private static readonly Lock s_listLock = new();
    private static KeyMemory?[] s_list = new KeyMemory?[64];
    private static int s_listed;

    // Where this memory is in the list (written under its lock).
    private int _listIndex = -1;

    // Zero unless owned. Null once freed.
    private byte* _bytes;

    // Generation | references | phase (see the remarks).
    private long _state;

    // Weak, tracking resurrection: the owner during its tenure, null while pooled. Allocated once, freed with the memory.
    private GCHandle _owner;

    // The owner's handle slots, once it caches a handle: what the reclaimer gives back if the owner is dropped.
    private HandleSlots? _ownerSlots;

    private KeyMemory()
    {
        _bytes = (byte*)NativeMemory.AllocZeroed(Size);
        _owner = GCHandle.Alloc(null, GCHandleType.WeakTrackResurrection);
        Interlocked.Increment(ref s_created);
        lock (s_listLock)
        {
            if (s_listed == s_list.Length)
            {
                Array.Resize(ref s_list, 2 * s_listed);
            }

            _listIndex = s_listed;
            s_list[s_listed++] = this;
        }
    }

    /// <summary>
    /// A test seam: runs at the start of <see cref="Close"/>, where a collection can happen in optimized code (the
    /// compare-exchange loop below is a safe point). Tests collect and sweep there.
    /// </summary>
    internal static Action? BeforeClose { get; set; }

    /// <summary>How many have been made in this process (a test seam).</summary>
    internal static long Created => Interlocked.Read(ref s_created);

    /// <summary>When the pool was last trimmed, on <see cref="Environment.TickCount64"/>'s clock (a test seam).</summary>
    internal static long TrimmedAt => Volatile.Read(ref s_trimmedAt);

    /// <summary>How many memories the list holds now (a test seam).</summary>
    internal static int Listed
    {
        get
        {
            lock (s_listLock)
            {
                return s_listed;
            }
        }
    }

    /// <summary>How many memories wait in the pool (a test seam).</summary>
    internal static int PooledCount => s_pool.Count;

    /// <summary>How many stacks the pool has (one per processor, up to 64; a test seam).</summary>
    internal static int PoolStacks => s_pool.Stacks;

    /// <summary>
    /// The bytes; only between <see cref="TryAddRef"/> and <see cref="Release"/>, or for the owner's first write and its
    /// rewrites under its instance's lifecycle lock (<c>KeyEpoch.WriteKey</c>, where the tenure cannot end).
    /// </summary>
    public Span<byte> Bytes => new(_bytes, Size);

    /// <summary>
    /// Whether the owner of <paramref name="generation"/> has closed the memory and no reference is left: it was zeroed,
    /// and pooled or freed (a test seam).
    /// </summary>
    internal bool IsReleasedFor(long generation)
    {
        long state = Volatile.Read(ref _state);
        return (state & GenerationMask) != generation || (state & PhaseMask) == Pooled;
    }

    /// <summary>A cheap first test for the reclaimer: owned, and the owner unreachable (the weak handle reads null).</summary>
    internal bool MayBeDropped => (Volatile.Read(ref _state) & PhaseMask) == Owned && _owner.Target is null;

    /// <summary>Memory for <paramref name="owner"/>'s key (zeroed), pooled or new: transition M1.</summary>
    /// <param name="owner">The epoch that owns it until it closes it, or until the collector finds it unreachable.</param>
    /// <param name="generation">The generation of this tenure, for <see cref="TryAddRef"/> and <see cref="Close"/>.</param>
    public static KeyMemory Rent(object owner, out long generation)
    {
        KeyMemory memory = s_pool.TryTake() ?? new KeyMemory();
        long pooled = Volatile.Read(ref memory._state);
        Invariant.Check((pooled & ~GenerationMask) == Pooled, "a key memory taken from the pool is pooled, with no reference");

        // The weak handle first, then the phase (a full fence): whoever reads Owned under this generation reads this
        // owner, or null once the collector has found it gone.
        memory._owner.Target = owner;
        long owned = (pooled & GenerationMask) + OneGeneration + Owned;
        Invariant.Check(Interlocked.CompareExchange(ref memory._state, owned, pooled) == pooled, "nobody else changes a key memory being rented");
        generation = owned & GenerationMask;
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Take(memory, owner);
        }

        return memory;
    }

    /// <summary>
    /// Records the owner's handle slots, for the reclaimer should the owner be dropped, and counts them in their
    /// backend's bound on cached keys (<see cref="HandleSlots.Budget"/>) until the memory is recycled. Only once per
    /// tenure, under a reference taken with the owner's generation (so the memory is still the owner's, and is not
    /// recycled meanwhile).
    /// </summary>
    public void AttachSlots(HandleSlots slots)
    {
        Invariant.Check(Interlocked.Exchange(ref _ownerSlots, slots) is null, "an owner attaches its handle slots once");
        slots.Budget.Added();
    }

    /// <summary>
    /// Transition M2: takes a reference that keeps the memory allocated and its owner's; false once the tenure of
    /// <paramref name="generation"/> is closed.
    /// </summary>
    public bool TryAddRef(long generation)
    {
        long state = Volatile.Read(ref _state);

        // Progress by construction: a failed compare-exchange means another reader added or released a reference (each
        // does so once per use) or the phase moved on, which ends the loop.
        while ((state & (GenerationMask | PhaseMask)) == (generation | Owned))
        {
            long seen = Interlocked.CompareExchange(ref _state, state + OneReference, state);
            if (seen == state)
            {
                return true;
            }

            state = seen;
        }

        return false;
    }

    /// <summary>Transition M3: gives back a reference; the last one after a close recycles the memory (M6).</summary>
    public void Release()
    {
        long state = Interlocked.Add(ref _state, -OneReference);
        Invariant.Check((state & ReferenceMask) != ReferenceMask, "a key memory's references never go below zero");
        if ((state & (ReferenceMask | PhaseMask)) == Closed)
        {
            Recycle(state);
        }
    }

    /// <summary>
    /// Transition M4: the owner of <paramref name="generation"/> lets go (once): no new reference can be taken, and the
    /// memory is recycled as soon as none is held. Throws if the tenure is not the owner's open one: a second close, or a
    /// close after the reclaimer's, is a broken invariant, never done quietly.
    /// </summary>
    public void Close(long generation)
    {
        BeforeClose?.Invoke();
        long state = Volatile.Read(ref _state);

        // Progress by construction: only readers change the state of an open tenure (references up and down), and each
        // failed compare-exchange means one of them did.
        while (true)
        {
            Invariant.Check((state & (GenerationMask | PhaseMask)) == (generation | Owned), "only the owner of an open key memory closes it, once");
            long seen = Interlocked.CompareExchange(ref _state, state - Owned + Closed, state);
            if (seen == state)
            {
                break;
            }

            state = seen;
        }

        if ((state & ReferenceMask) == 0)
        {
            Recycle(state - Owned + Closed);
        }
    }

    /// <summary>
    /// Transition M5, for the reclaimer: if the owner is unreachable (the weak handle reads null while the memory is owned)
    /// closes the memory on its behalf and returns true, with the handle slots it attached (nothing else can reach them
    /// now), or null. False when the owner is alive, or the tenure ended meanwhile.
    /// </summary>
    /// <remarks>
    /// The state is read before the weak handle, and the handle's target is set before a tenure is published: a null
    /// read after an owned state of generation g therefore means that g's owner is gone (docs/design-notes.md,
    /// "Ownership", the reclaimer's argument). The compare-exchange then fails if the tenure has moved on.
    /// </remarks>
    internal bool TryCloseDropped(out HandleSlots? slots)
    {
        slots = null;
        long state = Volatile.Read(ref _state);
        if ((state & PhaseMask) != Owned || _owner.Target is not null)
        {
            return false;
        }

        long tenure = state & (GenerationMask | PhaseMask);
        HandleSlots? ownerSlots = Volatile.Read(ref _ownerSlots);

        // Progress by construction: the owner is gone, so only readers that still held a reference can change the
        // state (each releases once), and a change of tenure ends the loop.
        while (true)
        {
            long seen = Interlocked.CompareExchange(ref _state, state - Owned + Closed, state);
            if (seen == state)
            {
                break;
            }

            if ((seen & (GenerationMask | PhaseMask)) != tenure)
            {
                return false;
            }

            state = seen;
        }

        slots = ownerSlots;
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.GiveDropped(this);
        }

        if ((state & ReferenceMask) == 0)
        {
            Recycle(state - Owned + Closed);
        }

        return true;
    }

    /// <summary>The memories that are owned and whose weak handle reads null, added to <paramref name="candidates"/> (for the reclaimer).</summary>
    internal static void AddMayBeDropped(List<KeyMemory> candidates)
    {
        lock (s_listLock)
        {
            for (int i = 0; i < s_listed; i++)
            {
                KeyMemory memory = s_list[i]!;
                if (memory.MayBeDropped)
                {
                    candidates.Add(memory);
                }
            }
        }
    }

    /// <summary>
    /// Whether a sweep now could find work: a memory that may be dropped (<see cref="MayBeDropped"/>), or a trim of the
    /// pool that is due. The same reads a sweep makes first, stopping at the first memory found, and only over a list of
    /// at most <see cref="SweepCheckLimit"/> memories (a longer list answers true: the sweep itself goes through it, on
    /// the thread pool). After a collection, the reclaimer queues a sweep only when this is true.
    /// </summary>
    internal static bool SweepMayFindWork()
    {
        if (Environment.TickCount64 - Volatile.Read(ref s_trimmedAt) >= TrimIntervalMilliseconds)
        {
            return true;
        }

        lock (s_listLock)
        {
            if (s_listed > SweepCheckLimit)
            {
                return true;
            }

            for (int i = 0; i < s_listed; i++)
            {
                if (s_list[i]!.MayBeDropped)
                {
                    return true;
                }
            }
        }

        return false;
    }

    /// <summary>
    /// At most once per <see cref="TrimIntervalMilliseconds"/> (calls in between do nothing): frees the pooled memory
    /// each stack held all the time since the last trim, beyond <see cref="FloorPerStack"/>; returns how many it freed.
    /// </summary>
    internal static int TrimPool() => TrimPool(Environment.TickCount64);

    /// <summary><see cref="TrimPool()"/> as if the clock read <paramref name="now"/> (a test seam).</summary>
    internal static int TrimPool(long now)
    {
        long last = Volatile.Read(ref s_trimmedAt);
        if (now - last < TrimIntervalMilliseconds || Interlocked.CompareExchange(ref s_trimmedAt, now, last) != last)
        {
            return 0;
        }

        List<KeyMemory> unused = s_pool.TakeUnused(FloorPerStack);
        foreach (KeyMemory memory in unused)
        {
            memory.Free();
        }

        return unused.Count;
    }

    // M7: frees a pooled memory for good (the pool's trim): it stays closed, so a reference of any generation fails.
    private void Free()
    {
        long state = Volatile.Read(ref _state);
        Invariant.Check((state & ~GenerationMask) == Pooled, "only a pooled key memory, with no reference, is freed");
        Invariant.Check(Interlocked.CompareExchange(ref _state, state + Closed, state) == state, "nobody else changes a key memory the pool gives up");
        lock (s_listLock)
        {
            int index = _listIndex;
            Invariant.Check(index >= 0 && s_list[index] == this, "a memory is freed once, while listed");
            KeyMemory last = s_list[--s_listed]!;
            s_list[index] = last;
            last._listIndex = index;
            s_list[s_listed] = null;
            _listIndex = -1;
        }

        _owner.Free();
        byte* bytes = _bytes;
        _bytes = null;
        CryptographicOperations.ZeroMemory(new Span<byte>(bytes, Size));
        NativeMemory.Free(bytes);
    }

    // Transition M6, by the one party that saw the tenure closed with no reference left: nobody else can reach the
    // bytes. Zeroed, marked pooled (a reference of this generation fails from here on, and the next rent starts the next
    // one), and pooled.
    private void Recycle(long closed)
    {
        CryptographicOperations.ZeroMemory(Bytes);
        if (_ownerSlots is { } ownerSlots)
        {
            Volatile.Write(ref _ownerSlots, null);
            ownerSlots.Budget.Removed();
        }

        _owner.Target = null;
        long pooled = closed & GenerationMask;
        Invariant.Check(Interlocked.CompareExchange(ref _state, pooled, closed) == closed, "nobody else changes a closed key memory with no reference");
        s_pool.Push(this);
    }
}
