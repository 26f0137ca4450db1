using System;
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
    /// Makes the caller (a transform) a holder; false if the epoch was already released (the caller then reads the
    /// instance's new one). Waits out a key rewrite in progress, so a holder never sees the key change under it.
    /// </summary>
    public bool TryAddHolder()
    {
        var spinner = default(SpinWait);
        long state = Volatile.Read(ref _state);
        while ((state & ~Writing) != 0)
        {
            if ((state & Writing) != 0)
            {
                spinner.SpinOnce();
                state = Volatile.Read(ref _state);
                continue;
            }

            long seen = Interlocked.CompareExchange(ref _state, state + OneTransform, state);
            if (seen == state)
            {
                return true;
            }

            state = seen;
        }

        return false;
    }

    /// <summary>A transform lets go (once); the last holder releases the epoch. Never called from a finalizer.</summary>
    public void RemoveHolder()
    {
        // A full fence: the release is visible before the sweep reads a single slot (see KeyEpoch.Handles.cs).
        if ((Interlocked.Add(ref _state, -OneTransform) & ~Writing) == 0)
        {
            ReleaseAll(null, default);
        }
    }

    /// <summary>
    /// Whether this epoch's key is <paramref name="key"/>, compared in constant time (only the lengths are compared
    /// openly). The caller is a transform holding the epoch (so the key cannot be rewritten under it).
    /// </summary>
    public bool HasKey(ReadOnlySpan<byte> key) => key.Length == _length && CryptographicOperations.FixedTimeEquals(key, DangerousKey);

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
