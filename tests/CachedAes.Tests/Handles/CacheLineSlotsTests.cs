using System;
using System.Runtime.CompilerServices;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Ownership;

namespace CachedCryptography.Tests;

/// <summary>
/// The layout every padded array shares (src/CachedAes/CacheLineSlots.cs), checked by address for each kind of slot the
/// library pads: references (the OpenSSL pool), longs (LiveCount's cells) and the key epoch's <see cref="Slot"/>s.
/// </summary>
public class CacheLineSlotsTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(9)]
    [InlineData(257)]
    public void Slots_are_a_128_byte_pair_of_lines_apart_and_after_the_array_length(int count)
    {
        AssertLaidOut<long>(count);
        AssertLaidOut<OpenSslCipher?>(count);
        AssertLaidOut<Slot>(count);
        AssertLaidOut<object?>(count);
    }

    [Fact]
    public void Every_slot_is_its_own_element_and_writes_reach_no_other()
    {
        long[] cells = CacheLineSlots<long>.Create(5);
        for (int i = 0; i < 5; i++)
        {
            CacheLineSlots<long>.At(cells, i) = i + 1;
        }

        // Exactly the five slots hold values; every other element (the padding) stayed zero.
        Assert.Equal(5, Array.FindAll(cells, cell => cell != 0).Length);
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(i + 1, CacheLineSlots<long>.At(cells, i));
        }
    }

    private static void AssertLaidOut<T>(int count)
    {
        T[] slots = CacheLineSlots<T>.Create(count);
        Assert.Equal(count, CacheLineSlots<T>.Count(slots));

        // The array's length sits just before its first element: the first slot must be a whole spacing past it.
        ref T first = ref CacheLineSlots<T>.At(slots, 0);
        long fromLength = (long)Unsafe.ByteOffset(ref Unsafe.As<T, byte>(ref slots[0]), ref Unsafe.As<T, byte>(ref first)) + sizeof(int);
        Assert.True(fromLength >= 128, $"{typeof(T).Name}: the first slot is {fromLength} bytes from the array's length");

        for (int i = 1; i < count; i++)
        {
            long apart = (long)Unsafe.ByteOffset(ref CacheLineSlots<T>.At(slots, i - 1), ref CacheLineSlots<T>.At(slots, i));
            Assert.True(apart >= 128, $"{typeof(T).Name}: slots {i - 1} and {i} are {apart} bytes apart");
        }

        // The last slot is inside the array (At would throw otherwise).
        _ = CacheLineSlots<T>.At(slots, count - 1);
    }
}
