using System;
using System.Numerics;
using System.Threading;

namespace CachedCryptography;

/// <summary>
/// How many things of one kind exist right now (native contexts, key schedules, keys with cached handles), updated by
/// every thread that makes or ends one. The count is kept in one cell per processor, each on cache lines of its own,
/// and a thread adds to the cell of the processor it runs on, so threads that make and free objects at once do not take
/// one cache line from each other on every message (a single shared counter did, and capped a new instance per message
/// at about 3x its one-thread rate on 16 cores: docs/design-notes.md, "Thread scaling"). Reading sums the cells; a read
/// while other threads add sees some of their updates and not others: tests read it once every other thread has
/// stopped, and the bound on cached keys (<c>Seam/CachedKeyBudget.cs</c>) reads it as an estimate.
/// </summary>
internal sealed class LiveCount
{
    private static readonly int s_cells = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Clamp(Environment.ProcessorCount, 1, 64));

    private readonly long[] _cells = CacheLineSlots<long>.Create(s_cells);

    /// <summary>The sum of every cell.</summary>
    public int Value
    {
        get
        {
            long sum = 0;
            for (int i = 0; i < s_cells; i++)
            {
                sum += Volatile.Read(ref CacheLineSlots<long>.At(_cells, i));
            }

            return checked((int)sum);
        }
    }

    /// <summary>Adds <paramref name="delta"/> to the cell of the processor this thread runs on (an object freed on another
    /// processor than it was made on leaves one cell above zero and another below: only the sum means anything).</summary>
    public void Add(int delta) => Interlocked.Add(ref CacheLineSlots<long>.At(_cells, Thread.GetCurrentProcessorId() & (s_cells - 1)), delta);
}
