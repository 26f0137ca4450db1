using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// A native handle held by a transform for its whole life: a <see cref="HandleLease"/> that a class can keep (a lease is
/// a ref struct, which only a method's stack can hold). Either a handle leased from a key epoch, given back to its slot
/// when released, or a handle of the holder's own (made for a key that is not the instance's), released outright.
/// </summary>
internal readonly struct HeldHandle
{
    private readonly KeyEpoch? _epoch;
    private readonly int _slot;

    internal HeldHandle(KeyEpoch epoch, int slot, BlockCipher cipher)
    {
        _epoch = epoch;
        _slot = slot;
        Cipher = cipher;
    }

    private HeldHandle(BlockCipher cipher)
    {
        _slot = KeyEpoch.NoSlot;
        Cipher = cipher;
    }

    /// <summary>The handle.</summary>
    public BlockCipher Cipher { get; }

    /// <summary>A handle of the holder's own: released, not cached, when the holder releases it.</summary>
    public static HeldHandle Own(BlockCipher cipher) => new(cipher);

    /// <summary>Gives the handle back to its epoch (or releases a handle of the holder's own). Called once.</summary>
    public void Release()
    {
        if (_epoch is null)
        {
            Cipher.Release();
            return;
        }

        ref BlockCipher? slot = ref _epoch.SlotAt(_slot, Cipher.Mode, Cipher.Encrypting);
        _epoch.Return(ref slot, Cipher);
    }
}
