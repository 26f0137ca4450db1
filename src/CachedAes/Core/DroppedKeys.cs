using System;
using System.Collections.Generic;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// Finds keys whose owner was dropped without being released (an instance or a transform never disposed) once the
/// collector has found the owner unreachable: zeroes and recycles the key memory and gives back the handles the owner
/// cached. The one place that does what a finalizer per key would, without one.
/// </summary>
/// <remarks>
/// <para><b>What it holds.</b> Every <see cref="KeyMemory"/> in the process, from its creation to its free, in one list
/// (a list and a lock: memories are made and freed rarely once warm, since they are recycled). Each memory holds its
/// owner through a weak handle, so the list keeps no owner alive.</para>
/// <para><b>When it runs.</b> After every collection: an object with a finalizer of its own (<see cref="AfterCollection"/>,
/// one at a time, made again by its finalizer, so it is always young and each collection finalizes it) queues one sweep
/// on the thread pool. The finalizer does nothing else: the sweep runs on a pool thread, where it may pool what it gives
/// back. <see cref="SweepNow"/> runs one at once (tests, after they have collected).</para>
/// <para><b>What a sweep does.</b> It trims the pool of recycled memories (<see cref="KeyMemory.TrimPool()"/>). Under the
/// list's lock it picks the memories whose owner has not closed them and whose
/// weak handle reads null; outside it, each is closed on its dead owner's behalf (<see cref="KeyMemory.TryCloseDropped"/>),
/// which zeroes and recycles it, and the handles the owner left in its slots are given back to their backends
/// (<see cref="HandleSlots.ReleaseDropped"/>). The cost is one test per memory per collection, and each dropped key is
/// handled once.</para>
/// </remarks>
internal static class DroppedKeys
{
    private static readonly Lock s_lock = new();
    private static readonly Lock s_sweepLock = new();
    private static readonly List<KeyMemory> s_dropped = [];
    private static KeyMemory?[] s_memories = new KeyMemory?[64];
    private static int s_count;
    private static int s_queued;
    private static int s_armed;

    [ThreadStatic]
    private static bool t_sweeping;

    /// <summary>True while this thread gives back a dropped epoch's handles (a test seam: counting backends tell those apart).</summary>
    internal static bool OnSweepThread => t_sweeping;

    /// <summary>How many memories the list holds now (a test seam).</summary>
    internal static int Count
    {
        get
        {
            lock (s_lock)
            {
                return s_count;
            }
        }
    }

    /// <summary>Adds a new memory to the list, and starts the sweeps after collections if they have not started.</summary>
    internal static void Register(KeyMemory memory)
    {
        lock (s_lock)
        {
            if (s_count == s_memories.Length)
            {
                Array.Resize(ref s_memories, s_count * 2);
            }

            memory.RegistryIndex = s_count;
            s_memories[s_count++] = memory;
        }

        if (Volatile.Read(ref s_armed) == 0 && Interlocked.Exchange(ref s_armed, 1) == 0)
        {
            _ = new AfterCollection();
        }
    }

    /// <summary>Takes a memory that is being freed out of the list.</summary>
    internal static void Unregister(KeyMemory memory)
    {
        lock (s_lock)
        {
            int index = memory.RegistryIndex;
            KeyMemory last = s_memories[--s_count]!;
            s_memories[index] = last;
            last.RegistryIndex = index;
            s_memories[s_count] = null;
            memory.RegistryIndex = -1;
        }
    }

    /// <summary>One sweep now; returns how many dropped keys it found (a test seam, after the test has collected).</summary>
    internal static int SweepNow() => Sweep();

    private static int Sweep()
    {
        lock (s_sweepLock)
        {
            KeyMemory.TrimPool();
            List<KeyMemory> dropped = s_dropped;
            lock (s_lock)
            {
                for (int i = 0; i < s_count; i++)
                {
                    KeyMemory memory = s_memories[i]!;
                    if (memory.MayBeDropped)
                    {
                        dropped.Add(memory);
                    }
                }
            }

            int found = 0;
            t_sweeping = true;
            try
            {
                foreach (KeyMemory memory in dropped)
                {
                    if (memory.TryCloseDropped(out HandleSlots? slots))
                    {
                        found++;
                        if (slots is not null)
                        {
                            CachedAesMetrics.FinalizedHandles.Add(slots.ReleaseDropped());
                        }
                    }
                }
            }
            finally
            {
                t_sweeping = false;
                dropped.Clear();
            }

            return found;
        }
    }

    /// <summary>
    /// Finalized after each collection (a new one is made by each finalizer, so one is always young): queues a sweep on
    /// the thread pool unless one is queued already. Touches no other finalizable object and frees nothing.
    /// </summary>
    private sealed class AfterCollection
    {
        ~AfterCollection()
        {
            _ = new AfterCollection();
            if (Interlocked.Exchange(ref s_queued, 1) == 0)
            {
                ThreadPool.UnsafeQueueUserWorkItem(
                    static _ =>
                    {
                        Volatile.Write(ref s_queued, 0);
                        Sweep();
                    },
                    null);
            }
        }
    }
}
