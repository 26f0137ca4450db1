using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations.Transforms;

/// <summary>
/// The ECB/CBC decryptor (as stock's <c>UniversalCryptoDecryptor</c>): with a padding mode that removes padding (PKCS7,
/// ANSI X9.23, ISO 10126), <see cref="CachedTransform.TransformBlock"/> holds the last ciphertext block back, because only
/// the final call can tell whether it is the padded one; with None and Zeros nothing is held back.
/// </summary>
internal sealed class CachedDecryptor(KeyEpoch epoch, int version, BlockCipherMode mode, ReadOnlySpan<byte> iv, PaddingMode padding)
    : CachedTransform(epoch, version, mode, encrypting: false, iv, padding)
{
    // The held-back block is ciphertext, never plaintext.
    private Vector128<byte> _held;
    private bool _holding;

    private bool RemovesPadding => Padding is not (PaddingMode.None or PaddingMode.Zeros);

    private ReadOnlySpan<byte> Held => MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<Vector128<byte>, byte>(ref _held), BlockSize);

    protected override int TransformBlockCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        int written = 0;
        if (RemovesPadding)
        {
            // The block held back by the previous call comes first; then the last block of this input is held back in
            // turn. The order of reads and writes is stock's, so even overlapping buffers give stock's bytes.
            if (_holding)
            {
                Transform(Held, output[..BlockSize]);
                output = output[BlockSize..];
                written = BlockSize;
            }

            _held = Vector128.Create(input[^BlockSize..]);
            _holding = true;
            input = input[..^BlockSize];
        }

        if (!input.IsEmpty)
        {
            Transform(input, output[..input.Length]);
            written += input.Length;
        }

        return written;
    }

    protected override byte[] TransformFinalBlockCore(ReadOnlySpan<byte> input)
    {
        if (input.Length % BlockSize != 0)
        {
            Errors.ThrowPartialBlock();
        }

        int total = (_holding ? BlockSize : 0) + input.Length;
        ThrowIfDisposedAtFinal(total);
        if (!RemovesPadding || total == 0)
        {
            // Nothing to depad (None, Zeros), or nothing at all: stock then returns no bytes, not a padding error.
            byte[] plaintext = GC.AllocateUninitializedArray<byte>(input.Length);
            if (!input.IsEmpty)
            {
                Transform(input, plaintext);
            }

            Restart();
            return plaintext;
        }

        return DecryptAndDepad(input, total);
    }

    protected override void OnDispose()
    {
        _held = default;
        _holding = false;
    }

    // The held block and the input are one message of `total` bytes (whole blocks, at least one). Its last block is
    // decrypted first, on the stack, so that the padding is checked before any plaintext reaches the result; the rest is
    // then decrypted straight into a result of exactly the unpadded length.
    [SkipLocalsInit] // `last` is written before it is read
    private byte[] DecryptAndDepad(ReadOnlySpan<byte> input, int total)
    {
        ReadOnlySpan<byte> lastCiphertext = input.IsEmpty ? Held : input[^BlockSize..];
        ReadOnlySpan<byte> lastIv =
            IsEcb ? default
            : input.Length >= 2 * BlockSize ? input[^(2 * BlockSize)..^BlockSize]
            : input.Length == BlockSize && _holding ? Held
            : ChainIv;

        Span<byte> last = stackalloc byte[BlockSize];
        using KeyEpoch.HandleLease lease = AcquireCipher();
        try
        {
            if (!lease.Cipher.TryTransform(lastIv, lastCiphertext, last))
            {
                throw lease.Cipher.CreateFailure();
            }

            int lastLength = SymmetricPadding.GetUnpaddedLength(last, Padding);
            if (lastLength < 0)
            {
                // Stock's final transform has already returned to the IV, and it keeps the held block.
                Restart();
                Errors.ThrowInvalidPadding();
            }

            byte[] plaintext = GC.AllocateUninitializedArray<byte>(total - BlockSize + lastLength);
            try
            {
                Span<byte> head = plaintext.AsSpan(0, total - BlockSize);
                if (_holding && !input.IsEmpty)
                {
                    Transform(lease.Cipher, Held, head[..BlockSize]);
                    head = head[BlockSize..];
                }

                if (input.Length > BlockSize)
                {
                    Transform(lease.Cipher, input[..^BlockSize], head);
                }
            }
            catch
            {
                // A native failure part way: the blocks decrypted before it must not stay in the abandoned array.
                CryptographicOperations.ZeroMemory(plaintext);
                throw;
            }

            last[..lastLength].CopyTo(plaintext.AsSpan(total - BlockSize));
            _held = default;
            _holding = false;
            Restart();
            return plaintext;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(last);
        }
    }
}
