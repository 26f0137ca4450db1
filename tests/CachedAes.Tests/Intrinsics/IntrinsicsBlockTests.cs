using System;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// The CPU intrinsics backend's handles directly, AES-NI's and the Arm code's (over <see cref="ArmEmulatedOnX86"/>):
/// every message length from 1 to 9 blocks and a few longer ones (the eight-, four- and one-block paths and every way
/// they combine), ECB and CBC, both directions, in place and into a separate buffer, each compared with stock
/// <see cref="System.Security.Cryptography.Aes"/>; CBC messages that start at their own IV on a reused handle; and the
/// native round-key memory given back by <see cref="BlockCipher.Release"/>.
/// </summary>
public sealed class IntrinsicsBlockTests
{
    // 1-9 blocks: every remainder after the eight-block groups and the four-block group; then longer ones that go
    // through several eight-block groups (CBC decryption carries its chaining block from group to group).
    private static readonly int[] s_blockCounts = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 20, 23, 24, 25, 64, 67];

    public static TheoryData<string, int> InstructionsAndKeySizes() => IntrinsicsScheduleTests.InstructionsAndKeySizes();

    [EnvironmentTheory(Needs.AesNi)]
    [MemberData(nameof(InstructionsAndKeySizes))]
    public void Every_length_mode_direction_and_buffer_shape_matches_stock(string instructions, int bits)
    {
        CipherBackend backend = Backend(instructions, out Func<int> live);
        byte[] key = Stock.Bytes(bits / 8, bits);
        byte[] iv = Stock.Bytes(16, bits + 1);
        foreach (BlockCipherMode mode in (BlockCipherMode[])[BlockCipherMode.Ecb, BlockCipherMode.Cbc])
        {
            foreach (bool encrypting in (bool[])[true, false])
            {
                BlockCipher handle = backend.Create(mode, encrypting, key);
                foreach (int blocks in s_blockCounts)
                {
                    byte[] input = Stock.Bytes(blocks * 16, (bits * 1000) + blocks);
                    byte[] expected = mode == BlockCipherMode.Ecb ? Stock.Ecb(key, input, encrypting) : Stock.Cbc(key, iv, input, encrypting);
                    ReadOnlySpan<byte> messageIv = mode == BlockCipherMode.Cbc ? iv : default;
                    string context = $"{instructions} AES-{bits} {mode} {(encrypting ? "encrypt" : "decrypt")} {blocks} blocks";

                    // Into a separate buffer (the input must stay as it was), then in place.
                    byte[] original = (byte[])input.Clone();
                    byte[] output = new byte[input.Length];
                    Assert.True(handle.TryTransform(messageIv, input, output));
                    Assert.True(expected.AsSpan().SequenceEqual(output), context + ", disjoint");
                    Assert.True(original.AsSpan().SequenceEqual(input), context + ": the input was changed");

                    Assert.True(handle.TryTransform(messageIv, input, input));
                    Assert.True(expected.AsSpan().SequenceEqual(input), context + ", in place");
                }

                Assert.False(handle.IsFaulted);
                handle.Release();
            }
        }

        Assert.Equal(0, live());
    }

    [EnvironmentTheory(Needs.AesNi)]
    [MemberData(nameof(InstructionsAndKeySizes))]
    public void A_reused_cbc_handle_starts_every_message_at_its_own_iv(string instructions, int bits)
    {
        CipherBackend backend = Backend(instructions, out _);
        byte[] key = Stock.Bytes(bits / 8, 3);
        byte[] data = Stock.Bytes(11 * 16, 4);
        foreach (bool encrypting in (bool[])[true, false])
        {
            BlockCipher handle = backend.Create(BlockCipherMode.Cbc, encrypting, key);
            for (int message = 0; message < 4; message++)
            {
                // Alternate between two IVs and two lengths: nothing of the previous message may carry over.
                byte[] iv = Stock.Bytes(16, message % 2);
                byte[] input = data[..((message % 2 == 0 ? 11 : 3) * 16)];
                byte[] output = new byte[input.Length];
                Assert.True(handle.TryTransform(iv, input, output));
                Assert.Equal(Stock.Cbc(key, iv, input, encrypting), output);
            }

            handle.Release();
        }
    }

    [EnvironmentFact(Needs.AesNi)]
    public void Release_gives_back_the_round_key_memory_once()
    {
        var backend = new IntrinsicsBackend<X86AesInstructions>();
        byte[] key = Stock.Bytes(32, 5);

        BlockCipher encrypting = backend.Create(BlockCipherMode.Ecb, true, key);
        BlockCipher decrypting = backend.Create(BlockCipherMode.Cbc, false, key);
        Assert.Equal(2, backend.LiveSchedules);

        encrypting.Release();
        Assert.Equal(1, backend.LiveSchedules);
        decrypting.Release();
        Assert.Equal(0, backend.LiveSchedules);

        // A second release finds nothing to free (it must not free the memory twice).
        encrypting.Release();
        decrypting.Release();
        Assert.Equal(0, backend.LiveSchedules);
    }

    [EnvironmentFact(Needs.AesNi)]
    public void A_rekey_to_a_shorter_key_leaves_none_of_the_longer_keys_round_keys_behind()
    {
        var backend = new IntrinsicsBackend<X86AesInstructions>();
        foreach (bool encrypting in (bool[])[true, false])
        {
            var handle = (IntrinsicsCipher<X86AesInstructions>)backend.Create(BlockCipherMode.Cbc, encrypting, Stock.Bytes(32, 9));
            byte[] key128 = Stock.Bytes(16, 10);
            Assert.True(handle.TryRekey(key128));

            // AES-128 uses the first 11 round keys (176 bytes); the AES-256 schedule's last four must be gone.
            Assert.True(handle.RoundKeyMemory[176..].IndexOfAnyExcept((byte)0) < 0, "round keys of the old key stayed behind");
            byte[] iv = Stock.Bytes(16, 11), input = Stock.Bytes(48, 12), output = new byte[48];
            Assert.True(handle.TryTransform(iv, input, output));
            Assert.Equal(Stock.Cbc(key128, iv, input, encrypting), output);
            handle.Release();
        }

        Assert.Equal(0, backend.LiveSchedules);
    }

    [EnvironmentFact(Needs.AesNi)]
    public void Handles_report_their_mode_and_direction_never_fail_and_refuse_bad_key_sizes()
    {
        var backend = new IntrinsicsBackend<X86AesInstructions>();
        Assert.Equal(CachedAesBackend.CpuIntrinsics, backend.Kind);
        Assert.Contains("AES-NI", backend.Description, StringComparison.Ordinal);
        Assert.Contains("outside any FIPS boundary", backend.Description, StringComparison.Ordinal);
        foreach (BlockCipherMode mode in (BlockCipherMode[])[BlockCipherMode.Ecb, BlockCipherMode.Cbc])
        {
            foreach (bool encrypting in (bool[])[true, false])
            {
                BlockCipher handle = backend.Create(mode, encrypting, new byte[16]);
                Assert.Equal(mode, handle.Mode);
                Assert.Equal(encrypting, handle.Encrypting);
                Assert.IsType<System.Security.Cryptography.CryptographicException>(handle.CreateFailure());
                handle.Release();
            }
        }

        foreach (int length in (int[])[0, 15, 20, 33])
        {
            Assert.Throws<System.Security.Cryptography.CryptographicException>(() => backend.Create(BlockCipherMode.Ecb, true, new byte[length]));
        }

        Assert.Equal(0, backend.LiveSchedules);
    }

    private static CipherBackend Backend(string instructions, out Func<int> liveSchedules)
    {
        switch (instructions)
        {
            case IntrinsicsScheduleTests.X86:
                var x86 = new IntrinsicsBackend<X86AesInstructions>();
                liveSchedules = () => x86.LiveSchedules;
                return x86;
            case IntrinsicsScheduleTests.ArmEmulated:
                var arm = new IntrinsicsBackend<ArmAesInstructions<ArmEmulatedOnX86>>();
                liveSchedules = () => arm.LiveSchedules;
                return arm;
            default:
                throw new ArgumentException(instructions, nameof(instructions));
        }
    }
}
