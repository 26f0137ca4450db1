using System;
using System.Diagnostics;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// The five <see cref="PaddingMode"/>s over 16-byte AES blocks, written once for every backend.
/// The native cipher always runs with padding off.
/// </summary>
internal static class SymmetricPadding
{
    public const int BlockSize = 16;

    internal const string PartialBlockMessage = "The input data is not a complete block.";
    internal const string InvalidPaddingMessage = "Padding is invalid and cannot be removed.";

    /// <summary>Ciphertext length for <paramref name="plaintextLength"/> bytes under <paramref name="padding"/>.</summary>
    /// <exception cref="CryptographicException"><see cref="PaddingMode.None"/> with a partial block.</exception>
    public static int GetCiphertextLength(int plaintextLength, PaddingMode padding)
    {
        int partial = plaintextLength % BlockSize;
        int whole = plaintextLength - partial;

        switch (padding)
        {
            case PaddingMode.None:
                if (partial != 0)
                {
                    throw new CryptographicException(PartialBlockMessage);
                }

                return plaintextLength;
            case PaddingMode.Zeros:
                return partial == 0 ? plaintextLength : checked(whole + BlockSize);
            default:
                Debug.Assert(padding is PaddingMode.PKCS7 or PaddingMode.ANSIX923 or PaddingMode.ISO10126);
                return checked(whole + BlockSize);
        }
    }

    /// <summary>
    /// Writes the padding into <paramref name="message"/> after its first <paramref name="dataLength"/> bytes.
    /// <paramref name="message"/> is exactly the ciphertext length.
    /// </summary>
    public static void Pad(Span<byte> message, int dataLength, PaddingMode padding)
    {
        Span<byte> pad = message.Slice(dataLength);
        if (pad.IsEmpty)
        {
            return;
        }

        Debug.Assert(pad.Length <= BlockSize);
        byte count = (byte)pad.Length;

        switch (padding)
        {
            case PaddingMode.PKCS7:
                pad.Fill(count);
                break;
            case PaddingMode.ANSIX923:
                pad.Clear();
                pad[^1] = count;
                break;
            case PaddingMode.ISO10126:
                RandomNumberGenerator.Fill(pad[..^1]);
                pad[^1] = count;
                break;
            default:
                Debug.Assert(padding == PaddingMode.Zeros);
                pad.Clear();
                break;
        }
    }

    /// <summary>
    /// The length of <paramref name="plaintext"/> (whole blocks of decrypted data) once its padding is
    /// removed, or -1 when the padding is invalid. The pad bytes are examined with masks over the whole
    /// last block, so the work does not depend on the (secret) pad length; only the final verdict branches.
    /// </summary>
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
        ReadOnlySpan<byte> last = plaintext.Slice(plaintext.Length - BlockSize);
        int count = last[^1];

        // bad != 0 when count is outside 1..16.
        int bad = ((count - 1) | (BlockSize - count)) >> 31;

        if (padding != PaddingMode.ISO10126)
        {
            // Byte i from the end (i = 2..16) is a pad byte when i <= count; PKCS7 wants it to equal
            // count, ANSI X9.23 wants it zero. ISO 10126 pad bytes are random and never checked.
            int expected = padding == PaddingMode.PKCS7 ? count : 0;

            for (int i = 2; i <= BlockSize; i++)
            {
                int inPad = (i - count - 1) >> 31; // all ones when i <= count
                bad |= inPad & (last[BlockSize - i] ^ expected);
            }
        }

        return bad == 0 ? plaintext.Length - count : -1;
    }
}
