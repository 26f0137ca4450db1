using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// The buffer logic of the ECB and CBC one-shots, shared by every backend: padding, destination sizing,
/// overlap, and plaintext hygiene (nothing decrypted is left in the caller's buffer, or in a temporary,
/// after a failure). Temporaries live on the stack only, so no plaintext ever sits in movable GC memory.
/// </summary>
internal static class OneShot
{
    private const int BlockSize = SymmetricPadding.BlockSize;
    private const int StackTemporary = 256;

    public static bool Encrypt(
        in MessageCipher cipher,
        PaddingMode padding,
        ReadOnlySpan<byte> plaintext,
        Span<byte> destination,
        out int bytesWritten)
    {
        int length = SymmetricPadding.GetCiphertextLength(plaintext.Length, padding);
        if (destination.Length < length)
        {
            bytesWritten = 0;
            return false;
        }

        // Copy (memmove: any overlap is fine), pad, then encrypt in place.
        Span<byte> message = destination[..length];
        plaintext.CopyTo(message);
        SymmetricPadding.Pad(message, plaintext.Length, padding);

        try
        {
            cipher.Run(message, message);
        }
        catch
        {
            // The buffer held plaintext before the failed transform.
            CryptographicOperations.ZeroMemory(message);
            throw;
        }

        bytesWritten = length;
        return true;
    }

    [SkipLocalsInit] // the temporary is written before it is read
    public static bool Decrypt(
        in MessageCipher cipher,
        PaddingMode padding,
        ReadOnlySpan<byte> ciphertext,
        Span<byte> destination,
        out int bytesWritten)
    {
        if (ciphertext.Length % BlockSize != 0)
        {
            throw new CryptographicException(SymmetricPadding.PartialBlockMessage);
        }

        if (destination.Length >= ciphertext.Length)
        {
            Span<byte> message = destination[..ciphertext.Length];
            bytesWritten = DecryptAndUnpad(cipher, padding, ciphertext, message);
            // The pad bytes are plaintext too.
            CryptographicOperations.ZeroMemory(message[bytesWritten..]);
            return true;
        }

        // Without depadding nothing is removed, and valid padding is at most one block: in either case the
        // plaintext cannot fit, and (as stock does) the call fails without decrypting or checking padding.
        if (padding is PaddingMode.None or PaddingMode.Zeros || ciphertext.Length - BlockSize > destination.Length)
        {
            bytesWritten = 0;
            return false;
        }

        // The destination may still hold the unpadded plaintext, which we only know once the last block is
        // decrypted. Short messages are decrypted whole into a stack temporary.
        if (ciphertext.Length <= StackTemporary)
        {
            Span<byte> temporary = stackalloc byte[StackTemporary];
            temporary = temporary[..ciphertext.Length];
            try
            {
                int length = DecryptAndUnpad(cipher, padding, ciphertext, temporary);
                if (length > destination.Length)
                {
                    bytesWritten = 0;
                    return false;
                }

                temporary[..length].CopyTo(destination);
                bytesWritten = length;
                return true;
            }
            finally
            {
                CryptographicOperations.ZeroMemory(temporary);
            }
        }

        return DecryptLastBlockAside(cipher, padding, ciphertext, destination, out bytesWritten);
    }

    // Longer messages: every block but the last goes straight into the destination (it fits, checked above),
    // the last block into a stack buffer. In CBC the last block only needs the ciphertext block before it as
    // its IV, so both are saved first, which also makes any overlap of the buffers harmless.
    [SkipLocalsInit] // both buffers are written before they are read
    private static bool DecryptLastBlockAside(
        in MessageCipher cipher,
        PaddingMode padding,
        ReadOnlySpan<byte> ciphertext,
        Span<byte> destination,
        out int bytesWritten)
    {
        Debug.Assert(ciphertext.Length > 2 * BlockSize && destination.Length >= ciphertext.Length - BlockSize);
        int headLength = ciphertext.Length - BlockSize;
        Span<byte> last = stackalloc byte[BlockSize];
        Span<byte> lastIv = stackalloc byte[BlockSize];
        ciphertext[headLength..].CopyTo(last);
        ciphertext.Slice(headLength - BlockSize, BlockSize).CopyTo(lastIv);

        Span<byte> head = destination[..headLength];
        bool succeeded = false;
        try
        {
            cipher.Run(ciphertext[..headLength], head);
            cipher.ContinueAfter(lastIv).Run(last, last);

            int lastLength = SymmetricPadding.GetUnpaddedLength(last, padding);
            if (lastLength < 0)
            {
                throw new CryptographicException(SymmetricPadding.InvalidPaddingMessage);
            }

            if (headLength + lastLength > destination.Length)
            {
                bytesWritten = 0;
                return false;
            }

            last[..lastLength].CopyTo(destination[headLength..]);
            bytesWritten = headLength + lastLength;
            succeeded = true;
            return true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(last);
            if (!succeeded)
            {
                CryptographicOperations.ZeroMemory(head);
            }
        }
    }

    // Decrypts into `message` (same length as the ciphertext) and returns the unpadded length. On any failure
    // the whole of `message` is zeroed before the exception leaves.
    private static int DecryptAndUnpad(in MessageCipher cipher, PaddingMode padding, ReadOnlySpan<byte> ciphertext, Span<byte> message)
    {
        int length;
        try
        {
            cipher.Run(ciphertext, message);
            length = SymmetricPadding.GetUnpaddedLength(message, padding);
        }
        catch
        {
            CryptographicOperations.ZeroMemory(message);
            throw;
        }

        if (length < 0)
        {
            CryptographicOperations.ZeroMemory(message);
            throw new CryptographicException(SymmetricPadding.InvalidPaddingMessage);
        }

        return length;
    }
}
