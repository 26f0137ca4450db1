using System.Threading;
using CachedCryptography.Ownership;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The pool between key memory owners (<see cref="PerProcessorStacks{T}"/>): its single-object cells, taken with an
/// exchange and filled with a compare-exchange, in front of its locked stacks. Eight threads share one cell and take,
/// hold and give back objects while another trims, and every object records who holds it: no object is ever handed to
/// two takers, none is taken after the trim gave it up, and none is lost.
/// </summary>
public class PerProcessorStacksTests
{
    private const int Free = 0, Held = 1, Trimmed = 2;

    private sealed class Item
    {
        public int State;
    }

    [Fact]
    public void Threads_sharing_cells_never_take_one_object_twice_and_lose_none()
    {
        // One cell for all: any two threads running at once meet on it.
        var pool = new PerProcessorStacks<Item>(cells: 1);
        const int Threads = 8, Messages = 200_000;
        int made = 0, trimmed = 0, twice = 0, afterTrim = 0;
        var threads = new Thread[Threads];
        using var start = new Barrier(Threads);
        for (int t = 0; t < Threads; t++)
        {
            int thread = t;
            threads[t] = new Thread(() =>
            {
                var held = new Item[2];
                start.SignalAndWait();
                for (int i = 0; i < Messages; i++)
                {
                    // Two at once (a never-disposed instance's memory goes back on another thread, so a thread's
                    // gives and takes do not pair up), given back in either order.
                    for (int h = 0; h < held.Length; h++)
                    {
                        Item item = pool.TryTake() ?? Made(ref made);
                        int was = Interlocked.Exchange(ref item.State, Held);
                        if (was == Held)
                        {
                            Interlocked.Increment(ref twice);
                        }
                        else if (was == Trimmed)
                        {
                            Interlocked.Increment(ref afterTrim);
                        }

                        held[h] = item;
                    }

                    int first = (i + thread) & 1;
                    for (int h = 0; h < held.Length; h++)
                    {
                        Item item = held[first ^ h];
                        Volatile.Write(ref item.State, Free);
                        pool.Push(item);
                    }

                    if (thread == 0 && i % 5_000 == 0)
                    {
                        foreach (Item unused in pool.TakeUnused(floorPerStack: 0))
                        {
                            Interlocked.Increment(ref trimmed);
                            Interlocked.Exchange(ref unused.State, Trimmed);
                        }
                    }
                }
            });
        }

        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.Equal(0, twice);
        Assert.Equal(0, afterTrim);
        Assert.Equal(made, pool.Count + trimmed);
        Assert.True(made >= 2, $"{made} objects made");
    }

    [Fact]
    public void The_trim_empties_the_cells_and_frees_what_stayed_unused_since_the_last_trim()
    {
        var pool = new PerProcessorStacks<Item>(cells: 2);
        var item = new Item();
        pool.Push(item);
        Assert.Equal(1, pool.Count);

        // The first trim moves the cell's object onto a stack, where it counts as used; the second frees it.
        Assert.Empty(pool.TakeUnused(floorPerStack: 0));
        Assert.Equal(1, pool.Count);
        Assert.Same(item, Assert.Single(pool.TakeUnused(floorPerStack: 0)));
        Assert.Equal(0, pool.Count);
        Assert.Null(pool.TryTake());
    }

    [Fact]
    public void A_thread_takes_back_what_it_gave_and_a_full_cell_sends_the_next_to_a_stack()
    {
        var pool = new PerProcessorStacks<Item>(cells: 2);
        Item first = new(), second = new();
        pool.Push(first);
        pool.Push(second);
        Assert.Equal(2, pool.Count);
        Assert.Same(first, pool.TryTake());
        Assert.Same(second, pool.TryTake());
        Assert.Null(pool.TryTake());
    }

    private static Item Made(ref int made)
    {
        Interlocked.Increment(ref made);
        return new Item();
    }
}
