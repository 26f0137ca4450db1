using System;
using System.Runtime.CompilerServices;
using CachedCryptography.Ownership;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// After a collection the reclaimer queues a sweep only when a sweep can find work (docs/design-notes.md, "A sweep only
/// when there is work"): collections in a process whose keys were all closed by their owners wake no pool thread, and a
/// collection that finds an instance dropped without <c>Dispose</c> still queues its sweep. Runs alone: a test on another
/// thread that drops an instance would queue a sweep of its own.
/// </summary>
[Collection(nameof(ReclaimerWakeTests))]
[CollectionDefinition(nameof(ReclaimerWakeTests), DisableParallelization = true)]
public sealed class ReclaimerWakeTests
{
    private static readonly byte[] s_key = new byte[16];
    private static readonly byte[] s_iv = new byte[16];
    private static readonly byte[] s_plaintext = new byte[16];

    [Fact]
    public void Collections_queue_a_sweep_only_when_an_instance_was_dropped()
    {
        Message(dispose: true);

        // What earlier tests dropped is closed now, and the pool's next trim is not due for 20 seconds.
        TestUtil.CollectDropped();
        _ = KeyMemory.TrimPool(Environment.TickCount64 + KeyMemory.TrimIntervalMilliseconds);
        long before = Reclaimer.SweepsQueued;
        for (int i = 0; i < 5; i++)
        {
            Message(dispose: true);
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.Equal(before, Reclaimer.SweepsQueued);

        Message(dispose: false);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Assert.True(Reclaimer.SweepsQueued > before, "the collection that found a dropped instance queued no sweep");
        TestUtil.CollectDropped();
    }

    // A new instance, one message, and Dispose, or the instance dropped (not inlined: nothing of it stays on this frame).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Message(bool dispose)
    {
        var aes = new CachedAes();
        aes.SetKey(s_key);
        if (aes.EncryptCbc(s_plaintext, s_iv).Length != 32)
        {
            Assert.Fail("a 16-byte message did not encrypt to 32 bytes");
        }

        if (dispose)
        {
            aes.Dispose();
        }
    }
}
