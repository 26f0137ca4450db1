using System;
using System.Threading;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>
/// Empty (reset, keyless) OpenSSL cipher contexts waiting for their next owner, so that a new
/// <see cref="CachedAes"/> re-keys one instead of allocating a context and its managed owner.
/// </summary>
/// <remarks>
/// <para>Why it pays: keying a reset context and resetting it again costs less than <c>EVP_CIPHER_CTX_new</c> + init +
/// <c>EVP_CIPHER_CTX_free</c>, and the managed owner (an object and a finalizable <see cref="SafeEvpCipherCtxHandle"/>)
/// is reused; cleansing by re-keying with zeros instead of a reset would cost more than a new context (figures:
/// docs/design-notes.md, "The OpenSSL context pool").</para>
/// <para>Bounds: at most <see cref="Capacity"/> contexts (four per processor, between 8 and 256). Nothing in the pool
/// holds a key: a context is reset (its key schedule cleansed) before it is returned. On every gen-2 garbage collection
/// the pool frees the contexts idle for <see cref="IdleMilliseconds"/> or longer, and all of them when the system
/// reports high memory load, much as <c>ArrayPool&lt;T&gt;.Shared</c> trims itself.</para>
/// <para>Slots are taken with <see cref="Interlocked.Exchange{T}(ref T, T)"/> and filled with
/// <see cref="Interlocked.CompareExchange{T}(ref T, T, T)"/>, so a context is never handed to two owners.</para>
/// </remarks>
internal sealed class OpenSslContextPool
{
    /// <summary>The most contexts the pool keeps.</summary>
    internal static readonly int Capacity = Math.Clamp(4 * Environment.ProcessorCount, 8, 256);

    /// <summary>How long a pooled context may stay unused before a gen-2 collection frees it.</summary>
    internal const int IdleMilliseconds = 10_000;

    private readonly OpenSslCipher?[] _slots = new OpenSslCipher?[Capacity];
    private int _cleanses;
    private int _contexts;

    public OpenSslContextPool() => _ = new Gen2Callback(this);

    /// <summary>How many contexts have been cleansed (reset) on their way back (a test seam; one uncontended increment beside
    /// a native reset, too small to measure).</summary>
    internal int Cleanses => Volatile.Read(ref _cleanses);

    /// <summary>Native contexts of this pool's backend that exist right now, pooled or in use (a test seam; one increment
    /// per native allocation or free, too small to measure beside them).</summary>
    internal int LiveContexts => Volatile.Read(ref _contexts);

    /// <summary>How many contexts the pool holds right now (a test seam).</summary>
    internal int Count
    {
        get
        {
            int count = 0;
            foreach (OpenSslCipher? slot in _slots)
            {
                count += slot is null ? 0 : 1;
            }

            return count;
        }
    }

    /// <summary>A pooled context, or null when the pool is empty.</summary>
    public OpenSslCipher? TryRent()
    {
        OpenSslCipher?[] slots = _slots;
        int start = StartIndex();
        for (int i = 0; i < slots.Length; i++)
        {
            ref OpenSslCipher? slot = ref slots[(start + i) % slots.Length];
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
        cipher.IdleSince = Environment.TickCount64;
        OpenSslCipher?[] slots = _slots;
        int start = StartIndex();
        for (int i = 0; i < slots.Length; i++)
        {
            ref OpenSslCipher? slot = ref slots[(start + i) % slots.Length];
            if (Volatile.Read(ref slot) is null && Interlocked.CompareExchange(ref slot, cipher, null) is null)
            {
                return true;
            }
        }

        return false;
    }

    internal void OnCleansed() => Interlocked.Increment(ref _cleanses);

    internal void OnContextAllocated() => Interlocked.Increment(ref _contexts);

    internal void OnContextFreed() => Interlocked.Decrement(ref _contexts);

    /// <summary>Frees pooled contexts idle for <paramref name="minimumIdleMilliseconds"/> or longer; returns how many.</summary>
    internal int Trim(long minimumIdleMilliseconds)
    {
        int freed = 0;
        long now = Environment.TickCount64;
        OpenSslCipher?[] slots = _slots;
        for (int i = 0; i < slots.Length; i++)
        {
            if (Volatile.Read(ref slots[i]) is not { } candidate || now - candidate.IdleSince < minimumIdleMilliseconds)
            {
                continue;
            }

            if (Interlocked.CompareExchange(ref slots[i], null, candidate) == candidate)
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
    /// the pool weakly, so a pool that is no longer used (a test's) can be collected, which ends the callbacks.
    /// </summary>
    private sealed class Gen2Callback
    {
        private readonly WeakReference<OpenSslContextPool> _pool;

        public Gen2Callback(OpenSslContextPool pool) => _pool = new WeakReference<OpenSslContextPool>(pool);

        ~Gen2Callback()
        {
            if (!_pool.TryGetTarget(out OpenSslContextPool? pool))
            {
                return;
            }

            GCMemoryInfo memory = GC.GetGCMemoryInfo();
            bool highLoad = memory.HighMemoryLoadThresholdBytes > 0 && memory.MemoryLoadBytes >= memory.HighMemoryLoadThresholdBytes / 10 * 9;
            pool.Trim(highLoad ? 0 : IdleMilliseconds);
            GC.ReRegisterForFinalize(this);
        }
    }
}
