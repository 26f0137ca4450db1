using System;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations;

/// <summary>
/// AES key wrap without padding (RFC 3394) and with padding (RFC 5649, which is RFC 3394 under an alternative initial
/// value over zero-padded data), written once over an ECB <see cref="BlockCipher"/> so that every backend gets the same
/// allocation-free path.
/// </summary>
/// <remarks>
/// Every AES step transforms one 16-byte block held on the stack: the 64-bit integrity register A in the first half
/// and the current 64-bit data block R[i] in the second. The data blocks themselves are processed in place in the
/// caller's destination. Callers validate lengths and overlap (the public members throw .NET's exception types; here
/// they are only asserted), hold the handle for the whole operation, and pass one for the matching direction (encrypt
/// for wrap, decrypt for unwrap). On any failure the destination is cleared, and the working block always is.
/// </remarks>
internal static class KeyWrap
{
    /// <summary>High 32 bits of the RFC 5649 alternative initial value (section 3).</summary>
    private const uint AivPrefix = 0xA65959A6;

    private const int BlockSize = BlockCipher.BlockSize;
    private const int HalfBlock = BlockSize / 2;

    /// <summary>
    /// RFC 5649 wrap of <paramref name="source"/> (non-empty) into <paramref name="destination"/>, which is exactly
    /// <c>Aes.GetKeyWrapPaddedLength(source.Length)</c> bytes and does not overlap the source.
    /// </summary>
    /// <exception cref="CryptographicException">A native call failed (the destination is then cleared).</exception>
    public static void WrapPadded(BlockCipher ecbEncrypt, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(!source.IsEmpty && destination.Length == ((source.Length + 7) / 8 + 1) * 8);
        Debug.Assert(!source.Overlaps(destination));

        // The alternative initial value: the prefix and the message length indicator (big-endian).
        Span<byte> aiv = stackalloc byte[HalfBlock];
        BinaryPrimitives.WriteUInt32BigEndian(aiv, AivPrefix);
        BinaryPrimitives.WriteUInt32BigEndian(aiv.Slice(4), (uint)source.Length);

        // The plaintext, zero-padded to whole semiblocks, goes where the wrap reads it from (in place).
        Span<byte> padded = destination.Slice(HalfBlock);
        source.CopyTo(padded);
        padded.Slice(source.Length).Clear();
        Wrap(ecbEncrypt, aiv, padded, destination);
    }

    /// <summary>
    /// RFC 5649 unwrap of <paramref name="source"/> (at least 16 bytes, a multiple of 8) into
    /// <paramref name="destination"/>, which is exactly <c>source.Length - 8</c> bytes and does not overlap the source.
    /// Returns the plaintext length.
    /// </summary>
    /// <exception cref="CryptographicException">
    /// The integrity check failed, or a native call failed; <paramref name="destination"/> is then left all zero.
    /// </exception>
    public static int UnwrapPadded(BlockCipher ecbDecrypt, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(source.Length >= BlockSize && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length - HalfBlock && !source.Overlaps(destination));

        Span<byte> a = stackalloc byte[HalfBlock];
        try
        {
            UnwrapInto(ecbDecrypt, source, destination, a);

            // Every check below is computed without a data-dependent branch and folded into one value.
            uint prefixDifference = BinaryPrimitives.ReadUInt32BigEndian(a) ^ AivPrefix;
            uint messageLength = BinaryPrimitives.ReadUInt32BigEndian(a.Slice(4));
            long paddedLength = destination.Length;

            // 8(n-1) < L, i.e. L - (8n - 7) >= 0; and L <= 8n, i.e. 8n - L >= 0. The sign bit marks a failure.
            long tooShort = messageLength - (paddedLength - (HalfBlock - 1));
            long tooLong = paddedLength - messageLength;
            ulong lengthFailure = ((ulong)tooShort | (ulong)tooLong) >> 63;

            // Pad bytes can only be in the last semiblock; a byte at position p is padding when p >= L.
            int padBits = 0;
            long lastBlockStart = paddedLength - HalfBlock;
            ReadOnlySpan<byte> lastBlock = destination.Slice((int)lastBlockStart);
            for (int k = 0; k < HalfBlock; k++)
            {
                // (p - L) >> 63 is all ones when p < L (data byte) and zero when p >= L (pad byte).
                long dataMask = (lastBlockStart + k - messageLength) >> 63;
                padBits |= lastBlock[k] & ~(int)dataMask;
            }

            if ((prefixDifference | lengthFailure | (uint)padBits) != 0)
            {
                Errors.ThrowKeyWrapIntegrity();
            }

            return (int)messageLength;
        }
        catch
        {
            CryptographicOperations.ZeroMemory(destination);
            throw;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(a);
        }
    }

    /// <summary>
    /// RFC 3394 wrap of <paramref name="source"/> (a multiple of 8 bytes, at least 16; or exactly 8 when called by
    /// <see cref="WrapPadded"/>, where RFC 5649 makes one semiblock a single AES block operation) with the initial value
    /// <paramref name="iv"/> (8 bytes) into <paramref name="destination"/> (<c>source.Length + 8</c> bytes). The buffers
    /// may overlap.
    /// </summary>
    /// <exception cref="CryptographicException">A native call failed (the destination is then cleared).</exception>
    public static void Wrap(BlockCipher ecbEncrypt, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(iv.Length == HalfBlock && source.Length >= HalfBlock && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length + HalfBlock);

        Span<byte> block = stackalloc byte[BlockSize];
        try
        {
            iv.CopyTo(block);
            Span<byte> data = destination.Slice(HalfBlock);
            source.CopyTo(data);
            if (data.Length == HalfBlock)
            {
                data.CopyTo(block.Slice(HalfBlock));
                Step(ecbEncrypt, block);
                block.CopyTo(destination);
            }
            else
            {
                WrapRounds(ecbEncrypt, block, data);
                block.Slice(0, HalfBlock).CopyTo(destination);
            }
        }
        catch
        {
            // A native failure part way through would leave plaintext in the caller's buffer.
            CryptographicOperations.ZeroMemory(destination);
            throw;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);
        }
    }

    /// <summary>
    /// RFC 3394 unwrap of <paramref name="source"/> (a multiple of 8 bytes, at least 24) into
    /// <paramref name="destination"/> (<c>source.Length - 8</c> bytes), checking the recovered integrity register against
    /// <paramref name="expectedIv"/> (8 bytes) in constant time. The buffers may overlap.
    /// </summary>
    /// <exception cref="CryptographicException">
    /// The integrity check failed, or a native call failed; <paramref name="destination"/> is then left all zero.
    /// </exception>
    public static void Unwrap(BlockCipher ecbDecrypt, ReadOnlySpan<byte> expectedIv, ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Debug.Assert(expectedIv.Length == HalfBlock && source.Length >= BlockSize + HalfBlock && source.Length % HalfBlock == 0);
        Debug.Assert(destination.Length == source.Length - HalfBlock);

        Span<byte> a = stackalloc byte[HalfBlock];
        try
        {
            UnwrapInto(ecbDecrypt, source, destination, a);
            if (!CryptographicOperations.FixedTimeEquals(a, expectedIv))
            {
                Errors.ThrowKeyWrapIntegrity();
            }
        }
        catch
        {
            CryptographicOperations.ZeroMemory(destination);
            throw;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(a);
        }
    }

    /// <summary>
    /// The inverse of <see cref="Wrap"/>, without its integrity check: the data blocks go to <paramref name="data"/>
    /// (<c>source.Length - 8</c> bytes) and the recovered integrity register to <paramref name="a"/> (8 bytes).
    /// </summary>
    private static void UnwrapInto(BlockCipher ecbDecrypt, ReadOnlySpan<byte> source, Span<byte> data, Span<byte> a)
    {
        Span<byte> block = stackalloc byte[BlockSize];
        try
        {
            if (source.Length == BlockSize)
            {
                // One semiblock (RFC 5649 only): a single AES decryption gives A || P.
                source.CopyTo(block);
                Step(ecbDecrypt, block);
                block.Slice(HalfBlock).CopyTo(data);
            }
            else
            {
                // Read A before the copy: with overlapping buffers the copy may overwrite it.
                source.Slice(0, HalfBlock).CopyTo(block);
                source.Slice(HalfBlock).CopyTo(data);
                UnwrapRounds(ecbDecrypt, block, data);
            }

            block.Slice(0, HalfBlock).CopyTo(a);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);
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

    /// <summary>The six RFC 3394 unwrap rounds, the inverse of <see cref="WrapRounds"/>.</summary>
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

    // One AES block operation in place; a native failure becomes the handle's exception (the callers then clear the
    // destination).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Step(BlockCipher ecb, Span<byte> block)
    {
        if (!ecb.TryTransform(default, block, block))
        {
            throw ecb.CreateFailure();
        }
    }
}
