using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// The Armv8 AES instructions (<c>AESE</c>, <c>AESD</c>, <c>AESMC</c>, <c>AESIMC</c>, and AdvSimd's <c>TBL</c> and
/// <c>EXT</c>) arranged into the shapes of <see cref="IAesInstructions"/>. <typeparamref name="TArm"/> supplies the
/// instructions themselves: <see cref="ArmV8Instructions"/> in the library (<c>System.Runtime.Intrinsics.Arm</c>); the
/// tests also run this code on x64 over an emulation of the same instructions built from AES-NI.
/// </summary>
/// <remarks>
/// <para><c>AESE(v, k)</c> is SubBytes(ShiftRows(v ^ k)); <c>AESMC</c> is MixColumns. An encryption is therefore
/// <c>AESMC(AESE(s, k[r]))</c> for rounds 0 to <c>rounds - 2</c>, then <c>AESE(s, k[rounds - 1]) ^ k[rounds]</c>, each
/// <c>AESE</c> directly followed by the <c>AESMC</c> of the same block (the pair many Arm cores fuse). Decryption is the
/// same shape with <c>AESD</c> and <c>AESIMC</c> over the decryption schedule.</para>
/// <para><b>SubWord without a table.</b> Arm has no key-generation instruction, and the key schedule needs the S-box.
/// When all four columns of the state hold the same word, ShiftRows moves bytes only between equal columns and so
/// changes nothing: <c>AESE(v, 0)</c> is then SubBytes alone, and each word of the result is SubWord of the word that was
/// broadcast. A <c>TBL</c> byte shuffle broadcasts the word first, rotated when RotWord is wanted. No table, no
/// data-dependent branch or index.</para>
/// </remarks>
internal readonly unsafe struct ArmAesInstructions<TArm> : IAesInstructions
    where TArm : struct, IArmAesPrimitives
{
    public static bool IsSupported => TArm.IsSupported;

    public static string Name => TArm.Name;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptBegin(Vector128<byte> block, byte* keys) => block;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptRound(Vector128<byte> state, byte* keys, int round) =>
        TArm.MixColumns(TArm.Encrypt(state, Vector128.LoadAligned(keys + (round * 16))));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> EncryptEnd(Vector128<byte> state, byte* keys, int rounds) =>
        TArm.Encrypt(state, Vector128.LoadAligned(keys + ((rounds - 1) * 16))) ^ Vector128.LoadAligned(keys + (rounds * 16));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptBegin(Vector128<byte> block, byte* keys) => block;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptRound(Vector128<byte> state, byte* keys, int round) =>
        TArm.InverseMixColumns(TArm.Decrypt(state, Vector128.LoadAligned(keys + (round * 16))));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> DecryptEnd(Vector128<byte> state, byte* keys, int rounds) =>
        TArm.Decrypt(state, Vector128.LoadAligned(keys + ((rounds - 1) * 16))) ^ Vector128.LoadAligned(keys + (rounds * 16));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> InverseMixColumns(Vector128<byte> roundKey) => TArm.InverseMixColumns(roundKey);

    // Bytes 13, 14, 15, 12 (word 3 rotated) in every column, then SubBytes alone.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> RotSubWord3(Vector128<uint> words) =>
        SubBytesOfEqualColumns(TArm.TableLookup(words.AsByte(), Vector128.Create((byte)13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12)));

    // Bytes 5, 6, 7, 4 (word 1 rotated) in every column.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> RotSubWord1(Vector128<uint> words) =>
        SubBytesOfEqualColumns(TArm.TableLookup(words.AsByte(), Vector128.Create((byte)5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4)));

    // Bytes 12, 13, 14, 15 (word 3 as it is) in every column.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> SubWord3(Vector128<uint> words) =>
        SubBytesOfEqualColumns(TArm.TableLookup(words.AsByte(), Vector128.Create((byte)12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> ShiftWordsUp1(Vector128<uint> words) => TArm.ShiftBytesUp4(words.AsByte()).AsUInt32();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<uint> ShiftWordsUp2(Vector128<uint> words) => TArm.ShiftBytesUp8(words.AsByte()).AsUInt32();

    // With four equal columns ShiftRows is the identity, so AESE with a zero round key is SubBytes alone.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<uint> SubBytesOfEqualColumns(Vector128<byte> equalColumns) =>
        TArm.Encrypt(equalColumns, Vector128<byte>.Zero).AsUInt32();
}
