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
    // Four fields rather than an array: one allocation less for every new instance.
    private IBlockCipher? _ecbEncrypt;
    private IBlockCipher? _ecbDecrypt;
    private IBlockCipher? _cbcEncrypt;
    private IBlockCipher? _cbcDecrypt;

    public HandleCache(CipherBackend backend) => _backend = backend;

    public CipherBackend Backend => _backend;

    /// <summary>How many handles this cache has created (a test seam; never decreases).</summary>
    public int Creations { get; private set; }

    private ref IBlockCipher? Slot(BlockCipherMode mode, bool encrypting)
    {
        if (mode == BlockCipherMode.Ecb)
        {
            return ref encrypting ? ref _ecbEncrypt : ref _ecbDecrypt;
        }

        return ref encrypting ? ref _cbcEncrypt : ref _cbcDecrypt;
    }

    /// <summary>The cached handle for <paramref name="mode"/> and direction, created with <paramref name="key"/> if absent.</summary>
    public IBlockCipher Get(BlockCipherMode mode, bool encrypting, KeyBox key)
    {
        ref IBlockCipher? slot = ref Slot(mode, encrypting);
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

    public IBlockCipher? Peek(BlockCipherMode mode, bool encrypting) => Slot(mode, encrypting);

    /// <summary>Disposes and forgets every handle whose native state failed (see <see cref="IBlockCipher.IsFaulted"/>).</summary>
    public void DropFaulted()
    {
        DropIfFaulted(ref _ecbEncrypt);
        DropIfFaulted(ref _ecbDecrypt);
        DropIfFaulted(ref _cbcEncrypt);
        DropIfFaulted(ref _cbcDecrypt);
    }

    /// <summary>Disposes and forgets every handle (the key changed or the owner is disposed).</summary>
    public void Clear()
    {
        Drop(ref _ecbEncrypt);
        Drop(ref _ecbDecrypt);
        Drop(ref _cbcEncrypt);
        Drop(ref _cbcDecrypt);
    }

    private static void DropIfFaulted(ref IBlockCipher? slot)
    {
        if (slot is { IsFaulted: true })
        {
            Drop(ref slot);
        }
    }

    private static void Drop(ref IBlockCipher? slot)
    {
        IBlockCipher? handle = slot;
        slot = null;
        handle?.Dispose();
    }
}
