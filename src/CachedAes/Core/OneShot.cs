using System;
using System.Buffers;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// The buffer logic of the ECB and CBC one-shots, shared by every backend: padding, destination sizing,
/// overlap, and plaintext hygiene (nothing decrypted is left in the caller's buffer, or in a temporary,
/// after a failure).
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

    public static unsafe bool Decrypt(
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

        // The destination may still hold the unpadded plaintext: decrypt into a temporary first.
        byte[]? rented = null;
        Span<byte> temporary = ciphertext.Length <= StackTemporary
            ? stackalloc byte[StackTemporary]
            : (rented = ArrayPool<byte>.Shared.Rent(ciphertext.Length));
        temporary = temporary[..ciphertext.Length];

        fixed (byte* pinned = temporary) // a rented array holding plaintext must not be moved (copied) by the GC
        {
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
                if (rented is not null)
                {
                    ArrayPool<byte>.Shared.Return(rented);
                }
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
