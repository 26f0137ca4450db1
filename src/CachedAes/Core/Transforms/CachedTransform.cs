using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Core.Transforms;

/// <summary>
/// What <see cref="CachedAes.CreateEncryptor()"/> and <see cref="CachedAes.CreateDecryptor()"/> return for ECB and CBC:
/// an <see cref="ICryptoTransform"/> with stock's semantics over a native handle it holds for its whole life.
/// </summary>
/// <remarks>
/// <para>Stock's transforms (dotnet/runtime's <c>UniversalCryptoTransform</c> and its encryptor and decryptor) are the
/// specification, followed case by case: the same argument checks in the same order with the same exception types and
/// parameter names, CBC chaining across <see cref="TransformBlock"/> calls, a return to the IV after
/// <see cref="TransformFinalBlock"/> so the transform can be reused, and <see cref="ObjectDisposedException"/> exactly
/// where stock's native cipher would be reached after <see cref="Dispose"/>.</para>
/// <para>The handle is keyed once, when the transform is made; the transform keeps only the IV and the CBC chaining block
/// (ciphertext), never a copy of the key, and it does not depend on the instance afterwards. Like stock's, a transform is
/// for one caller at a time; many transforms, on many threads, each hold a handle of their own.</para>
/// </remarks>
internal abstract class CachedTransform : ICryptoTransform
{
    /// <summary>The AES block size: the input and output block size of every transform here.</summary>
    protected const int BlockSize = BlockCipher.BlockSize;

    private readonly HeldHandle _handle;

    // CBC: the IV every message starts at, and the block the next one chains from (the last ciphertext block so far).
    private readonly Vector128<byte> _iv;
    private Vector128<byte> _chain;
    private bool _disposed;

    protected CachedTransform(HeldHandle handle, ReadOnlySpan<byte> iv, PaddingMode padding)
    {
        _handle = handle;
        Padding = padding;
        if (handle.Cipher.Mode == BlockCipherMode.Cbc)
        {
            _iv = Vector128.Create(iv);
            _chain = _iv;
        }
    }

    /// <inheritdoc />
    public bool CanReuseTransform => true;

    /// <inheritdoc />
    public bool CanTransformMultipleBlocks => true;

    /// <inheritdoc />
    public int InputBlockSize => BlockSize;

    /// <inheritdoc />
    public int OutputBlockSize => BlockSize;

    /// <summary>The padding mode captured when the transform was made.</summary>
    protected PaddingMode Padding { get; }

    /// <summary>The handle; faulted after a native failure.</summary>
    protected BlockCipher Cipher => _handle.Cipher;

    /// <summary>CBC: the IV the next block starts from (empty for ECB). Valid until the next transform on this object.</summary>
    protected ReadOnlySpan<byte> ChainIv =>
        Cipher.Mode == BlockCipherMode.Cbc
            ? MemoryMarshal.CreateReadOnlySpan(ref Unsafe.As<Vector128<byte>, byte>(ref _chain), BlockSize)
            : default;

    /// <inheritdoc />
    public int TransformBlock(byte[] inputBuffer, int inputOffset, int inputCount, byte[] outputBuffer, int outputOffset)
    {
        // Stock's checks, in stock's order (.NET 10's UniversalCryptoTransform.TransformBlock).
        ArgumentNullException.ThrowIfNull(inputBuffer);
        ArgumentOutOfRangeException.ThrowIfNegative(inputOffset);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(inputOffset, inputBuffer.Length);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(inputCount);
        if (inputCount % BlockSize != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(inputCount), Errors.MustTransformWholeBlock);
        }

        if (inputCount > inputBuffer.Length - inputOffset)
        {
            throw new ArgumentOutOfRangeException(nameof(inputCount), Errors.InvalidOffsetLength);
        }

        ArgumentNullException.ThrowIfNull(outputBuffer);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(outputOffset, outputBuffer.Length);
        if (inputCount > outputBuffer.Length - outputOffset)
        {
            throw new ArgumentOutOfRangeException(nameof(outputOffset), Errors.InvalidOffsetLength);
        }

        // A negative output offset is not checked above: slicing rejects it, as stock's does.
        return TransformBlockCore(inputBuffer.AsSpan(inputOffset, inputCount), outputBuffer.AsSpan(outputOffset));
    }

    /// <inheritdoc />
    public byte[] TransformFinalBlock(byte[] inputBuffer, int inputOffset, int inputCount)
    {
        ArgumentNullException.ThrowIfNull(inputBuffer);
        ArgumentOutOfRangeException.ThrowIfNegative(inputOffset);
        ArgumentOutOfRangeException.ThrowIfNegative(inputCount);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(inputOffset, inputBuffer.Length);
        if (inputCount > inputBuffer.Length - inputOffset)
        {
            throw new ArgumentOutOfRangeException(nameof(inputCount), Errors.InvalidOffsetLength);
        }

        return TransformFinalBlockCore(inputBuffer.AsSpan(inputOffset, inputCount));
    }

    /// <summary>Gives the handle back (to the instance's cache, or releases it). Later calls throw as stock's do.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            OnDispose();
            _handle.Release();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Whole blocks (validated); returns the bytes written to <paramref name="output"/>.</summary>
    protected abstract int TransformBlockCore(ReadOnlySpan<byte> input, Span<byte> output);

    /// <summary>Any length (validated for range only).</summary>
    protected abstract byte[] TransformFinalBlockCore(ReadOnlySpan<byte> input);

    /// <summary>Clears per-message state when the transform is disposed.</summary>
    protected virtual void OnDispose()
    {
    }

    /// <summary>
    /// Transforms whole blocks where stock's transform calls its native cipher, continuing the CBC chain; the input and
    /// output may be the same memory, overlap partially, or be disjoint.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The transform was disposed.</exception>
    /// <exception cref="CryptographicException">A native call failed (the output is then cleared).</exception>
    protected void Transform(ReadOnlySpan<byte> input, Span<byte> output)
    {
        ThrowIfUnusable();
        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            TransformThroughCopy(input, output);
            return;
        }

        // CBC decryption chains from the last input block: read it before an in-place transform overwrites it.
        Vector128<byte> lastInput = Vector128.Create(input[^BlockSize..]);
        if (!Cipher.TryTransform(ChainIv, input, output))
        {
            output.Clear();
            throw Cipher.CreateFailure();
        }

        _chain = Cipher.Encrypting ? Vector128.Create(output[^BlockSize..]) : lastInput;
    }

    /// <summary>Back to the IV: what stock's final transform does, so the transform starts the next message afresh.</summary>
    protected void Restart() => _chain = _iv;

    /// <exception cref="ObjectDisposedException">The transform was disposed.</exception>
    /// <exception cref="CryptographicException">An earlier native failure left the handle unusable.</exception>
    protected void ThrowIfUnusable()
    {
        if (_disposed)
        {
            Errors.ThrowDisposedTransform();
        }

        if (Cipher.IsFaulted)
        {
            throw new CryptographicException(Errors.TransformFaulted);
        }
    }

    // The seam takes in-place or disjoint buffers only: a partially overlapping input is copied aside first.
    [SkipLocalsInit] // the copy is written before it is read
    private unsafe void TransformThroughCopy(ReadOnlySpan<byte> input, Span<byte> output)
    {
        const int StackLimit = 1024;
        byte* native = input.Length > StackLimit ? (byte*)NativeMemory.Alloc((nuint)input.Length) : null;
        Span<byte> copy = native is null ? stackalloc byte[StackLimit] : new Span<byte>(native, input.Length);
        copy = copy[..input.Length];
        try
        {
            input.CopyTo(copy);
            Transform(copy, output);
        }
        finally
        {
            // Plaintext when encrypting; zeroed either way.
            CryptographicOperations.ZeroMemory(copy);
            NativeMemory.Free(native);
        }
    }
}
