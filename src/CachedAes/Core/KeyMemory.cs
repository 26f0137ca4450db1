using System;
using System.Diagnostics;
using System.Runtime.ConstrainedExecution;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// Native memory that holds one key at a time (never moved or copied by the collector), owned by one
/// <see cref="KeyEpoch"/> at a time, and reused for the next key once its epoch is released: the one finalizable object
/// that stands for a key, made once per thread's worth of keys rather than once per key.
/// </summary>
/// <remarks>
/// <para><b>Why reused.</b> The runtime serializes the registration of finalizable objects across threads, so an object
/// with a finalizer per message stops new-instance-per-message code from scaling with cores. A key's memory must still
/// be zeroed when its instance is dropped without <c>Dispose</c>, which takes a finalizer. So the finalizable object
/// outlives its key: when the epoch is released, the memory is zeroed and kept in a small per-thread cache, still
/// registered for finalization, and the thread's next key takes it.</para>
/// <para><b>References.</b> Every read or write of the bytes happens between <see cref="TryAddRef"/> and
/// <see cref="Release"/>, with the <em>generation</em> the owner was given: the state word counts references and holds
/// a closed bit and the generation, which moves on each time the memory passes to a new owner. A reference taken with an
/// older generation (a call that read an epoch before it was released) fails instead of reading the next owner's key.
/// <see cref="Close"/> (the owner's release) stops new references; the last reference to go zeroes the memory and
/// recycles it. The memory is thus never freed, nor given to another key, while anyone reads or writes it.</para>
/// <para><b>Finalization.</b> A <see cref="CriticalFinalizerObject"/>: in a collection that finds it unreachable, every
/// normal finalizer (a user's, which may dispose the instance that held it) runs first. Its finalizer zeroes and frees
/// the memory and frees the handles still cached by the epoch it belongs to (<see cref="KeyEpoch.FreeFromFinalizer"/>,
/// plain objects that only that epoch owns); it pools nothing and touches no other finalizable object. Memory is
/// recycled only on a live thread that is known not to be the finalizer thread (<see cref="FinalizerThread"/>): a
/// release on the finalizer thread may concern memory that is itself queued for finalization, which must not come back
/// to life through a cache, so it is freed there instead (and its finalizer, should it be queued, finds nothing left to
/// free).</para>
/// </remarks>
internal sealed unsafe class KeyMemory : CriticalFinalizerObject
{
    /// <summary>The size of the memory: the longest AES key.</summary>
    internal const int Size = 32;

    private const int CacheCapacity = 8;
    private const long Closed = 1;
    private const long OneReference = 2;
    private const long ReferenceMask = 0xFFFF_FFFE;
    private const long OneGeneration = 1L << 32;

    [ThreadStatic]
    private static KeyMemory?[]? t_cache;

    [ThreadStatic]
    private static int t_cached;

    private static long s_created;

    // Zero when idle; the owner's key while owned. Null once freed.
    private byte* _bytes;

    // Generation (bits 32-63), references (bits 1-31), closed (bit 0).
    private long _state;

    // The epoch whose key this holds, for the finalizer; null while cached.
    private KeyEpoch? _owner;

    static KeyMemory() => FinalizerThread.Probe();

    private KeyMemory()
    {
        _bytes = (byte*)NativeMemory.AllocZeroed(Size);
        Interlocked.Increment(ref s_created);
    }

    ~KeyMemory()
    {
        Free();
        _owner?.FreeFromFinalizer();
    }

    /// <summary>How many have been made in this process (a test seam: each is one finalizable object).</summary>
    internal static long Created => Interlocked.Read(ref s_created);

    /// <summary>
    /// Whether the owner of <paramref name="generation"/> has closed the memory and no reference is left: it was zeroed,
    /// then recycled for another key or freed (a test seam).
    /// </summary>
    internal bool IsReleasedFor(long generation)
    {
        long state = Volatile.Read(ref _state);
        return (state & ~(OneGeneration - 1)) != generation || (state & (ReferenceMask | Closed)) == Closed;
    }

    /// <summary>The bytes; only between <see cref="TryAddRef"/> and <see cref="Release"/>, or for the owner's first write.</summary>
    public Span<byte> Bytes => new(_bytes, Size);

    /// <summary>Memory for <paramref name="owner"/>'s key (zeroed), from this thread's cache or new.</summary>
    /// <param name="owner">The epoch that will own it until it closes it.</param>
    /// <param name="generation">The generation the owner passes to <see cref="TryAddRef"/> and <see cref="Close"/>.</param>
    public static KeyMemory Rent(KeyEpoch owner, out long generation)
    {
        KeyMemory memory = TakeCached() ?? new KeyMemory();
        memory._owner = owner;
        generation = Volatile.Read(ref memory._state) & ~(OneGeneration - 1);
        return memory;
    }

    /// <summary>
    /// Takes a reference that keeps the memory allocated and its owner's; false if the owner of
    /// <paramref name="generation"/> has closed it.
    /// </summary>
    public bool TryAddRef(long generation)
    {
        long state = Volatile.Read(ref _state);
        while ((state & ~(OneGeneration - 1)) == generation && (state & Closed) == 0)
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
        Debug.Assert((state & ~(OneGeneration - 1)) == generation && (state & Closed) == 0);
        if ((state & ReferenceMask) == 0)
        {
            Recycle();
        }
    }

    // Closed, and no reference left: nobody else can reach the bytes. Zeroed, then cached for this thread's next key
    // (under a new generation), or freed.
    private void Recycle()
    {
        CryptographicOperations.ZeroMemory(Bytes);
        _owner = null;
        if (FinalizerThread.MayBeCurrent || !TryCache())
        {
            // Stays closed, so a reference with any generation fails; its finalizer, if it is queued, frees nothing.
            Free();
#pragma warning disable CA1816 // not Dispose: the memory is freed for good here, so its finalizer has nothing left to do
            GC.SuppressFinalize(this);
#pragma warning restore CA1816
        }
    }

    private bool TryCache()
    {
        KeyMemory?[] cache = t_cache ??= new KeyMemory?[CacheCapacity];
        if (t_cached == cache.Length)
        {
            return false;
        }

        // Open again under the next generation: references of the last owner fail from here on.
        long state = Volatile.Read(ref _state);
        Volatile.Write(ref _state, (state & ~(OneGeneration - 1)) + OneGeneration);
        cache[t_cached++] = this;
        return true;
    }

    private static KeyMemory? TakeCached()
    {
        if (t_cached == 0)
        {
            return null;
        }

        KeyMemory?[] cache = t_cache!;
        KeyMemory? memory = cache[--t_cached];
        cache[t_cached] = null;
        return memory;
    }

    private void Free()
    {
        byte* bytes = _bytes;
        _bytes = null;
        if (bytes is not null)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(bytes, Size));
            NativeMemory.Free(bytes);
        }
    }
}
