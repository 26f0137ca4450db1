using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using ArmAes = System.Runtime.Intrinsics.Arm.Aes;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// <see cref="IArmAesPrimitives"/> on the processor: <see cref="ArmAes"/> (the Armv8 Cryptography Extension's AES
/// instructions) and <see cref="AdvSimd.Arm64"/> (64-bit Arm). Compiled everywhere, used only on 64-bit Arm with the
/// AES extension. scripts/arm64-qemu.sh runs it under emulation; what has run where, and what has not, is in
/// docs/design.md, "Hardware AES backend (opt-in): the CPU's AES instructions".
/// </summary>
internal readonly struct ArmV8Instructions : IArmAesPrimitives
{
    public static bool IsSupported => ArmAes.IsSupported && AdvSimd.Arm64.IsSupported;

    public static string Name => "System.Runtime.Intrinsics.Arm.Aes (Armv8 AESE/AESD/AESMC/AESIMC)";

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> Encrypt(Vector128<byte> value, Vector128<byte> roundKey) => ArmAes.Encrypt(value, roundKey);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> Decrypt(Vector128<byte> value, Vector128<byte> roundKey) => ArmAes.Decrypt(value, roundKey);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> MixColumns(Vector128<byte> value) => ArmAes.MixColumns(value);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> InverseMixColumns(Vector128<byte> value) => ArmAes.InverseMixColumns(value);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> TableLookup(Vector128<byte> table, Vector128<byte> indices) => AdvSimd.Arm64.VectorTableLookup(table, indices);

    // vextq_u8(a, b, n): bytes n..15 of a, then bytes 0..n-1 of b.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> ShiftBytesUp4(Vector128<byte> value) => AdvSimd.ExtractVector128(Vector128<byte>.Zero, value, 12);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> ShiftBytesUp8(Vector128<byte> value) => AdvSimd.ExtractVector128(Vector128<byte>.Zero, value, 8);
}
