using System;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;

namespace CachedCryptography.Backends.OpenSsl;

/// <summary>
/// Empty (reset, keyless) OpenSSL cipher contexts waiting for their next owner, so that a new
/// <see cref="CachedAes"/> re-keys one instead of allocating a context and its managed owner.
/// </summary>
/// <remarks>
/// <para>Why it pays: keying a reset context and resetting it again costs less than <c>EVP_CIPHER_CTX_new</c> + init +
/// <c>EVP_CIPHER_CTX_free</c>, and the managed object is reused; cleansing by re-keying with zeros instead of a reset
/// would cost more than a new context (figures: docs/design-notes.md, "The OpenSSL context pool").</para>
/// <para>What it may hold: only <see cref="OpenSslCipher"/> objects, which are not finalizable and own their context
/// directly. So nothing in the pool can be finalized or freed by anyone but the pool, whichever thread gave it back
/// (docs/design-notes.md, "Ownership").</para>
/// <para>Bounds: at most <see cref="Capacity"/> contexts (four per processor, between 8 and 256). Nothing in the pool
/// holds a key: a context is reset (its key schedule cleansed) before it is returned. On every gen-2 garbage collection
/// the pool frees the contexts idle for <see cref="IdleMilliseconds"/> or longer (their idle time starts at the last
/// gen-2 collection before they came back, so it is counted short by at most one interval between two), and all of them
/// when the system reports high memory load, much as <c>ArrayPool&lt;T&gt;.Shared</c> trims itself.</para>
/// <para>Slots are taken with <see cref="Interlocked.Exchange{T}(ref T, T)"/> and filled with
/// <see cref="Interlocked.CompareExchange{T}(ref T, T, T)"/>, so a context is never handed to two owners.</para>
/// </remarks>
internal sealed class OpenSslContextPool
{
    /// <summary>The most contexts the pool keeps.</summary>
    internal static readonly int Capacity = Math.Clamp(4 * Environment.ProcessorCount, 8, 256);

    /// <summary>How long a pooled context may stay unused before a gen-2 collection frees it.</summary>
    internal const int IdleMilliseconds = 10_000;

    // Each slot on cache lines of its own, so that threads renting and returning at once (each starting at a slot of its
    // own) do not take one line from each other on every message, as adjacent slots did (docs/design-notes.md, "Thread
    // scaling").
    private readonly OpenSslCipher?[] _slots = CacheLineSlots<OpenSslCipher?>.Create(Capacity);
    private readonly LiveCount _contexts = new();

    // Environment.TickCount64 as of the last gen-2 callback: what a returned context records as the start of its idle
    // time, so that giving a context back reads no clock (a clock read costs as much as the rest of the return).
    private long _coarseNow = Environment.TickCount64;

    public OpenSslContextPool() => _ = new Gen2Callback(this, _slots);

    /// <summary>Native contexts of this pool's backend that exist right now, pooled or in use (a test seam; one increment
    /// per native allocation or free, too small to measure beside them).</summary>
    internal int LiveContexts => _contexts.Value;

    /// <summary>The count behind <see cref="LiveContexts"/>, which outlives the pool (a test seam: a test holds it to see
    /// that a pool collected with contexts in it freed them).</summary>
    internal LiveCount Contexts => _contexts;

    /// <summary>How many contexts the pool holds right now (a test seam).</summary>
    internal int Count => PooledContexts.Length;

    /// <summary>The native contexts the pool holds right now (a test seam: each must hold no key).</summary>
    internal IntPtr[] PooledContexts =>
        [.. Enumerable.Range(0, Capacity).Select(i => CacheLineSlots<OpenSslCipher?>.At(_slots, i)).OfType<OpenSslCipher>().Select(cipher => cipher.Context)];

    /// <summary>A pooled context, or null when the pool is empty.</summary>
    public OpenSslCipher? TryRent()
    {
        OpenSslCipher?[] slots = _slots;
        int index = StartIndex();
        for (int i = 0; i < Capacity; i++, index = index + 1 == Capacity ? 0 : index + 1)
        {
            ref OpenSslCipher? slot = ref CacheLineSlots<OpenSslCipher?>.At(slots, index);
            if (Volatile.Read(ref slot) is not null && Interlocked.Exchange(ref slot, null) is { } cipher)
            {
                return cipher;
            }
        }

        return null;
    }

    /// <summary>Pools a reset context; false when the pool is full (the caller frees it).</summary>
    public bool TryReturn(OpenSslCipher cipher)
    {
        cipher.IdleSince = Volatile.Read(ref _coarseNow);
        OpenSslCipher?[] slots = _slots;
        int index = StartIndex();
        for (int i = 0; i < Capacity; i++, index = index + 1 == Capacity ? 0 : index + 1)
        {
            ref OpenSslCipher? slot = ref CacheLineSlots<OpenSslCipher?>.At(slots, index);
            if (Volatile.Read(ref slot) is null && Interlocked.CompareExchange(ref slot, cipher, null) is null)
            {
                return true;
            }
        }

        return false;
    }

    internal void OnContextAllocated() => _contexts.Add(1);

    internal void OnContextFreed() => _contexts.Add(-1);

    /// <summary>Frees pooled contexts idle for <paramref name="minimumIdleMilliseconds"/> or longer; returns how many.</summary>
    internal int Trim(long minimumIdleMilliseconds)
    {
        int freed = 0;
        long now = Environment.TickCount64;
        OpenSslCipher?[] slots = _slots;
        for (int i = 0; i < Capacity; i++)
        {
            ref OpenSslCipher? slot = ref CacheLineSlots<OpenSslCipher?>.At(slots, i);
            if (Volatile.Read(ref slot) is not { } candidate || now - candidate.IdleSince < minimumIdleMilliseconds)
            {
                continue;
            }

            if (Interlocked.CompareExchange(ref slot, null, candidate) == candidate)
            {
                candidate.Discard();
                freed++;
            }
        }

        return freed;
    }

    // Threads start their search at different slots, so that concurrent owners rarely contend for one.
    private static int StartIndex() => (int)((uint)Environment.CurrentManagedThreadId % (uint)Capacity);

    /// <summary>
    /// An object that is finalized at every gen-2 collection (it re-registers itself) and trims the pool then. It holds
    /// the pool through a weak <see cref="GCHandle"/> (a struct, not a finalizable <c>WeakReference</c>, which could be
    /// finalized in the same batch as this object), so a pool that is no longer used (a test's, or a backend's that was
    /// dropped) can be collected, and the pool's slots array strongly: once the pool is gone, the last callback frees
    /// the contexts still in it and ends the callbacks. Nothing else can reach those contexts any more (a context in use
    /// refers to its pool, which would keep the pool alive), so the callback is their only owner then. Its finalizer
    /// frees only pooled contexts and touches no other finalizable object.
    /// </summary>
    private sealed class Gen2Callback
    {
        private readonly OpenSslCipher?[] _slots;
        private GCHandle _pool;

        public Gen2Callback(OpenSslContextPool pool, OpenSslCipher?[] slots)
        {
            _pool = GCHandle.Alloc(pool, GCHandleType.Weak);
            _slots = slots;
        }

        ~Gen2Callback()
        {
            if (_pool.Target is not OpenSslContextPool pool)
            {
                _pool.Free();
                for (int i = 0; i < Capacity; i++)
                {
                    Interlocked.Exchange(ref CacheLineSlots<OpenSslCipher?>.At(_slots, i), null)?.Discard();
                }

                return;
            }

            Volatile.Write(ref pool._coarseNow, Environment.TickCount64);
            GCMemoryInfo memory = GC.GetGCMemoryInfo();
            bool highLoad = memory.HighMemoryLoadThresholdBytes > 0 && memory.MemoryLoadBytes >= memory.HighMemoryLoadThresholdBytes / 10 * 9;
            pool.Trim(highLoad ? 0 : IdleMilliseconds);
            GC.ReRegisterForFinalize(this);
        }
    }
}
