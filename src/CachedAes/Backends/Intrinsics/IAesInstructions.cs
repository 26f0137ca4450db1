using System.Runtime.Intrinsics;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// One processor family's AES instructions, in the few shapes the key schedule (<see cref="AesSchedule{T}"/>) and the
/// block loops (<see cref="AesBlocks{T}"/>) need. Implemented by structs, so that each generic instantiation is compiled
/// for its instructions alone, every call inlined: <see cref="X86AesInstructions"/> (AES-NI) and
/// <see cref="ArmAesInstructions{TArm}"/> (the Armv8 AES instructions).
/// </summary>
/// <remarks>
/// <para><b>One schedule, two round shapes.</b> Both families use the same round keys: the FIPS 197 key expansion for
/// encryption, and for decryption the "equivalent inverse cipher" schedule (FIPS 197, section 5.3.5): the encryption
/// round keys in reverse order, InvMixColumns applied to all but the first and the last. They differ in where a round
/// adds its key. x86's <c>AESENC</c> is ShiftRows, SubBytes, MixColumns and then the key; Arm's <c>AESE</c> adds the
/// key first and then does ShiftRows and SubBytes, with MixColumns a separate <c>AESMC</c>. So a block is
/// <see cref="EncryptBegin"/>, then <see cref="EncryptRound"/> for rounds 0 to <c>rounds - 2</c>, then
/// <see cref="EncryptEnd"/>, and each family reads the round key it needs at each step (decryption likewise). Keys
/// are read from the schedule at each step, never held in locals across calls, so no round key is spilled to the stack
/// by this code.</para>
/// <para>Every method is only called where <see cref="IsSupported"/> is true (the backend is never made elsewhere). All
/// of them are constant-time: the AES instructions are, and nothing branches on or indexes by key or data.</para>
/// </remarks>
internal unsafe interface IAesInstructions
{
    /// <summary>Whether this process's processor has the instructions (a JIT-time constant).</summary>
    static abstract bool IsSupported { get; }

    /// <summary>What runs the instructions, for diagnostics (<see cref="Seam.CipherBackend.Description"/>).</summary>
    static abstract string Name { get; }

    /// <summary>Before the rounds of an encryption: x86 adds round key 0; Arm does nothing yet.</summary>
    static abstract Vector128<byte> EncryptBegin(Vector128<byte> block, byte* keys);

    /// <summary>Round <paramref name="round"/> (0 to <c>rounds - 2</c>) of an encryption.</summary>
    static abstract Vector128<byte> EncryptRound(Vector128<byte> state, byte* keys, int round);

    /// <summary>The last round of an encryption (no MixColumns) and the last round key.</summary>
    static abstract Vector128<byte> EncryptEnd(Vector128<byte> state, byte* keys, int rounds);

    /// <summary>Before the rounds of a decryption (with the decryption schedule).</summary>
    static abstract Vector128<byte> DecryptBegin(Vector128<byte> block, byte* keys);

    /// <summary>Round <paramref name="round"/> (0 to <c>rounds - 2</c>) of a decryption.</summary>
    static abstract Vector128<byte> DecryptRound(Vector128<byte> state, byte* keys, int round);

    /// <summary>The last round of a decryption (no InvMixColumns) and the last round key.</summary>
    static abstract Vector128<byte> DecryptEnd(Vector128<byte> state, byte* keys, int rounds);

    /// <summary>InvMixColumns of one round key (x86 <c>AESIMC</c>, Arm <c>AESIMC</c>).</summary>
    static abstract Vector128<byte> InverseMixColumns(Vector128<byte> roundKey);

    /// <summary>
    /// Every 32-bit word of the result is <c>SubWord(RotWord(w))</c> of word 3 of <paramref name="words"/> (FIPS 197's
    /// notation; the round constant is added by the caller).
    /// </summary>
    static abstract Vector128<uint> RotSubWord3(Vector128<uint> words);

    /// <summary>Every word of the result is <c>SubWord(RotWord(w))</c> of word 1 of <paramref name="words"/>.</summary>
    static abstract Vector128<uint> RotSubWord1(Vector128<uint> words);

    /// <summary>Every word of the result is <c>SubWord(w)</c> of word 3 of <paramref name="words"/> (AES-256's extra step).</summary>
    static abstract Vector128<uint> SubWord3(Vector128<uint> words);

    /// <summary>The words moved up one place (word i becomes word i + 1), a zero word entering at 0.</summary>
    static abstract Vector128<uint> ShiftWordsUp1(Vector128<uint> words);

    /// <summary>The words moved up two places, zero words entering at 0 and 1.</summary>
    static abstract Vector128<uint> ShiftWordsUp2(Vector128<uint> words);
}
