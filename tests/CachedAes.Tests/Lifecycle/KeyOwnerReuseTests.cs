using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Core;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// A new instance per message (new, key, one call, <c>Dispose</c>) makes no finalizable object once the thread is warm:
/// the key memory (<see cref="KeyMemory"/>, the one finalizable object behind a key) is reused for the thread's next key.
/// The runtime serializes the registration of finalizable objects across threads, so one per message stops this shape
/// from scaling with cores; the count is the measurable promise. The count is the process's, so this runs alone.
/// </summary>
[Collection(nameof(KeyOwnerReuseTests))]
[CollectionDefinition(nameof(KeyOwnerReuseTests), DisableParallelization = true)]
public class KeyOwnerReuseTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    public void A_million_new_instance_messages_make_a_bounded_number_of_finalizable_key_owners(int threads)
    {
        // The finalizer thread is known once the probe the key memory's type starts has been finalized; memory is reused
        // on any other thread from then on (before, it is freed: the release might be running on the finalizer thread).
        System.Runtime.CompilerServices.RuntimeHelpers.RunClassConstructor(typeof(KeyMemory).TypeHandle);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        byte[] key = RandomNumberGenerator.GetBytes(32), iv = new byte[16], message = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        byte[] expected = stock.EncryptCbc(message, iv);
        const int Messages = 1_000_000;
        int perThread = Messages / threads;
        int wrong = 0;

        // Warm-up: each thread fills its own cache.
        void Run(int count)
        {
            for (int i = 0; i < count; i++)
            {
                using var aes = new CachedAes(backend) { Key = key };
                if (!aes.EncryptCbc(message, iv).AsSpan().SequenceEqual(expected))
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

    private static Barrier Barrier { get; set; } = null!;
}
