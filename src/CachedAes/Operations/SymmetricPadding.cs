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
        Vector128<byte> pad = Pad(dataLength, padding);
        ref byte block = ref MemoryMarshal.GetReference(lastBlock);
        if (dataLength != 0)
        {
            // Positions dataLength..15 take the padding; the data bytes before them stay.
            pad = Vector128.ConditionalSelect(PadPositions(dataLength), pad, Vector128.LoadUnsafe(ref block));
        }

        pad.StoreUnsafe(ref block);
    }

    /// <summary>
    /// The last block of a padded message, made in a register: the <paramref name="dataLength"/> (0..15) bytes at
    /// <paramref name="data"/> followed by the padding. Same conditions as <see cref="PadLastBlock"/>. It reads only those
    /// bytes, with scalar loads that overlap rather than read past them, so the caller can store the block with one
    /// 16-byte move: a block written by narrower stores (a <c>Memmove</c> of the bytes) and then loaded whole waits for
    /// them to be written back, since a load is forwarded only from one store that covers it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector128<byte> PaddedLastBlock(ref byte data, int dataLength, PaddingMode padding)
    {
        Debug.Assert((uint)dataLength < BlockSize);
        Debug.Assert(padding != PaddingMode.None && (padding != PaddingMode.Zeros || dataLength != 0));
        Vector128<byte> pad = Pad(dataLength, padding);
        if (dataLength == 0)
        {
            return pad;
        }

        // Little-endian (every platform .NET runs on): byte i of a loaded integer is the byte at offset i.
        // Bytes 0..dataLength-1 of `loaded` are the data; what lands past them is some data byte again (or zero), and the
        // blend below puts the padding there. The shift counts are masked to 0..63, so a count of 64 (dataLength 8, or
        // 4 in the 32-bit case) shifts by nothing: that half is then all positions past the data.
        ulong low;
        ulong high = 0;
        if (dataLength >= 8)
        {
            low = Unsafe.ReadUnaligned<ulong>(ref data);
            high = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref data, dataLength - 8)) >> (8 * (16 - dataLength));
        }
        else if (dataLength >= 4)
        {
            uint first = Unsafe.ReadUnaligned<uint>(ref data);
            uint last = Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref data, dataLength - 4)) >> (8 * (8 - dataLength));
            low = first | ((ulong)last << 32);
        }
        else
        {
            // 1..3 bytes: the first, the middle and the last (some the same byte when there are fewer than three).
            low = data | ((ulong)Unsafe.Add(ref data, dataLength >> 1) << 8) | ((ulong)Unsafe.Add(ref data, dataLength - 1) << 16);
        }

        Vector128<byte> loaded = Vector128.Create(low, high).AsByte();
        return Vector128.ConditionalSelect(PadPositions(dataLength), pad, loaded);
    }

    // The padding for a last block with `dataLength` data bytes, in all 16 positions (the caller keeps the data's):
    // PKCS7 (the default) by one compare, the others through the switch.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Pad(int dataLength, PaddingMode padding)
    {
        byte count = (byte)(BlockSize - dataLength);
        return padding == PaddingMode.PKCS7 ? Vector128.Create(count) : padding switch
        {
            PaddingMode.ANSIX923 => Vector128<byte>.Zero.WithElement(BlockSize - 1, count),
            PaddingMode.ISO10126 => RandomPad(count),
            _ => Vector128<byte>.Zero,
        };
    }

    // All ones at positions dataLength..15 of a block.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> PadPositions(int dataLength) =>
        Vector128.GreaterThanOrEqual(Positions, Vector128.Create((byte)dataLength));

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
