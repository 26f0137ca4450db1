using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// What a holder of a reference on an epoch may do: a transform (<c>Core/Transforms/</c>) takes one when it is made, for
/// the instance's epoch, or makes an epoch of its own for another key, and keeps it until it is disposed or finalized.
/// Its reference keeps the key readable after the instance has retired the epoch, so the transform can still key a
/// handle of its own from it.
/// </summary>
internal sealed partial class KeyEpoch
{
    /// <summary>
    /// Whether this epoch's key is <paramref name="key"/>, compared in constant time (only the lengths are compared
    /// openly). The caller holds a reference (<see cref="TryAddRef"/>).
    /// </summary>
    public bool HasKey(ReadOnlySpan<byte> key) => key.Length == _length && CryptographicOperations.FixedTimeEquals(key, DangerousKey);

    /// <summary>
    /// Retires an epoch that no instance ever held, such as the one a transform made for a key of its own. Called once,
    /// by its owner.
    /// </summary>
    public void RetireOwned() => Retire();

    /// <summary>
    /// For a caller that holds a reference on this epoch (<see cref="TryAddRef"/>), such as a transform: a handle from this
    /// epoch's slots, as <see cref="Rent"/> gives one; false once the epoch is retired (the caller then makes a handle of
    /// its own with <see cref="CreateForHolder"/>).
    /// </summary>
    public bool TryRentForHolder(BlockCipherMode mode, bool encrypting, CipherBackend backend, out HandleLease lease)
    {
        if (IsRetired)
        {
            lease = default;
            return false;
        }

        return TryRent(mode, encrypting, backend, out lease);
    }

    /// <summary>
    /// A handle of the caller's own with this epoch's key, for a caller that holds a reference on this epoch (so the key
    /// is still readable after the epoch is retired). The caller releases it.
    /// </summary>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    public BlockCipher CreateForHolder(BlockCipherMode mode, bool encrypting, CipherBackend backend) =>
        backend.Create(mode, encrypting, DangerousKey);
}
