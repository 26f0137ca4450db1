using System;
using System.Runtime.CompilerServices;

namespace CachedCryptography;

/// <summary>
/// Slots on cache lines of their own, in a plain array that <see cref="Create"/> makes: slot <c>i</c> is element
/// <c>(i + 1) * <see cref="Stride"/></c>, and the elements between slots are never used. So two slots are
/// <see cref="Spacing"/> bytes apart, and the first is as far from the array's length, which every caller reads.
/// Threads that each write a slot of their own then do not take a line from each other on every call
/// (docs/design-notes.md, "Cache lines of their own"). Every padded array of the library is one of these, and is read
/// only through <see cref="At"/> and <see cref="Count"/>, so a walk over the slots visits no padding.
/// </summary>
/// <typeparam name="T">What a slot holds (its size decides the stride; at most <see cref="Spacing"/> bytes).</typeparam>
internal static class CacheLineSlots<T>
{
    /// <summary>
    /// Bytes from one slot to the next: a cache line, and the adjacent line that x64 processors fetch with it (a 128-byte
    /// pair of lines never holds two slots).
    /// </summary>
    internal const int Spacing = 128;

    /// <summary>Elements from one slot to the next (a constant once compiled).</summary>
    internal static int Stride
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Math.Max(1, Spacing / Unsafe.SizeOf<T>());
    }

    /// <summary>A new array of <paramref name="count"/> slots.</summary>
    internal static T[] Create(int count) => new T[(count + 1) * Stride];

    /// <summary>How many slots <paramref name="slots"/> (made by <see cref="Create"/>) has.</summary>
    internal static int Count(T[] slots) => (slots.Length / Stride) - 1;

    /// <summary>Slot <paramref name="index"/> (0 to <see cref="Count"/> - 1) of <paramref name="slots"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref T At(T[] slots, int index) => ref slots[(index + 1) * Stride];
}
