using System;
using System.Diagnostics;
using System.Security.Cryptography;

namespace CachedCryptography.Interop;

/// <summary>
/// The bookkeeping every <see cref="IBlockCipher"/> implementation shares, written once: argument checks, the faulted
/// state (any exception from a native step makes the handle unusable, so the cache drops it), refusing use
/// after <see cref="Dispose"/> with a <see cref="CryptographicException"/>, and releasing exactly once.
/// Platform code supplies only the native steps.
/// </summary>
internal abstract class BlockCipherHandle : IBlockCipher
{
    protected const int BlockSize = 16;

    private bool _faulted;
    private bool _disposed;

    protected BlockCipherHandle(BlockCipherMode mode) => Mode = mode;

    protected BlockCipherMode Mode { get; }

    public bool IsFaulted => _faulted || _disposed;

    public void Reset(ReadOnlySpan<byte> iv)
    {
        ThrowIfUnusable();
        if (iv.Length != BlockSize)
        {
            _faulted = true;
            throw new CryptographicException("The IV must be 16 bytes.");
        }

        // ECB has no chaining state to restart (and CommonCrypto would even fail the call): nothing native runs.
        if (Mode == BlockCipherMode.Cbc)
        {
            try
            {
                ResetCore(iv);
            }
            catch
            {
                _faulted = true;
                throw;
            }
        }
    }

    public void Transform(ReadOnlySpan<byte> input, Span<byte> output)
    {
        ThrowIfUnusable();
        if (input.Length % BlockSize != 0 || output.Length < input.Length)
        {
            _faulted = true;
            throw new CryptographicException("The input is not a whole number of blocks or the output is too short.");
        }

        if (input.IsEmpty)
        {
            return;
        }

        // The seam's contract: exact in-place or no overlap, which is all the native APIs accept. MessageCipher
        // moves partially overlapping input into place before it calls here.
        output = output[..input.Length];
        Debug.Assert(!input.Overlaps(output, out int offset) || offset == 0);
        try
        {
            TransformCore(input, output);
        }
        catch
        {
            _faulted = true;
            throw;
        }
    }

    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            ReleaseCore();
        }
    }

    /// <summary>Starts a new CBC message at <paramref name="iv"/> (16 bytes). Throws on a native failure.</summary>
    protected abstract void ResetCore(ReadOnlySpan<byte> iv);

    /// <summary>Transforms whole blocks; <paramref name="output"/> has the input's length. Throws on a native failure.</summary>
    protected abstract void TransformCore(ReadOnlySpan<byte> input, Span<byte> output);

    /// <summary>Releases the native state (called once).</summary>
    protected abstract void ReleaseCore();

    private void ThrowIfUnusable()
    {
        if (_disposed)
        {
            throw new CryptographicException("The native AES handle has been released.");
        }

        if (_faulted)
        {
            throw new CryptographicException("The native AES handle is unusable after an earlier failure.");
        }
    }
}
