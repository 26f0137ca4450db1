using System.Runtime.Intrinsics;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// The Arm instructions <see cref="ArmAesInstructions{TArm}"/> is built from, one method each, with the instructions'
/// exact semantics. <see cref="ArmV8Instructions"/> maps them to <c>System.Runtime.Intrinsics.Arm</c>.
/// </summary>
internal interface IArmAesPrimitives
{
    /// <summary>Whether the instructions exist in this process (a JIT-time constant).</summary>
    static abstract bool IsSupported { get; }

    /// <summary>What runs the instructions, for diagnostics.</summary>
    static abstract string Name { get; }

    /// <summary><c>AESE</c>: SubBytes(ShiftRows(<paramref name="value"/> ^ <paramref name="roundKey"/>)).</summary>
    static abstract Vector128<byte> Encrypt(Vector128<byte> value, Vector128<byte> roundKey);

    /// <summary><c>AESD</c>: InvSubBytes(InvShiftRows(<paramref name="value"/> ^ <paramref name="roundKey"/>)).</summary>
    static abstract Vector128<byte> Decrypt(Vector128<byte> value, Vector128<byte> roundKey);

    /// <summary><c>AESMC</c>: MixColumns.</summary>
    static abstract Vector128<byte> MixColumns(Vector128<byte> value);

    /// <summary><c>AESIMC</c>: InvMixColumns.</summary>
    static abstract Vector128<byte> InverseMixColumns(Vector128<byte> value);

    /// <summary><c>TBL</c> with one table register: byte i of the result is byte <c>indices[i]</c> of <paramref name="table"/> (all indices here are below 16).</summary>
    static abstract Vector128<byte> TableLookup(Vector128<byte> table, Vector128<byte> indices);

    /// <summary><c>EXT</c> with a zero first operand and 12: byte i + 4 of the result is byte i of <paramref name="value"/>, bytes 0 to 3 are zero.</summary>
    static abstract Vector128<byte> ShiftBytesUp4(Vector128<byte> value);

    /// <summary><c>EXT</c> with a zero first operand and 8: byte i + 8 of the result is byte i of <paramref name="value"/>, bytes 0 to 7 are zero.</summary>
    static abstract Vector128<byte> ShiftBytesUp8(Vector128<byte> value);
}
