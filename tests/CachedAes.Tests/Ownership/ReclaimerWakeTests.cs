using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
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
        Quiet();

        long before = Reclaimer.SweepsQueued;
        for (int i = 0; i < 5; i++)
        {
            Message(dispose: true);
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        long queued = Reclaimer.SweepsQueued - before;
        Assert.True(queued == 0, $"collections after disposed instances queued {queued} sweeps; {State()}");

        Message(dispose: false);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Assert.True(
            Reclaimer.SweepsQueued > before, $"the collection that found a dropped instance queued no sweep; {State()}");
        TestUtil.CollectDropped();
    }

    // Brings the process to where a collection finds no work, or fails saying why not. What earlier tests dropped is
    // closed, and no sweep is still waiting for a pool thread (while one waits, a collection queues no other, so the
    // dropped instance's collection would count none). The pool is trimmed twice with the clock moved on: the second
    // trim frees every pooled memory beyond the floor, so the list is short enough for the finalizer to check (a list
    // longer than KeyMemory.SweepCheckLimit always answers "may find work"; earlier tests can leave that many pooled),
    // and the next trim is not due for 20 seconds at least. Another thread may still drop an instance of its own, so
    // this retries for a while before it gives up.
    private static void Quiet()
    {
        long deadline = Environment.TickCount64 + 30_000;
        while (true)
        {
            TestUtil.CollectDropped();
            long clock = Math.Max(Environment.TickCount64, KeyMemory.TrimmedAt);
            _ = KeyMemory.TrimPool(clock + KeyMemory.TrimIntervalMilliseconds);
            _ = KeyMemory.TrimPool(clock + (2 * KeyMemory.TrimIntervalMilliseconds));
            while (Reclaimer.SweepWaiting && Environment.TickCount64 < deadline)
            {
                Thread.Sleep(1);
            }

            if (!Reclaimer.SweepWaiting && !KeyMemory.SweepMayFindWork())
            {
                return;
            }

            if (Environment.TickCount64 > deadline)
            {
                Assert.Fail($"no quiet moment in 30 seconds; {State()}");
            }

            Thread.Sleep(10);
        }
    }

    private static string State()
    {
        var mayBeDropped = new List<KeyMemory>();
        KeyMemory.AddMayBeDropped(mayBeDropped);
        return $"listed {KeyMemory.Listed} (check limit {KeyMemory.SweepCheckLimit}), may be dropped {mayBeDropped.Count}, "
            + $"sweep waiting {Reclaimer.SweepWaiting}, trimmed {Environment.TickCount64 - KeyMemory.TrimmedAt} ms ago";
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
