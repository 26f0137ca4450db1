using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>A native handle held by one caller; <see cref="Dispose"/> gives it back to its epoch. Use it with <c>using</c>.</summary>
internal readonly ref struct HandleLease
{
    private readonly KeyEpoch _epoch;
    private readonly ref BlockCipher? _slot;

    /// <param name="epoch">The epoch the handle belongs to.</param>
    /// <param name="slot">The slot the caller reserved, or a null reference for a handle of the caller's own.</param>
    /// <param name="cipher">The handle, keyed with the epoch's key.</param>
    internal HandleLease(KeyEpoch epoch, ref BlockCipher? slot, BlockCipher cipher)
    {
        _epoch = epoch;
        _slot = ref slot;
        Cipher = cipher;
    }

    /// <summary>The handle, keyed with the key of the epoch it came from as of the moment it was taken.</summary>
    public BlockCipher Cipher { get; }

    public void Dispose() => _epoch.Return(ref _slot, Cipher);
}
