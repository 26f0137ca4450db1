using System.Runtime.CompilerServices;
using CachedCryptography.Core;
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
        public CipherBackend CipherBackend => BackendField(aes);

        /// <summary>How many handles the instance's backend has made; the instance must be over a <see cref="CountingBackend"/>.</summary>
        public int HandleCreations => ((CountingBackend)BackendField(aes)).Creations;

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
        /// True once the epoch's key memory has been released: the epoch is closed, nothing holds a reference to it any
        /// more, and it owns its memory, which is exactly when <see cref="System.Runtime.InteropServices.SafeHandle"/> has
        /// run <c>ReleaseHandle</c> (zeroed and freed the key). Read from the runtime's private state of the handle: its
        /// low two bits are the closed and disposed flags, the rest the reference count.
        /// </summary>
        public bool KeyMemoryReleased => epoch.IsClosed && (SafeHandleState(epoch) >> 2) == 0 && SafeHandleOwnsHandle(epoch);
    }

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_stock")]
    private static extern ref StockAes? StockField(KeyEpoch epoch);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_state")]
    private static extern ref int SafeHandleState(System.Runtime.InteropServices.SafeHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_ownsHandle")]
    private static extern ref bool SafeHandleOwnsHandle(System.Runtime.InteropServices.SafeHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_key")]
    private static extern ref InstanceKey KeyField(CachedAes aes);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_backend")]
    private static extern ref CipherBackend BackendField(CachedAes aes);
}
