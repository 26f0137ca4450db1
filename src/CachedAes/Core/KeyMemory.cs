using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// Native memory that holds one key at a time (never moved or copied by the collector), owned by one
/// <see cref="KeyEpoch"/> at a time and reused for the next key once its owner lets go or is found dropped. Not
/// finalizable: an owner dropped without being released is found by <see cref="DroppedKeys"/> through a weak handle.
/// </summary>
/// <remarks>
/// <para><b>Why no finalizer.</b> The runtime registers finalizable objects under one lock and runs their finalizers on
/// one thread, so an object with a finalizer per key stops new-instance-per-message code from scaling with cores, and an
/// instance never disposed pays a finalization. A key's memory must still be zeroed when its instance is dropped
/// without <c>Dispose</c>. So each memory keeps, for its whole life, a weak handle that tracks resurrection
/// (<see cref="GCHandleType.WeakTrackResurrection"/>), pointed at its owner while it has one; once the collector has
/// found the owner unreachable (after every finalizer that could still reach it has run), the handle reads null and the
/// sweep after that collection zeroes the memory, gives back the handles the owner cached (<see cref="HandleSlots"/>,
/// attached with <see cref="AttachSlots"/>) and recycles the memory.</para>
/// <para><b>References.</b> Every read or write of the bytes happens between <see cref="TryAddRef"/> and
/// <see cref="Release"/>, with the <em>generation</em> the owner was given: the state word holds the generation (which
/// moves on each time the memory is recycled), a reference count, a held bit and a closed bit. A reference taken with an
/// older generation (a call that read an epoch before it was released) fails instead of reading the next owner's key.
/// <see cref="Close"/> (the owner's release) or <see cref="TryCloseDropped"/> (the sweep's, for an owner the collector
/// found unreachable) stops new references; the last reference to go zeroes the memory and recycles it. The memory is
/// thus never freed, nor given to another key, while anyone reads or writes it.</para>
/// <para><b>Recycling</b>: <c>KeyMemory.Pool.cs</c>.</para>
/// </remarks>
internal sealed unsafe partial class KeyMemory
{
    /// <summary>The size of the memory: the longest AES key.</summary>
    internal const int Size = 32;

    // The state word, from its lowest bit: closed (by the owner, the sweep, or a free: no new reference); held (by an
    // owner or by a thread's cache, which the weak handle then refers to); the references readers and writers hold (bits
    // 2-31); the generation (bits 32-63), one more each time the memory is recycled.
    private const long Closed = 1, Held = Closed << 1, OneReference = Held << 1;
    private const long OneGeneration = 1L << 32, GenerationMask = ~(OneGeneration - 1);
    private const long ReferenceMask = ~GenerationMask & ~(Held | Closed);

    private static long s_created;

    // Zero when idle; the owner's key while owned. Null once freed.
    private byte* _bytes;

    // Generation (bits 32-63), references (bits 2-31), held (bit 1: by an owner, or by a thread's cache), closed (bit 0).
    private long _state;

    // Weak, tracking resurrection: the holder while held (the owning epoch, or the cache array of the thread whose cache
    // holds the memory), null in the shared pool. Allocated once, freed with the memory.
    private GCHandle _owner;

    // The owner's cached handles, once it caches any: what the sweep gives back if the owner is dropped.
    private HandleSlots? _ownerSlots;

    private KeyMemory()
    {
        _bytes = (byte*)NativeMemory.AllocZeroed(Size);
        _owner = GCHandle.Alloc(null, GCHandleType.WeakTrackResurrection);
        Interlocked.Increment(ref s_created);
        DroppedKeys.Register(this);
    }

    /// <summary>How many have been made in this process (a test seam).</summary>
    internal static long Created => Interlocked.Read(ref s_created);

    /// <summary>Where <see cref="DroppedKeys"/> keeps this memory in its list (its own field, written under its lock).</summary>
    internal int RegistryIndex { get; set; } = -1;

    /// <summary>
    /// Whether the owner of <paramref name="generation"/> has closed the memory (or the sweep has, for a dropped owner)
    /// and no reference is left: it was zeroed, then recycled for another key or freed (a test seam).
    /// </summary>
    internal bool IsReleasedFor(long generation)
    {
        long state = Volatile.Read(ref _state);
        return (state & GenerationMask) != generation || (state & (ReferenceMask | Closed)) == Closed;
    }

    /// <summary>
    /// Whether the memory has a holder that has not closed it and that the collector has found unreachable (an owner
    /// dropped without being released, or the cache of a thread that has ended): what the sweep then closes with
    /// <see cref="TryCloseDropped"/>. A cheap first test: the state, then the weak handle.
    /// </summary>
    internal bool MayBeDropped => (Volatile.Read(ref _state) & (Held | Closed)) == Held && _owner.Target is null;

    /// <summary>The bytes; only between <see cref="TryAddRef"/> and <see cref="Release"/>, or for the owner's first write.</summary>
    public Span<byte> Bytes => new(_bytes, Size);

    /// <summary>Memory for <paramref name="owner"/>'s key (zeroed): from this thread's cache, the shared pool, or new.</summary>
    /// <param name="owner">The epoch that will own it until it closes it, or until the collector finds it unreachable.</param>
    /// <param name="generation">The generation the owner passes to <see cref="TryAddRef"/> and <see cref="Close"/>.</param>
    public static KeyMemory Rent(KeyEpoch owner, out long generation)
    {
        KeyMemory memory = TakeCached() ?? TakePooled() ?? new KeyMemory();

        // Open, no reference, and reachable by nobody else but the sweep, which acts only on a held memory whose holder
        // is gone. Taken from this thread's cache it is held already, by the cache, and the handle passes straight from
        // the cache (alive: this thread holds it) to the owner. Otherwise the handle is pointed at the owner first and
        // the held bit published after it (a release), so a sweep that sees the bit reads the new target.
        memory._owner.Target = owner;
        long state = Volatile.Read(ref memory._state);
        Debug.Assert((state & (ReferenceMask | Closed)) == 0);
        generation = state & GenerationMask;
        if ((state & Held) == 0)
        {
            Volatile.Write(ref memory._state, state | Held);
        }

        return memory;
    }

    /// <summary>
    /// Records the owner's handle slots, for the sweep should the owner be dropped. Only under a reference taken with the
    /// owner's generation (so the memory is still the owner's).
    /// </summary>
    public void AttachSlots(HandleSlots slots) => Volatile.Write(ref _ownerSlots, slots);

    /// <summary>
    /// Takes a reference that keeps the memory allocated and its owner's; false if the owner of
    /// <paramref name="generation"/> has closed it.
    /// </summary>
    public bool TryAddRef(long generation)
    {
        long state = Volatile.Read(ref _state);
        while ((state & GenerationMask) == generation && (state & Closed) == 0)
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

    /// <summary>Gives back a reference; the last one after <see cref="Close"/> recycles the memory.</summary>
    public void Release()
    {
        long state = Interlocked.Add(ref _state, -OneReference);
        Debug.Assert((state & ReferenceMask) != ReferenceMask);
        if ((state & (ReferenceMask | Closed)) == Closed)
        {
            Recycle();
        }
    }

    /// <summary>
    /// The owner of <paramref name="generation"/> lets go (once): no new reference can be taken, and the memory is zeroed
    /// and recycled as soon as no reference is held.
    /// </summary>
    public void Close(long generation)
    {
        long state = Interlocked.Or(ref _state, Closed);
        Debug.Assert((state & GenerationMask) == generation && (state & (Closed | Held)) == Held);
        if ((state & ReferenceMask) == 0)
        {
            Recycle();
        }
    }

    /// <summary>
    /// For the sweep: if the holder is unreachable (the weak handle reads null) and has not closed the memory, closes it
    /// on the holder's behalf, as <see cref="Close"/> would, and returns true with the handle slots a dropped owner left
    /// behind (which nothing else can reach now), or null when it cached none (or the holder was an ended thread's
    /// cache). False when the holder is alive, or an owner closed the memory itself meanwhile.
    /// </summary>
    /// <remarks>
    /// The state is read before the weak handle, and the slots before the close: a memory recycled between those reads
    /// has another generation, so the compare-exchange fails and nothing read is used. While a holder is alive the
    /// handle refers to it or to the next holder (a rent writes it before the held bit; a thread's cache hands it
    /// straight to the owner), so a null means the holder is gone: an owner, and with it every call that could take a
    /// reference, or a thread, and with it every rent from its cache. Nothing but the sweep, one at a time, then
    /// changes the state, except a reference still being given back.
    /// </remarks>
    internal bool TryCloseDropped(out HandleSlots? slots)
    {
        slots = null;
        long state = Volatile.Read(ref _state);
        if ((state & (Held | Closed)) != Held || _owner.Target is not null)
        {
            return false;
        }

        HandleSlots? ownerSlots = Volatile.Read(ref _ownerSlots);
        while (true)
        {
            long seen = Interlocked.CompareExchange(ref _state, state | Closed, state);
            if (seen == state)
            {
                break;
            }

            if ((seen & GenerationMask) != (state & GenerationMask) || (seen & (Held | Closed)) != Held)
            {
                return false;
            }

            state = seen;
        }

        slots = ownerSlots;
        if ((state & ReferenceMask) == 0)
        {
            Recycle();
        }

        return true;
    }

    // For good: stays closed, so a reference with any generation fails.
    private void Free()
    {
        Interlocked.Or(ref _state, Closed);
        DroppedKeys.Unregister(this);
        _owner.Free();
        byte* bytes = _bytes;
        _bytes = null;
        CryptographicOperations.ZeroMemory(new Span<byte>(bytes, Size));
        NativeMemory.Free(bytes);
    }
}
