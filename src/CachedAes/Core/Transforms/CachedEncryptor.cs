using System;
using System.Security.Cryptography;

namespace CachedCryptography.Core.Transforms;

/// <summary>The ECB/CBC encryptor: whole blocks as they come, padding on the final block (as stock's <c>UniversalCryptoEncryptor</c>).</summary>
internal sealed class CachedEncryptor(HeldHandle handle, ReadOnlySpan<byte> iv, PaddingMode padding)
    : CachedTransform(handle, iv, padding)
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
        ThrowIfUnusable();
        if (length == 0)
        {
            Restart();
            return [];
        }

        byte[] ciphertext = GC.AllocateUninitializedArray<byte>(length);
        OneShot.Encrypt(Cipher, ChainIv, Padding, input, ciphertext);
        Restart();
        return ciphertext;
    }
}
