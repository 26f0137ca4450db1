using System;
using System.Collections.Generic;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// A pool of objects between owners: one stack per processor (up to 64), each under a lock of its own, so that threads
/// taking and giving back at once rarely meet. An object is in one stack or with its taker, never both (a stack hands
/// each to one taker, under its lock); no thread keeps objects of its own, so a thread that ends leaves nothing behind.
/// </summary>
/// <typeparam name="T">What is pooled.</typeparam>
internal sealed class PerProcessorStacks<T>
    where T : class
{
    private readonly Stack[] _stacks;

    public PerProcessorStacks()
    {
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

    /// <summary>An object from this processor's stack, or else another's; null when the pool is empty.</summary>
    public T? TryTake()
    {
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

    /// <summary>Pools <paramref name="item"/> on this processor's stack.</summary>
    public void Push(T item) => _stacks[Home()].Push(item);

    /// <summary>
    /// Takes out what each stack held all the time since the last call (the lowest it went), beyond
    /// <paramref name="floorPerStack"/> per stack: the objects nobody took in that time, for the caller to free.
    /// </summary>
    public List<T> TakeUnused(int floorPerStack)
    {
        var unused = new List<T>();
        foreach (Stack stack in _stacks)
        {
            stack.TakeUnused(floorPerStack, unused);
        }

        return unused;
    }

    private int Home() => Thread.GetCurrentProcessorId() % _stacks.Length;

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
