using System;
using System.Security.Cryptography;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations.Transforms;

/// <summary>The ECB/CBC encryptor: whole blocks as they come, padding on the final block (as stock's <c>UniversalCryptoEncryptor</c>).</summary>
internal sealed class CachedEncryptor(KeyEpoch epoch, int version, BlockCipherMode mode, ReadOnlySpan<byte> iv, PaddingMode padding)
    : CachedTransform(epoch, version, mode, encrypting: true, iv, padding)
{
    protected override int TransformBlockCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        Transform(input, output[..input.Length]);
        return input.Length;
    }

    protected override byte[] TransformFinalBlockCore(ReadOnlySpan<byte> input)
    {
        // Checked before the native cipher is reached, as in stock: None with a partial block throws here.
        int length = SymmetricPadding.GetCiphertextLength(input.Length, Padding);
        if (length == 0)
        {
            ThrowIfDisposedAtFinal(0);
            Restart();
            return [];
        }

        byte[] ciphertext = GC.AllocateUninitializedArray<byte>(length);
        using (KeyEpoch.HandleLease lease = AcquireCipher())
        {
            if (OneShot.Encrypt(lease.Cipher, ChainIv, Padding, input, ciphertext) != OneShot.Outcome.Done)
            {
                throw lease.Cipher.CreateFailure();
            }
        }

        Restart();
        return ciphertext;
    }
}
