using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Operations;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography;

// The one-shot cores (EncryptEcb, DecryptCbc, EncryptCfb, ... all end here after the base class has validated the
// arguments): the lengths are checked first, then a cached handle is leased for the work (Operations/OneShot.cs).
public sealed partial class CachedAes
{
    /// <summary>Encrypts with ECB on a cached ECB encryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, or a native
    /// call failed (the handle is then released and the next call makes a new one).
    /// </exception>
    protected override bool TryEncryptEcbCore(ReadOnlySpan<byte> plaintext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Encrypt(BlockCipherMode.Ecb, default, paddingMode, plaintext, destination, out bytesWritten);

    /// <summary>Decrypts with ECB on a cached ECB decryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, or a native call failed (the handle is then released).
    /// No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    protected override bool TryDecryptEcbCore(ReadOnlySpan<byte> ciphertext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Decrypt(BlockCipherMode.Ecb, default, paddingMode, ciphertext, destination, out bytesWritten);

    /// <summary>Encrypts with CBC on a cached CBC encryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, or a native
    /// call failed (the handle is then released and the next call makes a new one).
    /// </exception>
    [SkipLocalsInit] // the IV's copy is written before its address is taken
    protected override bool TryEncryptCbcCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        // The IV is read before the destination is written, as stock reads it: an IV inside the destination counts as it
        // was when the call began (the base class checked its length).
        Vector128<byte> start = Vector128.Create(iv);
        return Encrypt(BlockCipherMode.Cbc, AsSpan(ref start), paddingMode, plaintext, destination, out bytesWritten);
    }

    /// <summary>Decrypts with CBC on a cached CBC decryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, or a native call failed (the handle is then released).
    /// No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    [SkipLocalsInit] // the IV's copy is written before its address is taken
    protected override bool TryDecryptCbcCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        // As for encryption: the IV as it was when the call began, whatever the call writes into the destination.
        Vector128<byte> start = Vector128.Create(iv);
        return Decrypt(BlockCipherMode.Cbc, AsSpan(ref start), paddingMode, ciphertext, destination, out bytesWritten);
    }

    /// <inheritdoc />
    /// <remarks>CFB is not cached natively: it runs on a stock instance holding the same key, kept between calls.</remarks>
    /// <exception cref="CryptographicException">The feedback size is not 8 or 128 bits, or the input is invalid for the padding mode.</exception>
    protected override bool TryEncryptCfbCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        using KeyEpoch.StockLease stock = _key.RentStock(KeySizeValue);
        return stock.Aes.TryEncryptCfb(plaintext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
    }

    /// <inheritdoc />
    /// <remarks>CFB is not cached natively: it runs on a stock instance holding the same key, kept between calls.</remarks>
    /// <exception cref="CryptographicException">The feedback size is not 8 or 128 bits, or the input is invalid for the padding mode.</exception>
    protected override bool TryDecryptCfbCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        using KeyEpoch.StockLease stock = _key.RentStock(KeySizeValue);
        return stock.Aes.TryDecryptCfb(ciphertext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
    }

    // No exception handler here (it would keep the JIT from inlining the calls around it): the work reports how it ended,
    // the handle goes back, and only then does a failure throw.
    [SkipLocalsInit] // every local is written before it is read
    private bool Encrypt(BlockCipherMode mode, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> plaintext, Span<byte> destination, out int bytesWritten)
    {
        int length = SymmetricPadding.GetCiphertextLength(plaintext.Length, padding);
        if (destination.Length < length)
        {
            bytesWritten = 0;
            return false;
        }

        if (length != 0)
        {
            KeyEpoch.HandleLease lease = Rent(mode, encrypting: true);
            OneShot.Outcome outcome = OneShot.Encrypt(lease.Cipher, iv, padding, plaintext, destination.Slice(0, length));
            if (outcome != OneShot.Outcome.Done)
            {
                ThrowAfterReturning(outcome, lease);
            }

            lease.Dispose();
        }

        bytesWritten = length;
        return true;
    }

    [SkipLocalsInit] // every local is written before it is read
    private bool Decrypt(BlockCipherMode mode, ReadOnlySpan<byte> iv, PaddingMode padding, ReadOnlySpan<byte> ciphertext, Span<byte> destination, out int bytesWritten)
    {
        OneShot.Decryption check = OneShot.CheckDecryption(ciphertext.Length, destination.Length, padding);
        if (check != OneShot.Decryption.Needed)
        {
            bytesWritten = 0;
            return check == OneShot.Decryption.Empty;
        }

        KeyEpoch.HandleLease lease = Rent(mode, encrypting: false);
        OneShot.Outcome outcome = OneShot.Decrypt(lease.Cipher, iv, padding, ciphertext, destination, out bytesWritten);
        if (outcome > OneShot.Outcome.DoesNotFit)
        {
            ThrowAfterReturning(outcome, lease);
        }

        lease.Dispose();
        return outcome == OneShot.Outcome.Done;
    }

    // A failed call: the handle's own description of a native failure first (before anything else runs on this thread),
    // then the handle goes back (a faulted one is released, not cached), then the throw.
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowAfterReturning(OneShot.Outcome outcome, scoped KeyEpoch.HandleLease lease)
    {
        CryptographicException? failure = null;
        try
        {
            failure = outcome == OneShot.Outcome.NativeFailure ? lease.Cipher.CreateFailure() : null;
        }
        finally
        {
            lease.Dispose();
        }

        OneShot.Throw(outcome, failure);
    }

    // A block held in a local, as the span the seam takes.
    private static ReadOnlySpan<byte> AsSpan(ref Vector128<byte> block) =>
        MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<Vector128<byte>, byte>(ref block), Vector128<byte>.Count);
}
