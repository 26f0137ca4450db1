using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using CachedCryptography.Backends.Intrinsics;
using X86Aes = System.Runtime.Intrinsics.X86.Aes;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// The Arm instructions that the library's Arm code (<see cref="ArmAesInstructions{TArm}"/>) is built from, emulated
/// exactly with AES-NI and SSSE3, so that the Arm key schedule (SubWord by <c>AESE</c> on a zero key after a <c>TBL</c>
/// broadcast), the Arm round shapes and the Arm decryption schedule run on this x64 machine. What this does not test is
/// only the one-to-one mapping of each method to its <c>System.Runtime.Intrinsics.Arm</c> call in
/// <see cref="ArmV8Instructions"/>.
/// </summary>
/// <remarks>
/// x86's <c>AESENCLAST(v, k)</c> is ShiftRows, SubBytes, then the XOR with <c>k</c>; so <c>AESE(v, k)</c>, which XORs
/// first, is <c>AESENCLAST(v ^ k, 0)</c>. Likewise <c>AESD(v, k)</c> is <c>AESDECLAST(v ^ k, 0)</c>. MixColumns alone is
/// <c>AESENC(AESDECLAST(v, 0), 0)</c>: the inverse ShiftRows and SubBytes undo what <c>AESENC</c> does before its
/// MixColumns. <c>TBL</c> with indices below 16 is <c>PSHUFB</c>; <c>EXT</c> with a zero first operand is a byte shift.
/// </remarks>
internal readonly struct ArmEmulatedOnX86 : IArmAesPrimitives
{
    public static bool IsSupported => X86Aes.IsSupported && Ssse3.IsSupported;

    public static string Name => "Arm AES instructions emulated with AES-NI (tests only)";

    public static Vector128<byte> Encrypt(Vector128<byte> value, Vector128<byte> roundKey) => X86Aes.EncryptLast(value ^ roundKey, Vector128<byte>.Zero);

    public static Vector128<byte> Decrypt(Vector128<byte> value, Vector128<byte> roundKey) => X86Aes.DecryptLast(value ^ roundKey, Vector128<byte>.Zero);

    public static Vector128<byte> MixColumns(Vector128<byte> value) =>
        X86Aes.Encrypt(X86Aes.DecryptLast(value, Vector128<byte>.Zero), Vector128<byte>.Zero);

    public static Vector128<byte> InverseMixColumns(Vector128<byte> value) => X86Aes.InverseMixColumns(value);

    public static Vector128<byte> TableLookup(Vector128<byte> table, Vector128<byte> indices) => Ssse3.Shuffle(table, indices);

    public static Vector128<byte> ShiftBytesUp4(Vector128<byte> value) => Sse2.ShiftLeftLogical128BitLane(value, 4);

    public static Vector128<byte> ShiftBytesUp8(Vector128<byte> value) => Sse2.ShiftLeftLogical128BitLane(value, 8);
}
