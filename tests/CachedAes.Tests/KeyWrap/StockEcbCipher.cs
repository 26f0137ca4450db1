using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;

namespace CachedCryptography.Tests;

/// <summary>
/// A reference <see cref="IBlockCipher"/> for ECB over a stock <see cref="Aes"/> instance: one stock
/// ECB transform (padding off) is made once and reused, like a cached handle. It also
/// enforces the seam's contract (whole blocks, output long enough, in place or no overlap), so a
/// key-wrap implementation that misuses the seam fails here.
/// </summary>
internal sealed class StockEcbCipher : IBlockCipher
{
    private readonly ICryptoTransform _transform;
    private readonly byte[] _buffer = new byte[16];
    private bool _disposed;

    public StockEcbCipher(ReadOnlySpan<byte> key, bool encrypting)
    {
        using Aes aes = Aes.Create();
        aes.SetKey(key);
        aes.Mode = CipherMode.ECB;
        aes.Padding = PaddingMode.None;
        _transform = encrypting ? aes.CreateEncryptor() : aes.CreateDecryptor();
    }

    /// <summary>Number of <see cref="Transform"/> calls so far.</summary>
    public int TransformCalls { get; private set; }

    /// <summary>Number of blocks transformed so far.</summary>
    public long Blocks { get; private set; }

    public bool IsFaulted => _disposed;

    public void Transform(ReadOnlySpan<byte> input, Span<byte> output)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        SeamContract.Check(input, output);
        TransformCalls++;
        Blocks += input.Length / 16;

        // Block by block through one reused array, so in-place calls work and nothing is allocated.
        for (int offset = 0; offset < input.Length; offset += 16)
        {
            input.Slice(offset, 16).CopyTo(_buffer);

            if (_transform.TransformBlock(_buffer, 0, 16, _buffer, 0) != 16)
            {
                throw new InvalidOperationException("Stock ECB transformed an unexpected length.");
            }

            _buffer.CopyTo(output.Slice(offset, 16));
        }

        CryptographicOperations.ZeroMemory(_buffer);
    }

    public void Reset(ReadOnlySpan<byte> iv) => throw new InvalidOperationException("Reset is never called on an ECB handle.");

    public void Dispose()
    {
        _disposed = true;
        _transform.Dispose();
    }
}

/// <summary>Checks of the <see cref="IBlockCipher.Transform"/> contract shared by the test ciphers.</summary>
internal static class SeamContract
{
    public static void Check(ReadOnlySpan<byte> input, ReadOnlySpan<byte> output)
    {
        if (input.Length == 0 || input.Length % 16 != 0)
        {
            throw new InvalidOperationException($"Transform called with {input.Length} bytes, not whole blocks.");
        }

        if (output.Length < input.Length)
        {
            throw new InvalidOperationException("Transform called with a short output.");
        }

        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            throw new InvalidOperationException("Transform called with partially overlapping buffers.");
        }
    }
}
