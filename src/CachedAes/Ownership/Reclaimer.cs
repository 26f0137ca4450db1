using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// Finds keys whose owner was dropped without being closed (an instance or a transform never disposed) once the
/// collector has found the owner unreachable, closes and recycles their key memory, and gives back the handles the owner
/// cached. The one place that does what a finalizer per key would, without one.
/// </summary>
/// <remarks>
/// <para><b>What it goes through.</b> The list of every <see cref="KeyMemory"/> in the process (kept by
/// <see cref="KeyMemory"/>). Each memory holds its owner through a weak handle, so the list keeps no owner alive.</para>
/// <para><b>When it runs.</b> After every collection an object with a finalizer of its own (<see cref="AfterCollection"/>,
/// one at a time, made again by its finalizer) looks for work, stopping at the first it finds (a memory that may be
/// dropped, a trim of the pool due, or handles still queued: <see cref="KeyMemory.SweepMayFindWork"/>), and queues one
/// sweep on the thread pool only if there is some. Most collections of a program that disposes what it makes find none,
/// and a work item queued for nothing woke a pool thread, which then spun looking for more work, after every
/// collection (docs/design-notes.md, "A sweep only when there is work").
/// The sweep picks, under the list's lock, the memories that are owned and whose weak handle reads null, and closes each
/// on its dead owner's behalf (<see cref="KeyMemory.TryCloseDropped"/>, transition M5), which recycles the memory; the
/// handles the owner cached go into a queue of handles to give back.</para>
/// <para><b>Keeping up.</b> Giving a handle back is the expensive part (a native reset or free). The sweep gives back
/// what is queued, and so does every thread that makes a new handle (<see cref="Help"/>, a few at a time), so
/// reclaiming runs on as many threads as drop instances and keeps up with them however many there are, even when the
/// thread pool gets little processor time. The sweep also trims the pool of key memory (<see cref="KeyMemory.TrimPool()"/>).</para>
/// </remarks>
internal static class Reclaimer
{
    // How many dropped epochs' handles a thread that makes a handle gives back first, when some are queued.
    private const int HelpBatch = 2;

    private static readonly Lock s_sweepLock = new();
    private static readonly List<KeyMemory> s_candidates = [];
    private static readonly ConcurrentQueue<HandleSlots> s_dropped = new();
    private static int s_queuedSweep;

    // Sweeps queued after collections so far (a test seam); written by the finalizer thread only.
    private static long s_sweepsQueued;
    private static int s_armed;
    // Dropped epochs' slots queued or being given back now: counted from their sweep until every handle in them was
    // given back, not only until they are dequeued.
    private static int s_droppedCount;

    [ThreadStatic]
    private static bool t_givingBack;

    /// <summary>How many sweeps collections have queued so far (a test seam).</summary>
    internal static long SweepsQueued => Volatile.Read(ref s_sweepsQueued);

    /// <summary>
    /// Whether a sweep a collection queued has not started yet (a test seam): while one waits, a collection queues no
    /// other, however much work it finds.
    /// </summary>
    internal static bool SweepWaiting => Volatile.Read(ref s_queuedSweep) != 0;

    /// <summary>True while this thread gives back a dropped epoch's handles (a test seam: counting backends tell those apart).</summary>
    internal static bool OnReclaimingThread => t_givingBack;

    /// <summary>Starts the sweeps after collections, once (called by every new key epoch: one read once started).</summary>
    internal static void Arm()
    {
        if (Volatile.Read(ref s_armed) == 0 && Interlocked.Exchange(ref s_armed, 1) == 0)
        {
            _ = new AfterCollection();
        }
    }

    /// <summary>
    /// Gives back up to a few queued dropped epochs' handles, if any are queued: called by every thread about to make a
    /// handle. One read when nothing is queued (or a dequeue that finds nothing, while another thread gives back the last).
    /// </summary>
    internal static void Help()
    {
        if (Volatile.Read(ref s_droppedCount) != 0)
        {
            GiveBackQueued(HelpBatch);
        }
    }

    /// <summary>
    /// One sweep now, and every queued handle given back by this thread; returns how many dropped keys it found (a test
    /// seam, after the test has collected). A sweep on a pool thread may have dequeued slots just before and still be
    /// giving them back when this returns: <see cref="WaitUntilGivenBack"/> waits for those.
    /// </summary>
    internal static int SweepNow()
    {
        int found = Sweep();
        GiveBackQueued(int.MaxValue);
        return found;
    }

    /// <summary>
    /// Gives back what is queued and waits until no thread is giving back a dropped epoch's handles any more (a test seam,
    /// for a test that has collected and swept and then counts what was given back). Each wait is for work another thread
    /// has taken and is doing (a bounded number of native releases), so it ends; should a release hang, this gives up
    /// with a <see cref="TimeoutException"/> after <paramref name="timeout"/> rather than wait for ever.
    /// </summary>
    /// <exception cref="TimeoutException">Give-backs were still in progress after <paramref name="timeout"/>.</exception>
    internal static void WaitUntilGivenBack(TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (true)
        {
            GiveBackQueued(int.MaxValue);
            int pending = Volatile.Read(ref s_droppedCount);
            if (pending == 0)
            {
                return;
            }

            if (Environment.TickCount64 > deadline)
            {
                throw new TimeoutException($"{pending} dropped key epochs' handles were still being given back after {timeout}.");
            }

            Thread.Sleep(1);
        }
    }

    private static int Sweep()
    {
        lock (s_sweepLock)
        {
            KeyMemory.TrimPool();
            List<KeyMemory> candidates = s_candidates;
            KeyMemory.AddMayBeDropped(candidates);

            int found = 0;
            try
            {
                foreach (KeyMemory memory in candidates)
                {
                    if (memory.TryCloseDropped(out HandleSlots? slots))
                    {
                        found++;
                        if (slots is not null)
                        {
                            Interlocked.Increment(ref s_droppedCount);
                            s_dropped.Enqueue(slots);
                        }
                    }
                }
            }
            finally
            {
                candidates.Clear();
            }

            return found;
        }
    }

    // Gives back the handles of up to `batch` queued dropped epochs. Each slots object is dequeued by one thread, which
    // then owns every handle in it (nothing else can reach a dropped epoch's slots). The count drops once its handles are
    // given back, not when it is dequeued, so that a zero count means none is queued and none is in progress.
    private static void GiveBackQueued(int batch)
    {
        t_givingBack = true;
        try
        {
            for (int i = 0; i < batch && s_dropped.TryDequeue(out HandleSlots? slots); i++)
            {
                try
                {
                    CachedAesMetrics.FinalizedHandles.Add(slots.GiveBackDropped());
                }
                finally
                {
                    Interlocked.Decrement(ref s_droppedCount);
                }
            }
        }
        finally
        {
            t_givingBack = false;
        }
    }

    /// <summary>
    /// Finalized after each collection (a new one is made by each finalizer, so one is always young): queues a sweep on
    /// the thread pool when a sweep can find work and none is queued already. Touches no other finalizable object and
    /// frees nothing; it takes the list's lock for as long as reading the memories' states takes, which no thread holds
    /// while waiting for anything.
    /// </summary>
    private sealed class AfterCollection
    {
        ~AfterCollection()
        {
            _ = new AfterCollection();

            // A sweep only when it can find something: a memory this collection may have found dropped, a trim due, or
            // dropped handles still queued. Most collections find none of these (every key closed by its owner), and a
            // work item queued for nothing wakes a pool thread after every collection.
            if ((Volatile.Read(ref s_droppedCount) != 0 || KeyMemory.SweepMayFindWork())
                && Interlocked.Exchange(ref s_queuedSweep, 1) == 0)
            {
                Volatile.Write(ref s_sweepsQueued, s_sweepsQueued + 1);
                ThreadPool.UnsafeQueueUserWorkItem(
                    static _ =>
                    {
                        Volatile.Write(ref s_queuedSweep, 0);
                        Sweep();
                        GiveBackQueued(int.MaxValue);
                    },
                    null);
            }
        }
    }
}
