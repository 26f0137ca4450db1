using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// The AES key expansion of FIPS 197 (section 5.2) with <typeparamref name="T"/>'s instructions, written into memory the
/// caller owns (native memory, never the managed heap), and the decryption schedule made from it in place.
/// </summary>
/// <remarks>
/// <para>The schedule is words <c>w[0]</c> to <c>w[4 * (rounds + 1) - 1]</c>, each round key four consecutive words
/// (16 bytes), little-endian words in the byte order of FIPS 197 (round key <c>r</c> is bytes <c>16 r</c> to
/// <c>16 r + 15</c>). Each step makes <c>Nk</c> new words from the previous <c>Nk</c>: word <c>i</c> is
/// <c>w[i - Nk] ^ w[i - 1]</c>, except that the first word of a step takes <c>SubWord(RotWord(w[i - 1])) ^ Rcon</c> in
/// place of <c>w[i - 1]</c> (and for AES-256 the fifth takes <c>SubWord(w[i - 1])</c>). With vectors of four words this
/// is: a prefix XOR of the previous four words (<c>v ^= v &lt;&lt; 1 word; v ^= v &lt;&lt; 2 words</c>), then an XOR
/// with the substituted word broadcast to all four (see <see cref="Next"/>).</para>
/// <para>Everything here is constant-time: no branch or index depends on the key (the round constants are indexed by
/// the step number, the branches by the key length). The key and round keys live in vector registers while they are
/// computed: the methods make no calls that the JIT does not inline, so it has no reason to spill them.</para>
/// </remarks>
internal static unsafe class AesSchedule<T>
    where T : struct, IAesInstructions
{
    /// <summary>The largest schedule: AES-256's 15 round keys.</summary>
    public const int MaxBytes = 15 * 16;

    // FIPS 197, section 5.2: Rcon[i] = x^(i-1) in GF(2^8), the first byte of the word ({01}, {02}, ... {36}).
    private static ReadOnlySpan<byte> RoundConstants => [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

    /// <summary>
    /// Writes the encryption schedule of <paramref name="key"/> (16, 24 or 32 bytes) to <paramref name="schedule"/>
    /// (<see cref="MaxBytes"/> bytes, 16-byte aligned), or with <paramref name="forDecryption"/> the decryption schedule
    /// (<see cref="ToDecryption"/>). Returns the number of rounds: 10, 12 or 14.
    /// </summary>
    public static int Expand(ReadOnlySpan<byte> key, byte* schedule, bool forDecryption)
    {
        Debug.Assert(T.IsSupported && ((nuint)schedule % 16) == 0);
        int rounds;
        fixed (byte* k = key)
        {
            rounds = key.Length switch
            {
                16 => Expand128(k, schedule),
                24 => Expand192(k, schedule),
                32 => Expand256(k, schedule),
                _ => throw new ArgumentException("An AES key is 16, 24 or 32 bytes.", nameof(key)),
            };
        }

        if (forDecryption)
        {
            ToDecryption(schedule, rounds);
        }

        return rounds;
    }

    /// <summary>
    /// Turns an encryption schedule into the schedule of FIPS 197's equivalent inverse cipher (section 5.3.5), in place:
    /// the round keys in reverse order, InvMixColumns applied to every one but the first and the last.
    /// </summary>
    public static void ToDecryption(byte* schedule, int rounds)
    {
        byte* last = schedule + (rounds * 16);
        Vector128<byte> first = Vector128.LoadAligned(schedule);
        Vector128.LoadAligned(last).StoreAligned(schedule);
        first.StoreAligned(last);

        byte* low = schedule + 16;
        byte* high = last - 16;
        for (; low < high; low += 16, high -= 16)
        {
            Vector128<byte> fromLow = Vector128.LoadAligned(low);
            T.InverseMixColumns(Vector128.LoadAligned(high)).StoreAligned(low);
            T.InverseMixColumns(fromLow).StoreAligned(high);
        }

        // Every AES has an even number of rounds, so one round key is left in the middle.
        T.InverseMixColumns(Vector128.LoadAligned(low)).StoreAligned(low);
    }

    // Nk = 4: one round key per step, ten steps.
    private static int Expand128(byte* key, byte* schedule)
    {
        Vector128<uint> words = Vector128.Load((uint*)key);
        words.StoreAligned((uint*)schedule);
        for (int step = 1; step <= 10; step++)
        {
            words = Next(words, T.RotSubWord3(words) ^ Vector128.Create((uint)RoundConstants[step - 1]));
            words.StoreAligned((uint*)(schedule + (step * 16)));
        }

        return 10;
    }

    // Nk = 6: six words per step, eight steps (the last one's final two words would be past round key 12). The four
    // words of a step go in one vector and its last two in the low half of another; steps are 24 bytes apart, so the
    // stores are unaligned.
    private static int Expand192(byte* key, byte* schedule)
    {
        Vector128<uint> words = Vector128.Load((uint*)key);
        Vector128<uint> tail = Vector128.CreateScalar(Unsafe.ReadUnaligned<ulong>(key + 16)).AsUInt32();
        words.Store((uint*)schedule);
        Unsafe.WriteUnaligned(schedule + 16, tail.AsUInt64().ToScalar());
        for (int step = 1; ; step++)
        {
            byte* at = schedule + (step * 24);

            // w[i] for the step's first four words: SubWord(RotWord(w[i - 1])) comes from the last word, tail's word 1.
            words = Next(words, T.RotSubWord1(tail) ^ Vector128.Create((uint)RoundConstants[step - 1]));
            words.Store((uint*)at);
            if (step == 8)
            {
                return 12;
            }

            // The step's last two words: w[i - 6] ^ w[i - 1], chained from the word just made.
            tail ^= T.ShiftWordsUp1(tail);
            tail ^= Vector128.Shuffle(words, Vector128.Create(3u));
            Unsafe.WriteUnaligned(at + 16, tail.AsUInt64().ToScalar());
        }
    }

    // Nk = 8: two round keys per step, seven steps (the last makes only the first of its two).
    private static int Expand256(byte* key, byte* schedule)
    {
        Vector128<uint> low = Vector128.Load((uint*)key);
        Vector128<uint> high = Vector128.Load((uint*)(key + 16));
        low.StoreAligned((uint*)schedule);
        high.StoreAligned((uint*)(schedule + 16));
        for (int step = 1; ; step++)
        {
            byte* at = schedule + (step * 32);
            low = Next(low, T.RotSubWord3(high) ^ Vector128.Create((uint)RoundConstants[step - 1]));
            low.StoreAligned((uint*)at);
            if (step == 7)
            {
                return 14;
            }

            // The fifth word of a step takes SubWord(w[i - 1]), without RotWord or a round constant.
            high = Next(high, T.SubWord3(low));
            high.StoreAligned((uint*)(at + 16));
        }
    }

    // The next four words: each is the XOR of the previous four up to its own position (a prefix XOR) and the
    // substituted word (already broadcast to all four).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<uint> Next(Vector128<uint> previous, Vector128<uint> substituted)
    {
        previous ^= T.ShiftWordsUp1(previous);
        previous ^= T.ShiftWordsUp2(previous);
        return previous ^ substituted;
    }
}
