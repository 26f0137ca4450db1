using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using X86Aes = System.Runtime.Intrinsics.X86.Aes;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// AES-NI (<see cref="X86Aes"/>): <c>AESENC</c>/<c>AESENCLAST</c>, <c>AESDEC</c>/<c>AESDECLAST</c>, <c>AESIMC</c> and
/// <c>AESKEYGENASSIST</c>, with SSE2 shuffles and shifts for the key schedule. Every processor with AES-NI has SSE2.
/// </summary>
/// <remarks>
/// <c>AESKEYGENASSIST(v, rcon)</c> computes, from words 1 and 3 of <c>v</c>, the four words <c>SubWord(v1)</c>,
/// <c>RotWord(SubWord(v1)) ^ rcon</c>, <c>SubWord(v3)</c>, <c>RotWord(SubWord(v3)) ^ rcon</c> (SubWord works byte by byte,
/// so RotWord and SubWord commute). It is always called here with a round constant of 0: the schedule adds the round
/// constant itself, so the instruction's immediate operand is always the same constant.
/// </remarks>
internal readonly unsafe struct X86AesInstructions : IAesInstructions
{
    public static bool IsSupported => X86Aes.IsSupported;

    public static string Name => "System.Runtime.Intrinsics.X86.Aes (AES-NI)";

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptBegin(Vector128<byte> block, byte* keys) => block ^ Vector128.LoadAligned(keys);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptRound(Vector128<byte> state, byte* keys, int round) =>
        X86Aes.Encrypt(state, Vector128.LoadAligned(keys + ((round + 1) * 16)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptEnd(Vector128<byte> state, byte* keys, int rounds) =>
        X86Aes.EncryptLast(state, Vector128.LoadAligned(keys + (rounds * 16)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptBegin(Vector128<byte> block, byte* keys) => block ^ Vector128.LoadAligned(keys);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptRound(Vector128<byte> state, byte* keys, int round) =>
        X86Aes.Decrypt(state, Vector128.LoadAligned(keys + ((round + 1) * 16)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptEnd(Vector128<byte> state, byte* keys, int rounds) =>
        X86Aes.DecryptLast(state, Vector128.LoadAligned(keys + (rounds * 16)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> InverseMixColumns(Vector128<byte> roundKey) => X86Aes.InverseMixColumns(roundKey);

    // Word 3 of AESKEYGENASSIST's result is RotWord(SubWord(v3)): broadcast it.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> RotSubWord3(Vector128<uint> words) =>
        Sse2.Shuffle(X86Aes.KeygenAssist(words.AsByte(), 0).AsUInt32(), 0b11_11_11_11);

    // Word 1 of AESKEYGENASSIST's result is RotWord(SubWord(v1)).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> RotSubWord1(Vector128<uint> words) =>
        Sse2.Shuffle(X86Aes.KeygenAssist(words.AsByte(), 0).AsUInt32(), 0b01_01_01_01);

    // Word 2 of AESKEYGENASSIST's result is SubWord(v3).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> SubWord3(Vector128<uint> words) =>
        Sse2.Shuffle(X86Aes.KeygenAssist(words.AsByte(), 0).AsUInt32(), 0b10_10_10_10);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> ShiftWordsUp1(Vector128<uint> words) =>
        Sse2.ShiftLeftLogical128BitLane(words.AsByte(), 4).AsUInt32();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> ShiftWordsUp2(Vector128<uint> words) =>
        Sse2.ShiftLeftLogical128BitLane(words.AsByte(), 8).AsUInt32();
}
