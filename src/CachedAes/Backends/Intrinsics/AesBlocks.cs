using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// ECB and CBC over a schedule from <see cref="AesSchedule{T}"/>, in either direction. Blocks that do not depend on
/// each other (ECB, and CBC decryption) go through the rounds eight at a time, then four, then one by one, so the AES
/// units work on several blocks at once instead of waiting for each result; CBC encryption is one serial chain.
/// </summary>
/// <remarks>
/// <para><b>Buffers.</b> <c>input</c> and <c>output</c> are either the same memory or do not overlap (the seam's
/// contract). Every method reads a group of blocks before writing any of it, and CBC decryption writes a group from
/// its last block to its first, each XOR reading the previous ciphertext block before the store that would overwrite it
/// in place.</para>
/// <para><b>Key hygiene.</b> Round keys are read from the schedule at each round (<see cref="IAesInstructions"/>), never
/// kept in locals; the locals hold data blocks only.</para>
/// </remarks>
internal static unsafe class AesBlocks<T>
    where T : struct, IAesInstructions
{
    /// <summary>ECB encryption of <paramref name="blocks"/> whole blocks (at least one).</summary>
    public static void EncryptEcb(byte* keys, int rounds, byte* input, byte* output, int blocks) =>
        Ecb<Encryption>(keys, rounds, input, output, blocks);

    /// <summary>ECB decryption with a decryption schedule.</summary>
    public static void DecryptEcb(byte* keys, int rounds, byte* input, byte* output, int blocks) =>
        Ecb<Decryption>(keys, rounds, input, output, blocks);

    /// <summary>One CBC message that starts at <paramref name="iv"/>: each block is encrypted after the XOR with the previous ciphertext block.</summary>
    public static void EncryptCbc(byte* keys, int rounds, Vector128<byte> iv, byte* input, byte* output, int blocks)
    {
        Vector128<byte> chain = iv;
        for (; blocks > 0; blocks--)
        {
            chain = Block<Encryption>(Vector128.Load(input) ^ chain, keys, rounds);
            chain.Store(output);
            input += 16;
            output += 16;
        }
    }

    /// <summary>One CBC message that starts at <paramref name="iv"/>, with a decryption schedule.</summary>
    public static void DecryptCbc(byte* keys, int rounds, Vector128<byte> iv, byte* input, byte* output, int blocks)
    {
        // The ciphertext block before the group being decrypted (the IV before the first).
        Vector128<byte> chain = iv;
        for (; blocks >= 8; blocks -= 8)
        {
            Vector128<byte> b0 = Decryption.Begin(Vector128.Load(input), keys);
            Vector128<byte> b1 = Decryption.Begin(Vector128.Load(input + 16), keys);
            Vector128<byte> b2 = Decryption.Begin(Vector128.Load(input + 32), keys);
            Vector128<byte> b3 = Decryption.Begin(Vector128.Load(input + 48), keys);
            Vector128<byte> b4 = Decryption.Begin(Vector128.Load(input + 64), keys);
            Vector128<byte> b5 = Decryption.Begin(Vector128.Load(input + 80), keys);
            Vector128<byte> b6 = Decryption.Begin(Vector128.Load(input + 96), keys);
            Vector128<byte> b7 = Decryption.Begin(Vector128.Load(input + 112), keys);
            for (int round = 0; round < rounds - 1; round++)
            {
                b0 = Decryption.Round(b0, keys, round);
                b1 = Decryption.Round(b1, keys, round);
                b2 = Decryption.Round(b2, keys, round);
                b3 = Decryption.Round(b3, keys, round);
                b4 = Decryption.Round(b4, keys, round);
                b5 = Decryption.Round(b5, keys, round);
                b6 = Decryption.Round(b6, keys, round);
                b7 = Decryption.Round(b7, keys, round);
            }

            // The next group chains from this group's last ciphertext block: read it before it can be overwritten.
            Vector128<byte> next = Vector128.Load(input + 112);
            (Decryption.End(b7, keys, rounds) ^ Vector128.Load(input + 96)).Store(output + 112);
            (Decryption.End(b6, keys, rounds) ^ Vector128.Load(input + 80)).Store(output + 96);
            (Decryption.End(b5, keys, rounds) ^ Vector128.Load(input + 64)).Store(output + 80);
            (Decryption.End(b4, keys, rounds) ^ Vector128.Load(input + 48)).Store(output + 64);
            (Decryption.End(b3, keys, rounds) ^ Vector128.Load(input + 32)).Store(output + 48);
            (Decryption.End(b2, keys, rounds) ^ Vector128.Load(input + 16)).Store(output + 32);
            (Decryption.End(b1, keys, rounds) ^ Vector128.Load(input)).Store(output + 16);
            (Decryption.End(b0, keys, rounds) ^ chain).Store(output);
            chain = next;
            input += 128;
            output += 128;
        }

        if (blocks >= 4)
        {
            Vector128<byte> b0 = Decryption.Begin(Vector128.Load(input), keys);
            Vector128<byte> b1 = Decryption.Begin(Vector128.Load(input + 16), keys);
            Vector128<byte> b2 = Decryption.Begin(Vector128.Load(input + 32), keys);
            Vector128<byte> b3 = Decryption.Begin(Vector128.Load(input + 48), keys);
            for (int round = 0; round < rounds - 1; round++)
            {
                b0 = Decryption.Round(b0, keys, round);
                b1 = Decryption.Round(b1, keys, round);
                b2 = Decryption.Round(b2, keys, round);
                b3 = Decryption.Round(b3, keys, round);
            }

            Vector128<byte> next = Vector128.Load(input + 48);
            (Decryption.End(b3, keys, rounds) ^ Vector128.Load(input + 32)).Store(output + 48);
            (Decryption.End(b2, keys, rounds) ^ Vector128.Load(input + 16)).Store(output + 32);
            (Decryption.End(b1, keys, rounds) ^ Vector128.Load(input)).Store(output + 16);
            (Decryption.End(b0, keys, rounds) ^ chain).Store(output);
            chain = next;
            input += 64;
            output += 64;
            blocks -= 4;
        }

        for (; blocks > 0; blocks--)
        {
            Vector128<byte> ciphertext = Vector128.Load(input);
            (Block<Decryption>(ciphertext, keys, rounds) ^ chain).Store(output);
            chain = ciphertext;
            input += 16;
            output += 16;
        }
    }

    private static void Ecb<TRounds>(byte* keys, int rounds, byte* input, byte* output, int blocks)
        where TRounds : struct, IRounds
    {
        for (; blocks >= 8; blocks -= 8)
        {
            Vector128<byte> b0 = TRounds.Begin(Vector128.Load(input), keys);
            Vector128<byte> b1 = TRounds.Begin(Vector128.Load(input + 16), keys);
            Vector128<byte> b2 = TRounds.Begin(Vector128.Load(input + 32), keys);
            Vector128<byte> b3 = TRounds.Begin(Vector128.Load(input + 48), keys);
            Vector128<byte> b4 = TRounds.Begin(Vector128.Load(input + 64), keys);
            Vector128<byte> b5 = TRounds.Begin(Vector128.Load(input + 80), keys);
            Vector128<byte> b6 = TRounds.Begin(Vector128.Load(input + 96), keys);
            Vector128<byte> b7 = TRounds.Begin(Vector128.Load(input + 112), keys);
            for (int round = 0; round < rounds - 1; round++)
            {
                b0 = TRounds.Round(b0, keys, round);
                b1 = TRounds.Round(b1, keys, round);
                b2 = TRounds.Round(b2, keys, round);
                b3 = TRounds.Round(b3, keys, round);
                b4 = TRounds.Round(b4, keys, round);
                b5 = TRounds.Round(b5, keys, round);
                b6 = TRounds.Round(b6, keys, round);
                b7 = TRounds.Round(b7, keys, round);
            }

            TRounds.End(b0, keys, rounds).Store(output);
            TRounds.End(b1, keys, rounds).Store(output + 16);
            TRounds.End(b2, keys, rounds).Store(output + 32);
            TRounds.End(b3, keys, rounds).Store(output + 48);
            TRounds.End(b4, keys, rounds).Store(output + 64);
            TRounds.End(b5, keys, rounds).Store(output + 80);
            TRounds.End(b6, keys, rounds).Store(output + 96);
            TRounds.End(b7, keys, rounds).Store(output + 112);
            input += 128;
            output += 128;
        }

        if (blocks >= 4)
        {
            Vector128<byte> b0 = TRounds.Begin(Vector128.Load(input), keys);
            Vector128<byte> b1 = TRounds.Begin(Vector128.Load(input + 16), keys);
            Vector128<byte> b2 = TRounds.Begin(Vector128.Load(input + 32), keys);
            Vector128<byte> b3 = TRounds.Begin(Vector128.Load(input + 48), keys);
            for (int round = 0; round < rounds - 1; round++)
            {
                b0 = TRounds.Round(b0, keys, round);
                b1 = TRounds.Round(b1, keys, round);
                b2 = TRounds.Round(b2, keys, round);
                b3 = TRounds.Round(b3, keys, round);
            }

            TRounds.End(b0, keys, rounds).Store(output);
            TRounds.End(b1, keys, rounds).Store(output + 16);
            TRounds.End(b2, keys, rounds).Store(output + 32);
            TRounds.End(b3, keys, rounds).Store(output + 48);
            input += 64;
            output += 64;
            blocks -= 4;
        }

        for (; blocks > 0; blocks--)
        {
            Block<TRounds>(Vector128.Load(input), keys, rounds).Store(output);
            input += 16;
            output += 16;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Block<TRounds>(Vector128<byte> block, byte* keys, int rounds)
        where TRounds : struct, IRounds
    {
        Vector128<byte> state = TRounds.Begin(block, keys);
        for (int round = 0; round < rounds - 1; round++)
        {
            state = TRounds.Round(state, keys, round);
        }

        return TRounds.End(state, keys, rounds);
    }

    /// <summary>One direction's three steps (see <see cref="IAesInstructions"/>), so that ECB is written once for both.</summary>
    private interface IRounds
    {
        static abstract Vector128<byte> Begin(Vector128<byte> block, byte* keys);

        static abstract Vector128<byte> Round(Vector128<byte> state, byte* keys, int round);

        static abstract Vector128<byte> End(Vector128<byte> state, byte* keys, int rounds);
    }

    private readonly struct Encryption : IRounds
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> Begin(Vector128<byte> block, byte* keys) => T.EncryptBegin(block, keys);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> Round(Vector128<byte> state, byte* keys, int round) => T.EncryptRound(state, keys, round);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> End(Vector128<byte> state, byte* keys, int rounds) => T.EncryptEnd(state, keys, rounds);
    }

    private readonly struct Decryption : IRounds
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> Begin(Vector128<byte> block, byte* keys) => T.DecryptBegin(block, keys);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> Round(Vector128<byte> state, byte* keys, int round) => T.DecryptRound(state, keys, round);

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static Vector128<byte> End(Vector128<byte> state, byte* keys, int rounds) => T.DecryptEnd(state, keys, rounds);
    }
}
