using System;
using System.Diagnostics;
using CachedCryptography.Interop;

namespace CachedCryptography.Core;

/// <summary>
/// The native handles of one <see cref="CachedAes"/>: at most one per mode (ECB, CBC) and direction,
/// created on first use with the current key and kept until <see cref="Clear"/>. Every member runs
/// under the owner's concurrency guard, which is also what makes "a handle made under an old key is
/// never used again" hold: key changes clear the cache under the same guard.
/// </summary>
internal sealed class HandleCache
{
    private readonly CipherBackend _backend;
    private readonly IBlockCipher?[] _slots = new IBlockCipher?[4];

    public HandleCache(CipherBackend backend) => _backend = backend;

    public CipherBackend Backend => _backend;

    /// <summary>How many handles this cache has created (a test seam; never decreases).</summary>
    public int Creations { get; private set; }

    private static int Slot(BlockCipherMode mode, bool encrypting) => ((int)mode << 1) | (encrypting ? 1 : 0);

    /// <summary>The cached handle for <paramref name="mode"/> and direction, created with <paramref name="key"/> if absent.</summary>
    public IBlockCipher Get(BlockCipherMode mode, bool encrypting, KeyBox key)
    {
        ref IBlockCipher? slot = ref _slots[Slot(mode, encrypting)];
        return slot ?? Create(ref slot, mode, encrypting, key);
    }

    private IBlockCipher Create(ref IBlockCipher? slot, BlockCipherMode mode, bool encrypting, KeyBox key)
    {
        Debug.Assert(slot is null);
        // The box is owned by the caller under the guard; the span does not outlive this call.
        IBlockCipher created = _backend.Create(mode, encrypting, key.DangerousSpan);
        Creations++;
        slot = created;
        return created;
    }

    public IBlockCipher? Peek(BlockCipherMode mode, bool encrypting) => _slots[Slot(mode, encrypting)];

    /// <summary>Disposes and forgets every handle whose native state failed (see <see cref="IBlockCipher.IsFaulted"/>).</summary>
    public void DropFaulted()
    {
        for (int i = 0; i < _slots.Length; i++)
        {
            if (_slots[i] is { IsFaulted: true } faulted)
            {
                _slots[i] = null;
                faulted.Dispose();
            }
        }
    }

    /// <summary>Disposes and forgets every handle (the key changed or the owner is disposed).</summary>
    public void Clear()
    {
        for (int i = 0; i < _slots.Length; i++)
        {
            IBlockCipher? handle = _slots[i];
            _slots[i] = null;
            handle?.Dispose();
        }
    }
}
