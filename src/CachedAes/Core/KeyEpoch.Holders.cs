using System;
using System.Diagnostics;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// Holding an epoch: the instance holds its current epoch from the start, and a transform (<c>Core/Transforms/</c>)
/// becomes a holder of the instance's epoch when it is made, or makes an epoch of its own for another key. A held epoch
/// is never released, and its key is never rewritten once a transform holds it (the instance's next key change makes a
/// new epoch instead), so its key stays readable and its slots keep handles for it after the instance has moved to
/// another key or been disposed; the transform therefore does not depend on the instance afterwards, as stock's does not.
/// </summary>
internal sealed partial class KeyEpoch
{
    /// <summary>
    /// Makes the caller (a transform being made) a holder. Called under the instance's lifecycle lock on its current
    /// epoch, which the instance holds, so the epoch cannot be released meanwhile.
    /// </summary>
    public void AddHolder()
    {
        long state = Interlocked.Add(ref _state, OneTransform);
        Debug.Assert((state & InstanceHolds) != 0);
    }

    /// <summary>A transform lets go (once); the last holder releases the epoch. Never called from a finalizer.</summary>
    public void RemoveHolder()
    {
        // A full fence: the release is visible before the sweep reads a single slot (see KeyEpoch.Handles.cs).
        if (Interlocked.Add(ref _state, -OneTransform) == 0)
        {
            ReleaseAll(null, default);
        }
    }

    /// <summary>
    /// Whether this epoch's key is <paramref name="key"/>, compared in constant time (only the lengths are compared
    /// openly). Called under the instance's lifecycle lock, so the key is not rewritten meanwhile; false if the epoch
    /// is already released.
    /// </summary>
    public bool HasKey(ReadOnlySpan<byte> key)
    {
        if (!TryAddRef())
        {
            return false;
        }

        try
        {
            return key.Length == _length && CryptographicOperations.FixedTimeEquals(key, DangerousKey);
        }
        finally
        {
            DangerousRelease();
        }
    }

    /// <summary>
    /// For a holder: a handle from this epoch's slots, made with its key if none is free. Dispose the lease to give it back.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The caller let go of the epoch already: a transform used while another
    /// thread disposed it (what stock's disposed transform throws, <see cref="Errors.ThrowDisposedTransform"/>).</exception>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    public HandleLease RentHeld(BlockCipherMode mode, bool encrypting, CipherBackend backend)
    {
        if (!TryRent(mode, encrypting, backend, out HandleLease lease))
        {
            // Only a holder that has already let go can find its epoch released.
            Errors.ThrowDisposedTransform();
        }

        return lease;
    }
}
