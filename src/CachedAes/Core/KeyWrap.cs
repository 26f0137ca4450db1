using System;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Interop;

namespace CachedCryptography.Core;

/// <summary>
/// AES key wrap with padding (RFC 5649) and the RFC 3394 wrap it is built on, written once over an
/// <see cref="BlockCipher"/> ECB handle so that every backend gets the same allocation-free path.
/// </summary>
/// <remarks>
/// Every AES step transforms one 16-byte block held on the stack: the 64-bit integrity register A in
/// the first half and the current 64-bit data block R[i] in the second. The data blocks themselves are
/// processed in place in the caller's destination. Callers hold the handle (a lease from the owning
/// instance) for the whole wrap and pass one for the matching direction (encrypt for wrap, decrypt for unwrap).
/// A native failure throws the handle's own exception, and the destination is cleared.
/// </remarks>
internal static class KeyWrap
{
    /// <summary>The message text of the integrity failure, the same as the managed .NET implementation.</summary>
    internal const string IntegrityFailureMessage = "The ciphertext did not successfully decrypt with the instance key.";

    /// <summary>High 32 bits of the RFC 5649 alternative initial value.</summary>
    private const uint AivPrefix = 0xA65959A6;

    private const int BlockSize = 16;
    private const int HalfBlock = 8;

    /// <summary>
    /// RFC 5649 wrap of <paramref name="source"/> (non-empty) into <paramref name="destination"/>, which is
    /// exactly <c>Aes.GetKeyWrapPaddedLength(source.Length)</c> bytes and does not overlap the source.
    /// </summary>
    public static void WrapPadded(BlockCipher ecbEncrypt, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(!source.IsEmpty);
        Debug.Assert(destination.Length == PaddedLength(source.Length));

        Span<byte> block = stackalloc byte[BlockSize];
        bool completed = false;

        try
        {
            BinaryPrimitives.WriteUInt32BigEndian(block, AivPrefix);
            BinaryPrimitives.WriteUInt32BigEndian(block.Slice(4, 4), (uint)source.Length);

            Span<byte> data = destination.Slice(HalfBlock);
            source.CopyTo(data);
            data.Slice(source.Length).Clear();

            if (data.Length == HalfBlock)
            {
                // One padded block: a single AES encryption of AIV || P.
                data.CopyTo(block.Slice(HalfBlock));
                Step(ecbEncrypt, block);
                block.CopyTo(destination);
            }
            else
            {
                WrapRounds(ecbEncrypt, block, data);
                block.Slice(0, HalfBlock).CopyTo(destination);
            }

            completed = true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);

            if (!completed)
            {
                // A native failure part way through would leave plaintext in the caller's buffer.
                CryptographicOperations.ZeroMemory(destination);
            }
        }
    }

    /// <summary>
    /// RFC 5649 unwrap of <paramref name="source"/> into <paramref name="destination"/>, which is exactly
    /// <c>source.Length - 8</c> bytes and does not overlap the source. Returns the plaintext length.
    /// </summary>
    /// <exception cref="CryptographicException">
    /// The integrity check failed; <paramref name="destination"/> is left all zero.
    /// </exception>
    public static int UnwrapPadded(BlockCipher ecbDecrypt, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(source.Length >= BlockSize && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length - HalfBlock);

        Span<byte> block = stackalloc byte[BlockSize];
        bool completed = false;

        try
        {
            if (source.Length == BlockSize)
            {
                // One padded block: a single AES decryption gives AIV || P.
                source.CopyTo(block);
                Step(ecbDecrypt, block);
                block.Slice(HalfBlock).CopyTo(destination);
            }
            else
            {
                source.Slice(0, HalfBlock).CopyTo(block);
                source.Slice(HalfBlock).CopyTo(destination);
                UnwrapRounds(ecbDecrypt, block, destination);
            }

            // Every check below is computed without a data-dependent branch and folded into one value.
            uint prefixDifference = BinaryPrimitives.ReadUInt32BigEndian(block) ^ AivPrefix;
            uint messageLength = BinaryPrimitives.ReadUInt32BigEndian(block.Slice(4, 4));
            long paddedLength = destination.Length;

            // 8(n-1) < L, i.e. L - (8n - 7) >= 0; and L <= 8n, i.e. 8n - L >= 0. The sign bit marks a failure.
            long tooShort = messageLength - (paddedLength - (HalfBlock - 1));
            long tooLong = paddedLength - messageLength;
            ulong lengthFailure = ((ulong)tooShort | (ulong)tooLong) >> 63;

            // Pad bytes can only be in the last 8-byte block; a byte at position p is padding when p >= L.
            int padBits = 0;
            long lastBlockStart = paddedLength - HalfBlock;
            ReadOnlySpan<byte> lastBlock = destination.Slice((int)lastBlockStart);

            for (int k = 0; k < HalfBlock; k++)
            {
                // (p - L) >> 63 is all ones when p < L (data byte) and zero when p >= L (pad byte).
                long dataMask = (lastBlockStart + k - messageLength) >> 63;
                padBits |= lastBlock[k] & ~(int)dataMask;
            }

            ulong failure = prefixDifference | lengthFailure | (uint)padBits;

            if (failure != 0)
            {
                throw new CryptographicException(IntegrityFailureMessage);
            }

            completed = true;
            return (int)messageLength;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);

            if (!completed)
            {
                CryptographicOperations.ZeroMemory(destination);
            }
        }
    }

    /// <summary>
    /// RFC 3394 wrap of <paramref name="source"/> (a multiple of 8 bytes, at least 16) with the initial
    /// value <paramref name="iv"/> (8 bytes) into <paramref name="destination"/> (<c>source.Length + 8</c> bytes).
    /// The buffers may overlap. The caller validates the lengths (the public members throw .NET's exception
    /// types); here they are only asserted.
    /// </summary>
    public static void Wrap(BlockCipher ecbEncrypt, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(iv.Length == HalfBlock);
        Debug.Assert(source.Length >= BlockSize && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length + HalfBlock);

        Span<byte> block = stackalloc byte[BlockSize];
        bool completed = false;

        try
        {
            iv.CopyTo(block);
            Span<byte> data = destination.Slice(HalfBlock);
            source.CopyTo(data);
            WrapRounds(ecbEncrypt, block, data);
            block.Slice(0, HalfBlock).CopyTo(destination);
            completed = true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);

            if (!completed)
            {
                CryptographicOperations.ZeroMemory(destination);
            }
        }
    }

    /// <summary>
    /// RFC 3394 unwrap of <paramref name="source"/> (a multiple of 8 bytes, at least 24) into
    /// <paramref name="destination"/> (<c>source.Length - 8</c> bytes), checking the recovered integrity
    /// register against <paramref name="expectedIv"/> (8 bytes) in constant time. The buffers may overlap.
    /// The caller validates the lengths; here they are only asserted.
    /// </summary>
    /// <exception cref="CryptographicException">
    /// The integrity check failed; <paramref name="destination"/> is left all zero.
    /// </exception>
    public static void Unwrap(BlockCipher ecbDecrypt, ReadOnlySpan<byte> expectedIv, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(expectedIv.Length == HalfBlock);
        Debug.Assert(source.Length >= BlockSize + HalfBlock && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length - HalfBlock);

        Span<byte> block = stackalloc byte[BlockSize];
        bool completed = false;

        try
        {
            // Read A before the copy: with overlapping buffers the copy may overwrite it.
            source.Slice(0, HalfBlock).CopyTo(block);
            source.Slice(HalfBlock).CopyTo(destination);
            UnwrapRounds(ecbDecrypt, block, destination);

            if (!CryptographicOperations.FixedTimeEquals(block.Slice(0, HalfBlock), expectedIv))
            {
                throw new CryptographicException(IntegrityFailureMessage);
            }

            completed = true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);

            if (!completed)
            {
                CryptographicOperations.ZeroMemory(destination);
            }
        }
    }

    /// <summary>
    /// The six RFC 3394 wrap rounds. <paramref name="block"/> holds A in its first half on entry and on
    /// exit; <paramref name="data"/> holds R[1..n] (n ≥ 2) and is transformed in place.
    /// </summary>
    private static void WrapRounds(BlockCipher ecbEncrypt, Span<byte> block, Span<byte> data)
    {
        int n = data.Length / HalfBlock;
        Span<byte> a = block.Slice(0, HalfBlock);
        Span<byte> r = block.Slice(HalfBlock);
        ulong t = 0;

        for (int j = 0; j < 6; j++)
        {
            for (int i = 0; i < n; i++)
            {
                Span<byte> ri = data.Slice(i * HalfBlock, HalfBlock);
                ri.CopyTo(r);
                Step(ecbEncrypt, block);
                t++;
                BinaryPrimitives.WriteUInt64BigEndian(a, BinaryPrimitives.ReadUInt64BigEndian(a) ^ t);
                r.CopyTo(ri);
            }
        }
    }

    /// <summary>
    /// The six RFC 3394 unwrap rounds, the inverse of <see cref="WrapRounds"/>.
    /// </summary>
    private static void UnwrapRounds(BlockCipher ecbDecrypt, Span<byte> block, Span<byte> data)
    {
        int n = data.Length / HalfBlock;
        Span<byte> a = block.Slice(0, HalfBlock);
        Span<byte> r = block.Slice(HalfBlock);
        ulong t = 6UL * (ulong)n;

        for (int j = 5; j >= 0; j--)
        {
            for (int i = n - 1; i >= 0; i--)
            {
                Span<byte> ri = data.Slice(i * HalfBlock, HalfBlock);
                BinaryPrimitives.WriteUInt64BigEndian(a, BinaryPrimitives.ReadUInt64BigEndian(a) ^ t);
                t--;
                ri.CopyTo(r);
                Step(ecbDecrypt, block);
                r.CopyTo(ri);
            }
        }
    }

    private static int PaddedLength(int length) => ((length + 7) / 8 + 1) * 8;

    // One AES block operation in place; a native failure becomes the handle's exception (the callers' finally
    // blocks then clear the destination).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Step(BlockCipher ecb, Span<byte> block)
    {
        if (!ecb.TryTransform(default, block, block))
        {
            throw ecb.CreateFailure();
        }
    }
}
