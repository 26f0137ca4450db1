using System;
using System.Collections.Generic;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// A pool of objects between owners: cells of one object each in front of one stack per processor (up to 64), each
/// stack under a lock of its own, so that threads taking and giving back at once rarely meet. An object is in one cell,
/// in one stack or with its taker, never two of these (see <see cref="TryTake"/> and <see cref="Push"/>); no thread
/// keeps objects of its own: a cell is shared by every thread whose id leads to it, and the trim empties the cells, so a
/// thread that ends leaves nothing behind for longer than two trims.
/// </summary>
/// <remarks>
/// <para><b>The cells</b> are the fast path of a thread that gives back what it took, as a new instance per message
/// does: a take exchanges its cell for null, and a give fills its cell if empty, with a compare-exchange from null;
/// neither reads the processor number (a call into the system under Wine) nor takes a lock. The cell is picked by the
/// managed thread id, so a thread keeps to its cell wherever it runs; threads whose ids share a cell only take each
/// other's objects sooner, which is still one object to one taker.</para>
/// <para><b>Why an object is never in two places.</b> A cell's object leaves it only by an exchange that reads it and
/// writes null in one atomic step (a take, or the trim), so of any number of threads exchanging the same cell exactly
/// one reads the object, and every other reads null or a later object. An object enters a cell only from its one
/// holder, by a compare-exchange that succeeds only on an empty cell, so nothing already there is overwritten (lost);
/// when it fails the holder still holds the object and pushes it onto a stack instead. Both are full fences, so a taker
/// reads every write its giver made before the give (the key memory's zeroed bytes and pooled state). Neither loops:
/// each cell operation is one attempt, and a miss goes to the stacks, whose operations are under their locks.</para>
/// </remarks>
/// <typeparam name="T">What is pooled.</typeparam>
internal sealed class PerProcessorStacks<T>
    where T : class
{
    private readonly Stack[] _stacks;

    // One object or null per cell, each cell on cache lines of its own (threads giving back at once do not take one
    // line from each other). Four per processor, between 8 and 256, so that up to that many threads have a cell each.
    private readonly T?[] _cells;
    private readonly int _cellCount;

    public PerProcessorStacks()
        : this(Math.Clamp(4 * Environment.ProcessorCount, 8, 256))
    {
    }

    /// <summary>A pool with <paramref name="cells"/> cells (a test seam: few cells, so that threads share them).</summary>
    internal PerProcessorStacks(int cells)
    {
        _cellCount = cells;
        _cells = CacheLineSlots<T?>.Create(_cellCount);
        _stacks = new Stack[Math.Clamp(Environment.ProcessorCount, 1, 64)];
        for (int i = 0; i < _stacks.Length; i++)
        {
            _stacks[i] = new Stack();
        }
    }

    /// <summary>How many stacks there are (one per processor, up to 64).</summary>
    public int Stacks => _stacks.Length;

    /// <summary>How many objects wait in the pool (a test seam).</summary>
    public int Count
    {
        get
        {
            int count = 0;
            for (int i = 0; i < _cellCount; i++)
            {
                if (Volatile.Read(ref CacheLineSlots<T?>.At(_cells, i)) is not null)
                {
                    count++;
                }
            }

            foreach (Stack stack in _stacks)
            {
                lock (stack.Lock)
                {
                    count += stack.Count;
                }
            }

            return count;
        }
    }

    /// <summary>
    /// The object in this thread's cell, or else one from this processor's stack, or else another's; null when the cell
    /// and the stacks are empty (other cells are not searched: the trim moves what they hold to the stacks).
    /// </summary>
    public T? TryTake()
    {
        // One exchange: of all the threads exchanging this cell, one reads its object (see the remarks).
        ref T? cell = ref CacheLineSlots<T?>.At(_cells, Cell());
        if (Volatile.Read(ref cell) is not null && Interlocked.Exchange(ref cell, null) is { } taken)
        {
            return taken;
        }

        Stack[] stacks = _stacks;
        int home = Home();
        for (int i = 0; i < stacks.Length; i++)
        {
            Stack stack = stacks[(home + i) % stacks.Length];
            if (Volatile.Read(ref stack.Count) != 0 && stack.TryPop() is { } item)
            {
                return item;
            }
        }

        return null;
    }

    /// <summary>Pools <paramref name="item"/> (held by the caller alone) in this thread's cell if empty, or else on this processor's stack.</summary>
    public void Push(T item)
    {
        // Fills only an empty cell; on failure the caller still holds the item (see the remarks).
        ref T? cell = ref CacheLineSlots<T?>.At(_cells, Cell());
        if (Volatile.Read(ref cell) is null && Interlocked.CompareExchange(ref cell, item, null) is null)
        {
            return;
        }

        _stacks[Home()].Push(item);
    }

    /// <summary>
    /// Takes out what each stack held all the time since the last call (the lowest it went), beyond
    /// <paramref name="floorPerStack"/> per stack: the objects nobody took in that time, for the caller to free.
    /// </summary>
    /// <remarks>
    /// The cells are emptied onto the stacks first (each object taken out by an exchange, so by this call alone), where
    /// they count as used this time: what a cell held is freed by the next call if nobody took it meanwhile.
    /// </remarks>
    public List<T> TakeUnused(int floorPerStack)
    {
        for (int i = 0; i < _cellCount; i++)
        {
            ref T? cell = ref CacheLineSlots<T?>.At(_cells, i);
            if (Volatile.Read(ref cell) is not null && Interlocked.Exchange(ref cell, null) is { } item)
            {
                _stacks[i % _stacks.Length].Push(item);
            }
        }

        var unused = new List<T>();
        foreach (Stack stack in _stacks)
        {
            stack.TakeUnused(floorPerStack, unused);
        }

        return unused;
    }

    private int Home() => Thread.GetCurrentProcessorId() % _stacks.Length;

    private int Cell() => (int)((uint)Environment.CurrentManagedThreadId % (uint)_cellCount);

    // One processor's stack. An object of its own per processor, so that two stacks never share the lines their locks use.
    private sealed class Stack
    {
        public readonly Lock Lock = new();
        public int Count;
        private T?[] _items = new T?[8];

        // The fewest held since the last TakeUnused: those stayed unused for the whole time.
        private int _lowest;

        public T? TryPop()
        {
            lock (Lock)
            {
                if (Count == 0)
                {
                    return null;
                }

                T? item = _items[--Count];
                _items[Count] = null;
                _lowest = Math.Min(_lowest, Count);
                return item;
            }
        }

        public void Push(T item)
        {
            lock (Lock)
            {
                if (Count == _items.Length)
                {
                    Array.Resize(ref _items, 2 * Count);
                }

                _items[Count++] = item;
            }
        }

        // The objects at the bottom that nobody took since the last call, beyond the floor, out of the stack.
        public void TakeUnused(int floor, List<T> into)
        {
            lock (Lock)
            {
                int unused = Math.Max(0, Math.Min(_lowest, Count) - floor);
                if (unused != 0)
                {
                    for (int i = floor; i < floor + unused; i++)
                    {
                        into.Add(_items[i]!);
                    }

                    Array.Copy(_items, floor + unused, _items, floor, Count - floor - unused);
                    Array.Clear(_items, Count - unused, unused);
                    Count -= unused;
                }

                _lowest = Count;
                int keep = Math.Max(Count, 8);
                if (_items.Length > 4 * keep)
                {
                    Array.Resize(ref _items, 2 * keep);
                }
            }
        }
    }
}
