using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations;

/// <summary>
/// The five <see cref="PaddingMode"/>s over 16-byte AES blocks, written once for every backend.
/// The native cipher always runs with padding off.
/// </summary>
internal static class SymmetricPadding
{
    private const int BlockSize = BlockCipher.BlockSize;

    /// <summary>Ciphertext length for <paramref name="plaintextLength"/> bytes under <paramref name="padding"/>.</summary>
    /// <exception cref="CryptographicException"><see cref="PaddingMode.None"/> with a partial block.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int GetCiphertextLength(int plaintextLength, PaddingMode padding)
    {
        Debug.Assert(plaintextLength >= 0);
        int whole = plaintextLength & ~(BlockSize - 1);
        if (padding is PaddingMode.None or PaddingMode.Zeros)
        {
            // The two modes that add nothing to whole blocks (tested first: the common PKCS7 then takes two compares).
            if (whole == plaintextLength)
            {
                return plaintextLength;
            }

            if (padding == PaddingMode.None)
            {
                Errors.ThrowPartialBlock();
            }
        }

        // PKCS7, ANSI X9.23 and ISO 10126 always add 1..16 bytes; Zeros completes a partial block.
        Debug.Assert(padding is PaddingMode.PKCS7 or PaddingMode.ANSIX923 or PaddingMode.ISO10126 or PaddingMode.Zeros);
        return checked(whole + BlockSize);
    }

    // Plaintexts whose whole blocks come to at most this many bytes are copied a block at a time (CopyPadded); longer
    // ones with Memmove.
    private const int SmallCopyLength = 64;

    /// <summary>
    /// Copies <paramref name="plaintext"/> to the start of <paramref name="destination"/> (any overlap is fine, as with
    /// memmove) and pads it there: <paramref name="destination"/> is exactly the padded length
    /// (<see cref="GetCiphertextLength"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void CopyPadded(ReadOnlySpan<byte> plaintext, Span<byte> destination, PaddingMode padding)
    {
        int whole = plaintext.Length & ~(BlockSize - 1);
        ref byte source = ref MemoryMarshal.GetReference(plaintext);
        ref byte target = ref MemoryMarshal.GetReference(destination);

        // A forward copy a block at a time, then the partial block, is right when the destination starts at or before the
        // plaintext, or at or after its end: no block is written over plaintext not yet read. In one unsigned compare,
        // offset - 1 >= length - 1 (offset 0, in place, and every negative offset wrap around to large values).
        if (whole <= SmallCopyLength && (nuint)(Unsafe.ByteOffset(ref source, ref target) - 1) >= (nuint)(plaintext.Length - 1))
        {
            // Whole blocks one 16-byte move each, so that the native code's 16-byte loads of them are each served by one
            // store; then the partial block, if any.
            for (int offset = 0; offset < whole; offset += BlockSize)
            {
                Vector128.LoadUnsafe(ref source, (nuint)offset).StoreUnsafe(ref target, (nuint)offset);
            }

            if (whole != plaintext.Length)
            {
                plaintext.Slice(whole).CopyTo(destination.Slice(whole));
            }
        }
        else
        {
            plaintext.CopyTo(destination);
        }

        if (whole != destination.Length)
        {
            PadLastBlock(destination.Slice(whole), plaintext.Length - whole, padding);
        }
    }

    /// <summary>
    /// Pads a message in place: <paramref name="lastBlock"/> is its last 16 bytes, of which the first
    /// <paramref name="dataLength"/> (0..15) are data; the rest become the padding. Only for a message whose padding adds
    /// bytes here (every mode but <see cref="PaddingMode.None"/>, and <see cref="PaddingMode.Zeros"/> only after a partial
    /// block). Done with one vector blend in registers, so no copy of the data is left anywhere else.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void PadLastBlock(Span<byte> lastBlock, int dataLength, PaddingMode padding)
    {
        Debug.Assert(lastBlock.Length == BlockSize && (uint)dataLength < BlockSize);
        Debug.Assert(padding != PaddingMode.None && (padding != PaddingMode.Zeros || dataLength != 0));
        byte count = (byte)(BlockSize - dataLength);

        // PKCS7 (the default) by one compare; the others through the switch.
        Vector128<byte> pad = padding == PaddingMode.PKCS7 ? Vector128.Create(count) : padding switch
        {
            PaddingMode.ANSIX923 => Vector128<byte>.Zero.WithElement(BlockSize - 1, count),
            PaddingMode.ISO10126 => RandomPad(count),
            _ => Vector128<byte>.Zero,
        };

        ref byte block = ref MemoryMarshal.GetReference(lastBlock);
        if (dataLength != 0)
        {
            // Positions dataLength..15 take the padding; the data bytes before them stay.
            Vector128<byte> isPad = Vector128.GreaterThanOrEqual(Positions, Vector128.Create((byte)dataLength));
            pad = Vector128.ConditionalSelect(isPad, pad, Vector128.LoadUnsafe(ref block));
        }

        pad.StoreUnsafe(ref block);
    }

    /// <summary>
    /// The length of <paramref name="plaintext"/> (whole blocks of decrypted data) once its padding is removed, or -1
    /// when the padding is invalid. The whole last block is examined with vector masks, so the work does not depend on
    /// the (secret) pad length; only the final verdict branches.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // on every decryption's path
    public static int GetUnpaddedLength(ReadOnlySpan<byte> plaintext, PaddingMode padding)
    {
        if (padding is PaddingMode.None or PaddingMode.Zeros)
        {
            return plaintext.Length;
        }

        if (plaintext.IsEmpty)
        {
            return -1;
        }

        Debug.Assert(plaintext.Length % BlockSize == 0);
        ref byte start = ref MemoryMarshal.GetReference(plaintext);
        Vector128<byte> last = Vector128.LoadUnsafe(ref start, (nuint)(plaintext.Length - BlockSize));

        // Read from memory, not out of the vector: without SSE4.1 an element is extracted through a stack copy.
        int count = Unsafe.Add(ref start, plaintext.Length - 1);

        // bad != 0 when count is outside 1..16.
        int bad = ((count - 1) | (BlockSize - count)) >> 31;

        if (padding != PaddingMode.ISO10126)
        {
            // Bytes 16 - count .. 14 of the block are pad bytes besides the count byte itself: PKCS7 wants each equal
            // to count, ANSI X9.23 wants them zero. ISO 10126 pad bytes are random and never checked.
            Vector128<byte> inPad = Vector128.GreaterThanOrEqual(Positions, Vector128.Create((byte)(BlockSize - count))) & AllButLast;
            Vector128<byte> expected = padding == PaddingMode.PKCS7 ? Vector128.Create((byte)count) : Vector128<byte>.Zero;
            Vector128<byte> difference = (last ^ expected) & inPad;
            bad |= (int)(Vector128.Equals(difference, Vector128<byte>.Zero).ExtractMostSignificantBits() ^ 0xFFFF);
        }

        return bad == 0 ? plaintext.Length - count : -1;
    }

    /// <summary>
    /// Zeroes the padding that <see cref="GetUnpaddedLength"/> found after the first <paramref name="length"/> bytes of
    /// <paramref name="plaintext"/> (whole blocks): 1 to 16 bytes, all in the last block, cleared with one vector blend
    /// whatever their number.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void ClearPadding(Span<byte> plaintext, int length)
    {
        int count = plaintext.Length - length;
        Debug.Assert(count is > 0 and <= BlockSize && plaintext.Length % BlockSize == 0);
        ref byte last = ref MemoryMarshal.GetReference(plaintext.Slice(plaintext.Length - BlockSize, BlockSize));
        Vector128<byte> keep = Vector128.LessThan(Positions, Vector128.Create((byte)(BlockSize - count)));
        (Vector128.LoadUnsafe(ref last) & keep).StoreUnsafe(ref last);
    }

    // Vector constants, not static readonly fields: the JIT and the AOT compiler both fold a Vector128.Create of
    // constants into the code, while a static field costs the AOT build a check of the class's initialisation on every
    // call and keeps these methods from being inlined there.
    private static Vector128<byte> Positions
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Vector128.Create((byte)0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }

    private static Vector128<byte> AllButLast
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Vector128.Create((byte)0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00);
    }

    // ISO 10126: random pad bytes, the last one the count.
    [SkipLocalsInit]
    private static Vector128<byte> RandomPad(byte count)
    {
        Span<byte> random = stackalloc byte[BlockSize];
        RandomNumberGenerator.Fill(random);
        return Vector128.LoadUnsafe(ref MemoryMarshal.GetReference(random)).WithElement(BlockSize - 1, count);
    }
}
