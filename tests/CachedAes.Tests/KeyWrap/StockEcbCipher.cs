using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests;

/// <summary>
/// A reference <see cref="BlockCipher"/> for ECB over a stock <see cref="Aes"/> instance: one stock
/// ECB transform (padding off) is made once and reused, like a cached handle. It also
/// enforces the seam's contract (whole blocks, same-length output, in place or no overlap, no IV), so a
/// key-wrap implementation that misuses the seam fails here.
/// </summary>
internal sealed class StockEcbCipher : BlockCipher, IDisposable
{
    private readonly ICryptoTransform _transform;
    private readonly byte[] _buffer = new byte[16];
    private bool _disposed;

    public StockEcbCipher(ReadOnlySpan<byte> key, bool encrypting)
    {
        Mode = BlockCipherMode.Ecb;
        Encrypting = encrypting;
        using Aes aes = Aes.Create();
        aes.SetKey(key);
        aes.Mode = CipherMode.ECB;
        aes.Padding = PaddingMode.None;
        _transform = encrypting ? aes.CreateEncryptor() : aes.CreateDecryptor();
    }

    /// <summary>Number of <see cref="TryTransform"/> calls so far.</summary>
    public int TransformCalls { get; private set; }

    /// <summary>Number of blocks transformed so far.</summary>
    public long Blocks { get; private set; }

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        SeamContract.Check(iv, input, output, BlockCipherMode.Ecb);
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
        return true;
    }

    public override CryptographicException CreateFailure() => throw new InvalidOperationException("This cipher never fails.");

    public void Dispose() => Release();

    public override void Release()
    {
        if (!_disposed)
        {
            _disposed = true;
            _transform.Dispose();
        }
    }
}

/// <summary>Checks of the <see cref="BlockCipher.TryTransform"/> contract shared by the test ciphers.</summary>
internal static class SeamContract
{
    public static void Check(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, ReadOnlySpan<byte> output, BlockCipherMode mode)
    {
        if (input.Length == 0 || input.Length % 16 != 0)
        {
            throw new InvalidOperationException($"TryTransform called with {input.Length} bytes, not whole blocks.");
        }

        if (output.Length != input.Length)
        {
            throw new InvalidOperationException("TryTransform called with an output of another length.");
        }

        if (iv.Length != (mode == BlockCipherMode.Cbc ? 16 : 0))
        {
            throw new InvalidOperationException($"TryTransform called with a {iv.Length}-byte IV in {mode}.");
        }

        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            throw new InvalidOperationException("TryTransform called with partially overlapping buffers.");
        }
    }
}
