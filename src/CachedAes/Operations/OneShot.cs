using System;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations;

/// <summary>
/// The buffer logic of the ECB and CBC one-shots, written once for every backend: padding, destination sizing,
/// overlapping buffers, and plaintext hygiene. The caller checks the lengths first (<see cref="CheckDecryption"/>,
/// <see cref="SymmetricPadding.GetCiphertextLength"/>) and only then rents a handle for the work here, so a call that
/// cannot succeed never touches a native handle. The bytes a call leaves in the caller's destination, on success and on
/// every failure, are the ones stock .NET leaves (its <c>UniversalCryptoOneShot</c> paths are followed case by case),
/// and temporaries that hold plaintext live on the stack or in native memory, zeroed before release, never in movable
/// GC memory.
/// </summary>
internal static class OneShot
{
    private const int BlockSize = BlockCipher.BlockSize;

    // Stock decrypts a message that might not fit the destination on the stack up to this size, so a failure leaves
    // the destination untouched; above it, all but the last block go straight into the destination and a failure
    // zeroes them. Using stock's number keeps the destination's bytes after a failure identical to stock's.
    private const int StackDecryptLimit = 128;

    // Temporaries up to this size go on the stack, larger ones into native memory.
    private const int StackTemporaryLimit = 1024;

    // From this ciphertext length on, encryption reads whole blocks straight from the plaintext instead of copying
    // the plaintext into the destination first: the copy then costs more than the one or two extra native calls for
    // the padded last block (and, for CBC on OpenSSL, the first block). The measurement behind the threshold is in
    // docs/design-notes.md ("Encrypting from the source").
    private const int DirectEncryptLength = 1024;

    /// <summary>What a decryption's lengths allow, decided before any handle is rented.</summary>
    internal enum Decryption
    {
        /// <summary>The ciphertext is empty and the padding mode removes nothing: zero bytes, success.</summary>
        Empty,

        /// <summary>The destination cannot hold the plaintext whatever the padding turns out to be: fail (return false) without decrypting.</summary>
        CannotFit,

        /// <summary>Decrypt (<see cref="Decrypt"/>).</summary>
        Needed,
    }

    /// <summary>
    /// How the work on a leased handle ended. The work never throws, so that the caller gives its handle back first
    /// (no exception handler on the one-shot path: one stops the JIT from inlining the calls around it) and then throws
    /// what <see cref="Throw"/> says.
    /// </summary>
    internal enum Outcome
    {
        /// <summary>Done; the output is in place.</summary>
        Done,

        /// <summary>Decryption: the unpadded plaintext does not fit the destination (nothing is left in it): return false.</summary>
        DoesNotFit,

        /// <summary>Decryption: the padding is invalid (no plaintext is left in the destination).</summary>
        InvalidPadding,

        /// <summary>A native call failed: the handle is faulted, and the output holds no plaintext.</summary>
        NativeFailure,
    }

    /// <summary>Throws what <paramref name="outcome"/> (<see cref="Outcome.InvalidPadding"/> or <see cref="Outcome.NativeFailure"/>) means.</summary>
    /// <param name="outcome">The failed outcome.</param>
    /// <param name="failure">The handle's description of its native failure (<see cref="BlockCipher.CreateFailure"/>), taken right after the failure.</param>
    [DoesNotReturn]
    public static void Throw(Outcome outcome, CryptographicException? failure)
    {
        Debug.Assert(outcome is Outcome.InvalidPadding or Outcome.NativeFailure);
        if (outcome == Outcome.InvalidPadding)
        {
            Errors.ThrowInvalidPadding();
        }

        throw failure!;
    }

    /// <summary>The length checks of <c>TryDecryptEcbCore</c>/<c>TryDecryptCbcCore</c>, which stock makes before any native work.</summary>
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, or it is empty and <paramref name="padding"/> expects a padding block.
    /// </exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Decryption CheckDecryption(int ciphertextLength, int destinationLength, PaddingMode padding)
    {
        if ((ciphertextLength & (BlockSize - 1)) != 0)
        {
            Errors.ThrowPartialBlock();
        }

        if (ciphertextLength == 0)
        {
            // A padding mode that removes padding finds no padding block.
            if (padding is not (PaddingMode.None or PaddingMode.Zeros))
            {
                Errors.ThrowInvalidPadding();
            }

            return Decryption.Empty;
        }

        // Without depadding nothing is removed, and valid padding is at most one block: in either case a destination
        // shorter than that cannot hold the plaintext, and (as stock does) the call fails without decrypting or
        // checking the padding.
        if (destinationLength < ciphertextLength
            && (padding is PaddingMode.None or PaddingMode.Zeros || ciphertextLength - BlockSize > destinationLength))
        {
            return Decryption.CannotFit;
        }

        return Decryption.Needed;
    }

    /// <summary>
    /// The work of <c>TryEncryptEcbCore</c>/<c>TryEncryptCbcCore</c> once the caller has checked the lengths:
    /// <paramref name="ciphertext"/> is the destination cut to exactly
    /// <see cref="SymmetricPadding.GetCiphertextLength"/> of the plaintext, which is not zero. <paramref name="iv"/> is
    /// empty for ECB.
    /// </summary>
    /// <returns><see cref="Outcome.Done"/>, or <see cref="Outcome.NativeFailure"/> (the ciphertext is then cleared).</returns>
    [SkipLocalsInit] // every local is written before it is read
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // on every one-shot's path, from one or two callers
    public static Outcome Encrypt(BlockCipher cipher, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext)
    {
        Debug.Assert(ciphertext.Length == SymmetricPadding.GetCiphertextLength(plaintext.Length, padding) && !ciphertext.IsEmpty);
        bool transformed = ciphertext.Length < DirectEncryptLength || PartiallyOverlap(plaintext, ciphertext)
            ? EncryptInPlace(cipher, iv, padding, plaintext, ciphertext)
            : EncryptFromSource(cipher, iv, padding, plaintext, ciphertext);

        if (!transformed)
        {
            // The destination may hold plaintext copied in before the failed transform.
            CryptographicOperations.ZeroMemory(ciphertext);
            return Outcome.NativeFailure;
        }

        return Outcome.Done;
    }

    /// <summary>
    /// The work of <c>TryDecryptEcbCore</c>/<c>TryDecryptCbcCore</c> once <see cref="CheckDecryption"/> said
    /// <see cref="Decryption.Needed"/>. <paramref name="iv"/> is empty for ECB.
    /// </summary>
    /// <returns>
    /// <see cref="Outcome.Done"/>; <see cref="Outcome.DoesNotFit"/> when the unpadded plaintext does not fit
    /// <paramref name="destination"/>; <see cref="Outcome.InvalidPadding"/> or <see cref="Outcome.NativeFailure"/>. No
    /// plaintext is left in <paramref name="destination"/> unless done.
    /// </returns>
    [SkipLocalsInit] // every local is written before it is read
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // on every one-shot's path, from one or two callers
    public static Outcome Decrypt(BlockCipher cipher, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> ciphertext, Span<byte> destination, out int bytesWritten)
    {
        Debug.Assert(CheckDecryption(ciphertext.Length, destination.Length, padding) == Decryption.Needed);
        if (destination.Length < ciphertext.Length)
        {
            return DecryptIntoShortDestination(cipher, iv, padding, ciphertext, destination, out bytesWritten);
        }

        Span<byte> message = destination.Slice(0, ciphertext.Length);
        bytesWritten = 0;
        if (!cipher.TryTransform(iv, InPlaceOrDisjoint(ciphertext, message), message))
        {
            CryptographicOperations.ZeroMemory(message);
            return Outcome.NativeFailure;
        }

        int length = SymmetricPadding.GetUnpaddedLength(message, padding);
        if (length < 0)
        {
            CryptographicOperations.ZeroMemory(message);
            return Outcome.InvalidPadding;
        }

        // The pad bytes are plaintext too. The caller's memory stays observable, so a plain store is never
        // optimised away (ZeroMemory is for buffers about to go out of scope, and is not inlined).
        if (length != message.Length)
        {
            SymmetricPadding.ClearPadding(message, length);
        }

        bytesWritten = length;
        return Outcome.Done;
    }

    // The destination is shorter than the ciphertext but may still hold the unpadded plaintext, which is known only
    // once the last block is decrypted.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Outcome DecryptIntoShortDestination(
        BlockCipher cipher,
        ReadOnlySpan<byte> iv,
        PaddingMode padding,
        ReadOnlySpan<byte> ciphertext,
        Span<byte> destination,
        out int bytesWritten) =>
        ciphertext.Length > StackDecryptLimit && !PartiallyOverlap(ciphertext, destination)
            ? DecryptLastBlockAside(cipher, iv, padding, ciphertext, destination, out bytesWritten)
            : DecryptThroughTemporary(cipher, iv, padding, ciphertext, destination, out bytesWritten);

    // Copy (memmove: any overlap is fine), pad, then encrypt in place with one native call.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool EncryptInPlace(BlockCipher cipher, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext)
    {
        SymmetricPadding.CopyPadded(plaintext, ciphertext, padding);
        return cipher.TryTransform(iv, ciphertext, ciphertext);
    }

    // Whole blocks go straight from the plaintext into the destination; then the partial block is copied after them,
    // padded in place and transformed as the last block. The plaintext and destination are disjoint or the same memory
    // (in place, the whole blocks are transformed where they are and the partial block is already in position).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool EncryptFromSource(BlockCipher cipher, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext)
    {
        int whole = plaintext.Length & ~(BlockSize - 1);
        if (whole == ciphertext.Length)
        {
            return cipher.TryTransform(iv, plaintext, ciphertext);
        }

        Debug.Assert(ciphertext.Length == whole + BlockSize && whole != 0);
        if (!cipher.TryTransform(iv, plaintext.Slice(0, whole), ciphertext.Slice(0, whole)))
        {
            return false;
        }

        Span<byte> last = ciphertext.Slice(whole);
        plaintext.Slice(whole).CopyTo(last);
        SymmetricPadding.PadLastBlock(last, plaintext.Length - whole, padding);
        return cipher.TryTransform(ChainFrom(iv, ciphertext, whole), last, last);
    }

    // A message over the stack limit whose buffers do not partially overlap: every block but the last goes straight
    // into the destination (it fits: checked by the caller), the last into a stack buffer. In CBC the last block
    // needs only the ciphertext block before it as its IV, so both are saved first (in place, the head overwrites them).
    [SkipLocalsInit] // both buffers are written before they are read
    private static Outcome DecryptLastBlockAside(
        BlockCipher cipher,
        ReadOnlySpan<byte> iv,
        PaddingMode padding,
        ReadOnlySpan<byte> ciphertext,
        Span<byte> destination,
        out int bytesWritten)
    {
        int headLength = ciphertext.Length - BlockSize;
        Debug.Assert(headLength >= BlockSize && destination.Length >= headLength);
        Span<byte> last = stackalloc byte[BlockSize];
        Span<byte> lastIv = stackalloc byte[BlockSize];
        ciphertext[headLength..].CopyTo(last);
        ciphertext.Slice(headLength - BlockSize, BlockSize).CopyTo(lastIv);
        Span<byte> head = destination[..headLength];

        bool transformed = cipher.TryTransform(iv, ciphertext[..headLength], head)
            && cipher.TryTransform(iv.IsEmpty ? default : lastIv, last, last);
        int lastLength = transformed ? SymmetricPadding.GetUnpaddedLength(last, padding) : -1;
        bool fits = lastLength >= 0 && headLength + lastLength <= destination.Length;
        if (fits)
        {
            last[..lastLength].CopyTo(destination[headLength..]);
        }
        else
        {
            CryptographicOperations.ZeroMemory(head);
        }

        CryptographicOperations.ZeroMemory(last);
        bytesWritten = fits ? headLength + lastLength : 0;
        return !transformed ? Outcome.NativeFailure
            : lastLength < 0 ? Outcome.InvalidPadding
            : fits ? Outcome.Done
            : Outcome.DoesNotFit;
    }

    // Short messages, and messages whose buffers partially overlap: the whole message is decrypted into a temporary
    // and only the unpadded plaintext is copied out if it fits, so a failure leaves the destination untouched.
    [SkipLocalsInit] // the temporary is written before it is read
    private static unsafe Outcome DecryptThroughTemporary(
        BlockCipher cipher,
        ReadOnlySpan<byte> iv,
        PaddingMode padding,
        ReadOnlySpan<byte> ciphertext,
        Span<byte> destination,
        out int bytesWritten)
    {
        int length = ciphertext.Length;
        byte* native = length > StackTemporaryLimit ? (byte*)NativeMemory.Alloc((nuint)length) : null;
        Span<byte> temporary = native is null ? stackalloc byte[StackTemporaryLimit] : new Span<byte>(native, length);
        temporary = temporary[..length];
        bytesWritten = 0;
        try
        {
            if (!cipher.TryTransform(iv, ciphertext, temporary))
            {
                return Outcome.NativeFailure;
            }

            int unpadded = SymmetricPadding.GetUnpaddedLength(temporary, padding);
            if (unpadded < 0)
            {
                return Outcome.InvalidPadding;
            }

            if (unpadded > destination.Length)
            {
                return Outcome.DoesNotFit;
            }

            temporary[..unpadded].CopyTo(destination);
            bytesWritten = unpadded;
            return Outcome.Done;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(temporary);
            NativeMemory.Free(native);
        }
    }

    // The seam takes in-place or disjoint buffers only: a partially overlapping input is moved into place first.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ReadOnlySpan<byte> InPlaceOrDisjoint(ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (PartiallyOverlap(input, output))
        {
            input.CopyTo(output);
            return output;
        }

        return input;
    }

    // True when the two buffers share memory but do not start at the same address.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool PartiallyOverlap(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        nint offset = Unsafe.ByteOffset(ref MemoryMarshal.GetReference(a), ref MemoryMarshal.GetReference(b));
        return offset != 0 && offset < a.Length && -offset < b.Length && a.Length != 0 && b.Length != 0;
    }

    // The IV that continues a CBC message after `length` bytes of `ciphertext`: its last block so far (or the
    // message IV at the start). ECB has none.
    private static ReadOnlySpan<byte> ChainFrom(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> ciphertext, int length) =>
        iv.IsEmpty || length == 0 ? iv : ciphertext.Slice(length - BlockSize, BlockSize);
}
