using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// No finalizable object per message: the library's only finalizable types are two per-process callbacks, and key
/// memory (<see cref="KeyMemory"/>) is reused, for a new instance per message (new, key, one call, <c>Dispose</c>) from
/// the thread's cache, and for instances never disposed from the pool the sweep of dropped keys refills after each
/// collection. The runtime serializes the registration of finalizable objects across threads and runs finalizers on
/// one thread, so one per message stops these shapes from scaling with cores; the counts are the measurable promise.
/// The counts are the process's, so this runs alone.
/// </summary>
[Collection(nameof(KeyOwnerReuseTests))]
[CollectionDefinition(nameof(KeyOwnerReuseTests), DisableParallelization = true)]
public class KeyOwnerReuseTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    public void A_million_new_instance_messages_make_a_bounded_number_of_key_memories(int threads)
    {
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        CbcMessage message = CbcMessage.New();
        const int Messages = 1_000_000;
        int perThread = Messages / threads;
        int wrong = 0;

        // Warm-up: each thread fills its own cache.
        void Run(int count)
        {
            for (int i = 0; i < count; i++)
            {
                using var aes = new CachedAes(backend) { Key = message.Key };
                if (!message.IsEncryptedRightBy(aes))
                {
                    Interlocked.Increment(ref wrong);
                }
            }
        }

        var workers = Enumerable.Range(0, threads).Select(_ => new Thread(() =>
        {
            Run(100);
            Barrier.SignalAndWait();
            Run(perThread);
        })).ToList();
        Barrier = new Barrier(threads + 1);
        workers.ForEach(w => w.Start());
        Barrier.SignalAndWait();
        long before = KeyMemory.Created;
        workers.ForEach(w => w.Join());
        long made = KeyMemory.Created - before;

        Assert.Equal(0, wrong);
        Assert.Equal(0, backend.LiveHandles);
        Assert.True(made <= 2 * threads, $"{made} key memories made for {threads * perThread} messages on {threads} threads");
    }

    [Fact]
    public void Instances_never_disposed_reuse_the_key_memory_the_sweep_recycles()
    {
        // 200,000 instances dropped without Dispose, with a collection and a sweep after every 10,000 (as the collections
        // of a real process queue them). The key memories the sweep finds are recycled, so about one round's worth is made,
        // not one per instance (the finalizable key memory of the code before made 200,000).
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        CbcMessage message = CbcMessage.New();
        const int Rounds = 20, PerRound = 10_000;
        int wrong = 0;
        long before = KeyMemory.Created;
        for (int round = 0; round < Rounds; round++)
        {
            DropInstances(backend, message, PerRound, ref wrong);
            TestUtil.CollectDropped();
        }

        long made = KeyMemory.Created - before;
        TestUtil.CollectUntil(() => backend.LiveHandles == 0);
        Assert.Equal(0, wrong);
        Assert.Equal(0, backend.LiveHandles);
        Assert.True(made <= 2 * PerRound, $"{made} key memories made for {Rounds * PerRound} instances never disposed");
    }

    [Fact]
    public void The_pool_of_recycled_key_memory_keeps_what_was_used_and_shrinks_once_unused()
    {
        // 5,000 instances never disposed: the reclaimer recycles their memories into the pool. A trim keeps what went into
        // the pool since the last one; the next, with nothing taken meanwhile, frees all but each stack's floor, and the
        // freed memories leave the reclaimer's list. Clock readings one trim interval apart stand in for the waits (the
        // sweeps the collections queue meanwhile read the real clock, which is earlier, and trim nothing).
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        CbcMessage message = CbcMessage.New();
        int wrong = 0;
        const int Interval = KeyMemory.TrimIntervalMilliseconds;
        int floor = KeyMemory.FloorPerStack * KeyMemory.PoolStacks;
        long now = Environment.TickCount64 + (10 * Interval);

        // Two trims with nothing in between: the pool is down to its floor.
        KeyMemory.TrimPool(now);
        KeyMemory.TrimPool(now + Interval);
        Assert.True(KeyMemory.PooledCount <= floor, $"{KeyMemory.PooledCount} pooled after two trims, floor {floor}");

        // All 5,000 alive at once, then dropped together, so each has a memory of its own whenever collections come.
        DropInstancesTogether(backend, message, 5_000, ref wrong);
        TestUtil.CollectDropped();
        int pooled = KeyMemory.PooledCount;
        Assert.True(pooled >= 4_000, $"{pooled} memories pooled after 5,000 dropped instances were swept");

        // Within the interval nothing is trimmed; after it, what went in since the last trim is kept (at most the floor's
        // worth, left from before, may go).
        Assert.Equal(0, KeyMemory.TrimPool(now + (2 * Interval) - 1));
        int kept = KeyMemory.TrimPool(now + (2 * Interval));
        Assert.True(kept <= floor, $"{kept} of {pooled} pooled memories freed by the trim after they were put in");
        Assert.True(KeyMemory.PooledCount >= pooled - kept);

        // Nothing taken since: all but the floor go, and the freed memories leave the reclaimer's list.
        int listed = KeyMemory.Listed;
        int freed = KeyMemory.TrimPool(now + (3 * Interval));
        Assert.True(freed >= pooled - kept - floor, $"{freed} of {pooled - kept} pooled memories freed");
        Assert.Equal(listed - freed, KeyMemory.Listed);
        Assert.Equal(0, wrong);
    }

    [Fact]
    public void Collections_alone_sweep_a_dropped_instances_key_and_handles()
    {
        // No explicit sweep: the object the reclaimer keeps for finalization after each collection queues one on the thread
        // pool. An instance that cached a handle (its second call's) is dropped; collections alone, with time for a pool
        // thread, give that handle back.
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        DropInstanceWithCachedHandle(backend);
        Assert.Equal(1, backend.LiveHandles);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (backend.LiveHandles != 0 && clock.Elapsed < TimeSpan.FromSeconds(20))
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Thread.Sleep(20);
        }

        Assert.Equal(0, backend.LiveHandles);
        Assert.Equal(1, backend.DroppedReleases);
    }

    [Fact]
    public void The_only_finalizable_types_are_the_two_callbacks_made_once_per_process()
    {
        // A finalizable object per message is what this test class guards against; any new finalizer must be argued for.
        string[] finalizable = [.. typeof(CachedAes).Assembly.GetTypes()
            .Where(type => type.GetMethod("Finalize", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.DeclaredOnly) is not null)
            .Select(type => type.FullName!)
            .Order(StringComparer.Ordinal)];
        Assert.Equal(
            ["CachedCryptography.Backends.OpenSsl.OpenSslContextPool+Gen2Callback", "CachedCryptography.Ownership.Reclaimer+AfterCollection"],
            finalizable);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void DropInstanceWithCachedHandle(CountingBackend backend)
    {
        var aes = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
        aes.EncryptEcb(new byte[16], System.Security.Cryptography.PaddingMode.None);
        aes.EncryptEcb(new byte[16], System.Security.Cryptography.PaddingMode.None);
    }

    // Kept out of line so that no instance stays reachable from this method's frame.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void DropInstancesTogether(CountingBackend backend, CbcMessage message, int count, ref int wrong)
    {
        var instances = new CachedAes[count];
        for (int i = 0; i < count; i++)
        {
            instances[i] = new CachedAes(backend) { Key = message.Key };
            if (!message.IsEncryptedRightBy(instances[i]))
            {
                wrong++;
            }
        }
    }

    // Kept out of line so that no instance stays reachable from this method's frame.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void DropInstances(CountingBackend backend, CbcMessage message, int count, ref int wrong)
    {
        for (int i = 0; i < count; i++)
        {
            var aes = new CachedAes(backend) { Key = message.Key };
            if (!message.IsEncryptedRightBy(aes))
            {
                wrong++;
            }
        }
    }

    private static Barrier Barrier { get; set; } = null!;

    // One 16-byte CBC message under a random 256-bit key, with stock's ciphertext of it: what every instance these tests
    // make encrypts, each output compared with stock's.
    private sealed record CbcMessage(byte[] Key, byte[] Iv, byte[] Plaintext, byte[] Expected)
    {
        public static CbcMessage New()
        {
            byte[] key = RandomNumberGenerator.GetBytes(32), iv = new byte[16], plaintext = RandomNumberGenerator.GetBytes(16);
            using Aes stock = TestUtil.Stock(key);
            return new(key, iv, plaintext, stock.EncryptCbc(plaintext, iv));
        }

        public bool IsEncryptedRightBy(Aes aes) => aes.EncryptCbc(Plaintext, Iv).AsSpan().SequenceEqual(Expected);
    }
}
