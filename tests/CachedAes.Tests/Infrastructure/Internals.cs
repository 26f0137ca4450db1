using System.Runtime.CompilerServices;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// The one place tests look inside a <see cref="CachedAes"/>: its private fields, reached with
/// <see cref="UnsafeAccessorAttribute"/>, so the public type carries no test seams. A renamed field fails every test
/// that uses it, loudly (<see cref="System.MissingFieldException"/>).
/// </summary>
internal static class Internals
{
    extension(CachedAes aes)
    {
        /// <summary>The current key epoch (null before a key is set or needed, and after Dispose).</summary>
        public KeyEpoch? KeyEpoch => KeyField(aes).Epoch;

        /// <summary>The backend the instance makes its handles with.</summary>
        public CipherBackend CipherBackend => KeyField(aes).Backend;

        /// <summary>How many handles the instance's backend has made; the instance must be over a <see cref="CountingBackend"/>.</summary>
        public int HandleCreations => ((CountingBackend)KeyField(aes).Backend).Creations;

        /// <summary>The handle cached in the current epoch's inline slot for a mode and direction, or null.</summary>
        public BlockCipher? PeekCachedHandle(BlockCipherMode mode, bool encrypting) => KeyField(aes).Epoch?.PeekInline(mode, encrypting);

        /// <summary>How many handles for a mode and direction the current epoch keeps and no call is using.</summary>
        public int CachedCount(BlockCipherMode mode, bool encrypting) => KeyField(aes).Epoch?.CachedCount(mode, encrypting) ?? 0;
    }

    extension(KeyEpoch epoch)
    {
        /// <summary>The stock instance the epoch keeps for CFB and the stock transforms, or null when none is cached.</summary>
        public StockAes? CachedStock => StockField(epoch);

        /// <summary>
        /// True once the epoch's key memory has been released: the epoch has let go of it, and no reader holds it any more,
        /// which is exactly when the memory is zeroed and then recycled for another key or freed.
        /// </summary>
        public bool KeyMemoryReleased => epoch.KeyMemoryReleased;
    }

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_stock")]
    private static extern ref StockAes? StockField(KeyEpoch epoch);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_key")]
    private static extern ref InstanceKey KeyField(CachedAes aes);

}
