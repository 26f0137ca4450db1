using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography.Operations.Transforms;

/// <summary>
/// What <see cref="CachedAes.CreateEncryptor()"/> and <see cref="CachedAes.CreateDecryptor()"/> return for ECB and CBC:
/// an <see cref="ICryptoTransform"/> with stock's semantics over cached native handles.
/// </summary>
/// <remarks>
/// <para>Stock's transforms (dotnet/runtime's <c>UniversalCryptoTransform</c> and its encryptor and decryptor) are the
/// specification, followed case by case: the same argument checks in the same order with the same exception types and
/// parameter names, CBC chaining across <see cref="TransformBlock"/> calls, a return to the IV after
/// <see cref="TransformFinalBlock"/> so the transform can be reused, and <see cref="ObjectDisposedException"/> exactly
/// where stock's native cipher would be reached after <see cref="Dispose"/>.</para>
/// <para><b>Handles.</b> A transform is a holder of a key epoch (<c>Ownership/KeyEpoch.cs</c>), never of a native
/// handle between calls: each call leases a handle from the epoch's slots as a one-shot does and gives it back. The epoch
/// is the instance's (for the instance's key, including <c>CreateEncryptor(aes.Key, aes.IV)</c>) or the transform's own
/// (another key). A held epoch is never released, so after the instance has moved to another key or been disposed, the
/// transform still finds its key and handles there: it does not depend on the instance afterwards, as stock's does not.
/// <see cref="Dispose"/> lets go of the epoch. A transform that is dropped instead (CryptoStream does not dispose its
/// transform, and much code drops it) has no finalizer and needs none: it holds no native resource itself, and once
/// nothing references the epoch it held, the sweep after the collection that finds the epoch unreachable
/// (<c>Ownership/Reclaimer.cs</c>) zeroes its key and gives back the handles in its slots (docs/design-notes.md, "Native
/// ownership").</para>
/// <para>Like stock's, a transform is for one caller at a time; many transforms, on many threads, share the instance's
/// handles as its one-shots do.</para>
/// </remarks>
internal abstract class CachedTransform : ICryptoTransform
{
    /// <summary>The AES block size: the input and output block size of every transform here.</summary>
    protected const int BlockSize = BlockCipher.BlockSize;

    private readonly KeyEpoch _epoch;
    private readonly int _version;
    private readonly BlockCipherMode _mode;
    private readonly bool _encrypting;

    // CBC: the IV every message starts at, and the block the next one chains from (the last ciphertext block so far).
    private readonly Vector128<byte> _iv;
    private Vector128<byte> _chain;

    private int _disposed;

    /// <param name="epoch">
    /// The key: the instance's epoch, of which the caller has made this transform a holder, or an epoch made for this
    /// transform alone (held by it from the start). The transform lets go of it when disposed.
    /// </param>
    /// <param name="version">The version of the epoch's key the transform was made with: its calls use handles of that
    /// version only (a key rewritten after the transform let go is not its key).</param>
    /// <param name="mode">ECB or CBC.</param>
    /// <param name="encrypting">The direction.</param>
    /// <param name="iv">CBC: the IV (16 bytes); ignored for ECB.</param>
    /// <param name="padding">The padding mode.</param>
    protected CachedTransform(KeyEpoch epoch, int version, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> iv, PaddingMode padding)
    {
        _epoch = epoch;
        _version = version;
        _mode = mode;
        _encrypting = encrypting;
        Padding = padding;
        if (mode == BlockCipherMode.Cbc)
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

    /// <summary>True for ECB (no IV, no chaining).</summary>
    protected bool IsEcb => _mode == BlockCipherMode.Ecb;

    /// <summary>CBC: the IV the next block starts from (empty for ECB). Valid until the next transform on this object.</summary>
    protected ReadOnlySpan<byte> ChainIv =>
        _mode == BlockCipherMode.Cbc
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

    /// <summary>Lets go of the key epoch (the last holder releases its handles and key). Later calls throw as stock's do.</summary>
    public void Dispose()
    {
        OnDispose();
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _epoch.RemoveTransform();
        }
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
        using KeyEpoch.HandleLease lease = AcquireCipher();
        Transform(lease.Cipher, input, output);
    }

    /// <summary>The same on a handle the caller already holds for this call.</summary>
    protected void Transform(BlockCipher cipher, ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            TransformThroughCopy(cipher, input, output);
            return;
        }

        // CBC decryption chains from the last input block: read it before an in-place transform overwrites it.
        Vector128<byte> lastInput = Vector128.Create(input[^BlockSize..]);
        if (!cipher.TryTransform(ChainIv, input, output))
        {
            output.Clear();
            throw cipher.CreateFailure();
        }

        _chain = _encrypting ? Vector128.Create(output[^BlockSize..]) : lastInput;
    }

    /// <summary>Back to the IV: what stock's final transform does, so the transform starts the next message afresh.</summary>
    protected void Restart() => _chain = _iv;

    /// <summary>
    /// A handle for one call, from the epoch's slots; dispose it when the call is done (before that, a failed handle's
    /// exception must have been taken).
    /// </summary>
    /// <exception cref="ObjectDisposedException">The transform was disposed.</exception>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    protected KeyEpoch.HandleLease AcquireCipher()
    {
        ThrowIfDisposed();
        return _epoch.RentHeld(_mode, _encrypting, _version);
    }

    /// <summary>Where stock's disposed transform reaches its native cipher: what stock throws there (<see cref="Errors.ThrowDisposedTransform"/>).</summary>
    protected void ThrowIfDisposed()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            Errors.ThrowDisposedTransform();
        }
    }

    /// <summary>
    /// The same for stock's final step over <paramref name="bytes"/> bytes, which on Windows reaches the native cipher only
    /// when there is something to transform: a disposed stock transform there still finishes a message of no bytes.
    /// </summary>
    protected void ThrowIfDisposedAtFinal(int bytes)
    {
        if (bytes != 0 || !OperatingSystem.IsWindows())
        {
            ThrowIfDisposed();
        }
    }

    // The seam takes in-place or disjoint buffers only: a partially overlapping input is copied aside first.
    [SkipLocalsInit] // the copy is written before it is read
    private unsafe void TransformThroughCopy(BlockCipher cipher, ReadOnlySpan<byte> input, Span<byte> output)
    {
        const int StackLimit = 1024;
        byte* native = input.Length > StackLimit ? (byte*)NativeMemory.Alloc((nuint)input.Length) : null;
        Span<byte> copy = native is null ? stackalloc byte[StackLimit] : new Span<byte>(native, input.Length);
        copy = copy[..input.Length];
        try
        {
            input.CopyTo(copy);
            Transform(cipher, copy, output);
        }
        finally
        {
            // Plaintext when encrypting; zeroed either way.
            CryptographicOperations.ZeroMemory(copy);
            NativeMemory.Free(native);
        }
    }
}
