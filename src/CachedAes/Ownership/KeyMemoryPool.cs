using System;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// Recycled key memory, zeroed and pooled (phase <c>Pooled</c>), waiting for its next owner: one stack per processor
/// (up to 64), each under a lock of its own, so that threads renting and returning at once rarely meet.
/// </summary>
/// <remarks>
/// <para>A memory is in exactly one place: an owner, or one stack here (taken out under that stack's lock, so handed to
/// one taker). No thread keeps memory of its own, so a thread that ends leaves nothing behind.</para>
/// <para><b>Trim.</b> Instances never disposed take, between two collections, about what the reclaimer recycled after
/// the last one, so the pool holds what such code uses while it keeps coming. At most every
/// <see cref="TrimIntervalMilliseconds"/> (called by the reclaimer's sweep) each stack frees what it held all the time
/// since the last trim (the lowest it went), keeping <see cref="FloorPerStack"/>: memory unused for a whole interval goes.
/// </para>
/// </remarks>
internal static class KeyMemoryPool
{
    /// <summary>How many memories each stack keeps through a trim, however few were used.</summary>
    internal const int FloorPerStack = 8;

    /// <summary>The shortest time between two trims (as long as the OpenSSL context pool's idle time).</summary>
    internal const int TrimIntervalMilliseconds = 10_000;

    private static readonly Stack[] s_stacks = CreateStacks();
    private static long s_trimmedAt = Environment.TickCount64;

    /// <summary>How many memories wait in the pool (a test seam).</summary>
    internal static int Count
    {
        get
        {
            int count = 0;
            foreach (Stack stack in s_stacks)
            {
                lock (stack.Lock)
                {
                    count += stack.Count;
                }
            }

            return count;
        }
    }

    /// <summary>A pooled memory, from this processor's stack or else another's; null when the pool is empty.</summary>
    public static KeyMemory? TryTake()
    {
        Stack[] stacks = s_stacks;
        int start = Home(stacks);
        for (int i = 0; i < stacks.Length; i++)
        {
            Stack stack = stacks[(start + i) % stacks.Length];
            if (Volatile.Read(ref stack.Count) != 0 && stack.TryPop() is { } memory)
            {
                return memory;
            }
        }

        return null;
    }

    /// <summary>Pools a zeroed memory on this processor's stack.</summary>
    public static void Return(KeyMemory memory)
    {
        Stack[] stacks = s_stacks;
        stacks[Home(stacks)].Push(memory);
    }

    /// <summary>
    /// At most once per <see cref="TrimIntervalMilliseconds"/> (calls in between do nothing): frees what each stack held
    /// all the time since the last trim, beyond <see cref="FloorPerStack"/>; returns how many it freed.
    /// </summary>
    internal static int Trim() => Trim(Environment.TickCount64);

    /// <summary><see cref="Trim()"/> as if the clock read <paramref name="now"/> (a test seam).</summary>
    internal static int Trim(long now)
    {
        long last = Volatile.Read(ref s_trimmedAt);
        if (now - last < TrimIntervalMilliseconds || Interlocked.CompareExchange(ref s_trimmedAt, now, last) != last)
        {
            return 0;
        }

        int freed = 0;
        foreach (Stack stack in s_stacks)
        {
            foreach (KeyMemory memory in stack.TakeUnused())
            {
                memory.Free();
                freed++;
            }
        }

        return freed;
    }

    private static int Home(Stack[] stacks) => Thread.GetCurrentProcessorId() % stacks.Length;

    private static Stack[] CreateStacks()
    {
        var stacks = new Stack[Math.Clamp(Environment.ProcessorCount, 1, 64)];
        for (int i = 0; i < stacks.Length; i++)
        {
            stacks[i] = new Stack();
        }

        return stacks;
    }

    // One processor's stack. A class of its own per processor, so two stacks never share the lines their locks use.
    private sealed class Stack
    {
        public readonly Lock Lock = new();
        public int Count;
        private KeyMemory?[] _items = new KeyMemory?[FloorPerStack];

        // The fewest held since the last trim: those stayed unused for the whole interval.
        private int _lowest;

        public KeyMemory? TryPop()
        {
            lock (Lock)
            {
                if (Count == 0)
                {
                    return null;
                }

                KeyMemory? memory = _items[--Count];
                _items[Count] = null;
                _lowest = Math.Min(_lowest, Count);
                return memory;
            }
        }

        public void Push(KeyMemory memory)
        {
            lock (Lock)
            {
                if (Count == _items.Length)
                {
                    Array.Resize(ref _items, 2 * Count);
                }

                _items[Count++] = memory;
            }
        }

        // The memories at the bottom that nobody took since the last trim, beyond the floor: out of the stack (freed by
        // the caller, outside the lock).
        public KeyMemory[] TakeUnused()
        {
            lock (Lock)
            {
                int unused = Math.Max(0, Math.Min(_lowest, Count) - FloorPerStack);
                KeyMemory[] taken = new KeyMemory[unused];
                if (unused != 0)
                {
                    Array.Copy(_items, FloorPerStack, taken, 0, unused);
                    Array.Copy(_items, FloorPerStack + unused, _items, FloorPerStack, Count - FloorPerStack - unused);
                    Array.Clear(_items, Count - unused, unused);
                    Count -= unused;
                }

                _lowest = Count;
                if (_items.Length > 4 * Math.Max(Count, FloorPerStack))
                {
                    Array.Resize(ref _items, 2 * Math.Max(Count, FloorPerStack));
                }

                return taken;
            }
        }
    }
}
