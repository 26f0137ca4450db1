using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// The key schedules of the CPU intrinsics backend (<see cref="AesSchedule{T}"/>), directly: AES-NI's, and the Arm
/// code's over an exact emulation of the Arm instructions (<see cref="ArmEmulatedOnX86"/>), each compared round key by
/// round key with OpenSSL's own key expansion (<see cref="OpenSslAesKey"/>) for the keys of the NIST CAVP files in
/// <c>tests/vectors</c> and for random keys, in both directions.
/// </summary>
/// <remarks>
/// FIPS 197's Appendix A key expansion examples are not among the repository's third-party vector files, so they are not
/// used here (the project never types vectors in); an independent implementation's schedules stand in for them, and
/// the CAVP known answers check the schedules end to end through every contract suite.
/// </remarks>
public sealed unsafe class IntrinsicsScheduleTests
{
    public const string X86 = "AES-NI";
    public const string ArmEmulated = "Arm (emulated)";

    public static TheoryData<string, int> InstructionsAndKeySizes()
    {
        var data = new TheoryData<string, int>();
        foreach (string instructions in (string[])[X86, ArmEmulated])
        {
            foreach (int bits in (int[])[128, 192, 256])
            {
                data.Add(instructions, bits);
            }
        }

        return data;
    }

    [EnvironmentTheory(Needs.AesNi | Needs.Linux)]
    [MemberData(nameof(InstructionsAndKeySizes))]
    public void Both_schedules_equal_openssls_for_the_cavp_keys_and_random_keys(string instructions, int bits)
    {
        List<byte[]> keys = CavpKeys(bits);
        var rng = new Random(bits);
        for (int i = 0; i < 200; i++)
        {
            keys.Add(TestUtil.Random(rng, bits / 8));
        }

        Assert.True(keys.Count > 200, "the CAVP files gave no keys of this size");
        foreach (byte[] key in keys)
        {
            foreach (bool forDecryption in (bool[])[false, true])
            {
                byte[] expected = OpenSslAesKey.Schedule(key, forDecryption);
                byte[] actual = Expand(instructions, key, forDecryption, out int rounds);

                Assert.Equal(bits / 32 + 6, rounds);
                Assert.True(expected.AsSpan().SequenceEqual(actual), $"{(forDecryption ? "decryption" : "encryption")} schedule of {TestUtil.Hex(key)}:{Environment.NewLine}expected {TestUtil.Hex(expected)}{Environment.NewLine}actual   {TestUtil.Hex(actual)}");
            }
        }
    }

    [EnvironmentTheory(Needs.AesNi)]
    [MemberData(nameof(InstructionsAndKeySizes))]
    public void The_first_round_keys_are_the_key_and_the_decryption_schedule_starts_with_the_last_round_key(string instructions, int bits)
    {
        byte[] key = Stock.Bytes(bits / 8, bits);
        byte[] encryption = Expand(instructions, key, forDecryption: false, out int rounds);
        byte[] decryption = Expand(instructions, key, forDecryption: true, out _);

        // FIPS 197 5.2: w[0..Nk-1] is the key. 5.3.5: the equivalent inverse cipher starts with the last round key and
        // ends with the first, both without InvMixColumns.
        Assert.Equal(key, encryption.AsSpan(0, key.Length).ToArray());
        Assert.Equal(encryption.AsSpan(rounds * 16, 16).ToArray(), decryption.AsSpan(0, 16).ToArray());
        Assert.Equal(encryption.AsSpan(0, 16).ToArray(), decryption.AsSpan(rounds * 16, 16).ToArray());
    }

    [EnvironmentTheory(Needs.AesNi)]
    [MemberData(nameof(InstructionsAndKeySizes))]
    public void The_schedule_writes_exactly_its_round_keys_and_nothing_past_them(string instructions, int bits)
    {
        byte[] key = Stock.Bytes(bits / 8, bits + 1);
        int rounds = bits / 32 + 6;
        foreach (bool forDecryption in (bool[])[false, true])
        {
            // A canary in the whole buffer: nothing after the round keys is written, and the round keys are the same as
            // in a buffer that started out different (so every byte of them was written).
            byte* schedule = (byte*)NativeMemory.AlignedAlloc(AesSchedule<X86AesInstructions>.MaxBytes + 16, 16);
            try
            {
                new Span<byte>(schedule, AesSchedule<X86AesInstructions>.MaxBytes + 16).Fill(0xA5);
                Assert.Equal(rounds, ExpandInto(instructions, key, schedule, forDecryption));
                Assert.True(new Span<byte>(schedule + (16 * (rounds + 1)), AesSchedule<X86AesInstructions>.MaxBytes + 16 - (16 * (rounds + 1))).IndexOfAnyExcept((byte)0xA5) < 0, "a byte past the last round key was written");
                Assert.Equal(Expand(instructions, key, forDecryption, out _), new Span<byte>(schedule, 16 * (rounds + 1)).ToArray());
            }
            finally
            {
                NativeMemory.AlignedFree(schedule);
            }
        }
    }

    [EnvironmentFact(Needs.AesNi)]
    public void The_arm_code_and_aes_ni_make_the_same_schedules()
    {
        var rng = new Random(7);
        foreach (int length in (int[])[16, 24, 32])
        {
            for (int i = 0; i < 500; i++)
            {
                byte[] key = TestUtil.Random(rng, length);
                foreach (bool forDecryption in (bool[])[false, true])
                {
                    Assert.Equal(Expand(X86, key, forDecryption, out _), Expand(ArmEmulated, key, forDecryption, out _));
                }
            }
        }
    }

    [EnvironmentFact(Needs.AesNi)]
    public void Other_key_lengths_are_refused()
    {
        foreach (int length in (int[])[0, 8, 15, 17, 20, 31, 33, 64])
        {
            ArgumentException refused = Assert.Throws<ArgumentException>(() => Expand(X86, new byte[length], forDecryption: false, out _));
            Assert.Equal("key", refused.ParamName);
            Assert.StartsWith("An AES key is 16, 24 or 32 bytes.", refused.Message, StringComparison.Ordinal);
        }
    }

    /// <summary>The schedule <paramref name="instructions"/> make for <paramref name="key"/>, <c>16 * (rounds + 1)</c> bytes.</summary>
    internal static byte[] Expand(string instructions, byte[] key, bool forDecryption, out int rounds)
    {
        byte* schedule = (byte*)NativeMemory.AlignedAlloc(AesSchedule<X86AesInstructions>.MaxBytes, 16);
        try
        {
            rounds = ExpandInto(instructions, key, schedule, forDecryption);
            return new Span<byte>(schedule, 16 * (rounds + 1)).ToArray();
        }
        finally
        {
            NativeMemory.AlignedFree(schedule);
        }
    }

    private static int ExpandInto(string instructions, byte[] key, byte* schedule, bool forDecryption) => instructions switch
    {
        X86 => AesSchedule<X86AesInstructions>.Expand(key, schedule, forDecryption),
        ArmEmulated => AesSchedule<ArmAesInstructions<ArmEmulatedOnX86>>.Expand(key, schedule, forDecryption),
        _ => throw new ArgumentException(instructions, nameof(instructions)),
    };

    // Every distinct key of that size in the NIST CAVP ECB known-answer files (tests/vectors/nist-cavp-aes-kat).
    private static List<byte[]> CavpKeys(int bits) =>
        ((string[])["ECBVarKey", "ECBKeySbox", "ECBGFSbox", "ECBVarTxt"])
            .SelectMany(name => Vectors.ReadNistAes(Vectors.Path("nist-cavp-aes-kat", $"{name}{bits}.rsp")))
            .Select(record => record.Key)
            .DistinctBy(key => TestUtil.Hex(key))
            .ToList();
}
