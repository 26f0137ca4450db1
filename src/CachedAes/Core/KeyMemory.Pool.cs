using System;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// Where key memory goes when its owner lets go: this thread's cache, else a shared pool that is trimmed, and where
/// <see cref="Rent"/> finds it again.
/// </summary>
/// <remarks>
/// <para><b>Recycling.</b> A recycled memory goes to the releasing thread's cache (8), else to a shared pool;
/// <see cref="Rent"/> takes from the thread's cache, then from the pool, and makes a new one only when both are empty.
/// A sweep at least <see cref="TrimIntervalMilliseconds"/> after the last trim trims the pool to what went into it or was
/// taken from it since then, whichever is more (<see cref="TrimPool()"/>): instances never disposed take, between two
/// collections, about what the sweep after the first recycled, so the pool holds what such code uses while it keeps
/// coming, and shrinks once it stops. (Trimming per gen-2 collection instead freed memories that were about to be
/// taken when gen-2 collections came often: a test with a 64 KiB gen-0 budget made 49,156 memories for 200,000
/// instances, against at most 20,000.) A memory is a plain object with no finalizer, so it may be recycled on any
/// thread, the finalizer thread included.</para>
/// </remarks>
internal sealed unsafe partial class KeyMemory
{
    /// <summary>How many recycled memories the shared pool keeps through a trim however few were taken from it.</summary>
    internal const int PoolFloor = 64;

    /// <summary>The shortest time between two trims of the shared pool (as long as the OpenSSL context pool's idle time).</summary>
    internal const int TrimIntervalMilliseconds = 10_000;

    private const int CacheCapacity = 8;

    [ThreadStatic]
    private static KeyMemory?[]? t_cache;

    [ThreadStatic]
    private static int t_cached;

    private static readonly Lock s_poolLock = new();
    private static KeyMemory?[] s_pool = new KeyMemory?[PoolFloor];
    private static int s_pooled;
    private static int s_taken;
    private static int s_put;
    private static long s_trimmedAt = Environment.TickCount64;

    /// <summary>How many recycled memories wait in the shared pool (a test seam).</summary>
    internal static int Pooled
    {
        get
        {
            lock (s_poolLock)
            {
                return s_pooled;
            }
        }
    }

    /// <summary>
    /// At most once per <see cref="TrimIntervalMilliseconds"/> (calls in between do nothing): frees the pooled memories
    /// beyond what went into the pool or was taken from it since the last trim, whichever is more (at least
    /// <see cref="PoolFloor"/> are kept); returns how many it freed. Called by each sweep of dropped keys, before it
    /// recycles.
    /// </summary>
    internal static int TrimPool() => TrimPool(Environment.TickCount64);

    /// <summary><see cref="TrimPool()"/> as if the clock (<see cref="Environment.TickCount64"/>) read <paramref name="now"/> (a test seam).</summary>
    internal static int TrimPool(long now)
    {
        KeyMemory?[]? excess = null;
        int freed = 0;
        lock (s_poolLock)
        {
            if (now - s_trimmedAt < TrimIntervalMilliseconds)
            {
                return 0;
            }

            s_trimmedAt = now;
            int keep = Math.Max(Math.Max(s_taken, s_put), PoolFloor);
            s_taken = 0;
            s_put = 0;
            if (s_pooled > keep)
            {
                freed = s_pooled - keep;
                excess = s_pool[keep..s_pooled];
                Array.Clear(s_pool, keep, freed);
                s_pooled = keep;
            }

            if (s_pool.Length > 4 * keep)
            {
                Array.Resize(ref s_pool, 2 * keep);
            }
        }

        if (excess is not null)
        {
            foreach (KeyMemory? memory in excess)
            {
                memory!.Free();
            }
        }

        return freed;
    }

    // Closed, and no reference left: nobody else can reach the bytes. Zeroed, then opened again under the next generation
    // (references of the last owner fail from here on) and put in this thread's cache, held by it (should the thread
    // end, the sweep finds the cache gone and recycles the memory), or in the shared pool.
    private void Recycle()
    {
        CryptographicOperations.ZeroMemory(Bytes);
        Volatile.Write(ref _ownerSlots, null);
        long next = (Volatile.Read(ref _state) & GenerationMask) + OneGeneration;
        KeyMemory?[] cache = t_cache ??= new KeyMemory?[CacheCapacity];
        if (t_cached < cache.Length)
        {
            _owner.Target = cache;
            Volatile.Write(ref _state, next | Held);
            cache[t_cached++] = this;
            return;
        }

        _owner.Target = null;
        Volatile.Write(ref _state, next);
        Pool();
    }

    private void Pool()
    {
        lock (s_poolLock)
        {
            if (s_pooled == s_pool.Length)
            {
                Array.Resize(ref s_pool, 2 * s_pool.Length);
            }

            s_pool[s_pooled++] = this;
            s_put++;
        }
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

    // One from the shared pool, and up to half a cache's worth more into this thread's cache, so that threads that only
    // rent (instances never disposed, whose memories the sweep recycles) take the lock once per few keys.
    private static KeyMemory? TakePooled()
    {
        if (Volatile.Read(ref s_pooled) == 0)
        {
            return null;
        }

        KeyMemory?[] cache = t_cache ??= new KeyMemory?[CacheCapacity];
        lock (s_poolLock)
        {
            if (s_pooled == 0)
            {
                return null;
            }

            KeyMemory? memory = s_pool[--s_pooled];
            s_pool[s_pooled] = null;
            s_taken++;
            while (s_pooled > 0 && t_cached < CacheCapacity / 2)
            {
                KeyMemory cached = s_pool[--s_pooled]!;
                s_pool[s_pooled] = null;
                s_taken++;
                cached._owner.Target = cache;
                Volatile.Write(ref cached._state, cached._state | Held);
                cache[t_cached++] = cached;
            }

            return memory;
        }
    }
}
