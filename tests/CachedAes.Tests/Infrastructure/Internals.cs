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
        public KeyEpoch? KeyEpoch => KeyField(aes);

        /// <summary>The backend the instance makes its handles with.</summary>
        public CipherBackend CipherBackend => BackendField(aes);

        /// <summary>How many handles the instance's backend has made; the instance must be over a <see cref="CountingBackend"/>.</summary>
        public int HandleCreations => ((CountingBackend)BackendField(aes)).Creations;

        /// <summary>The handle cached in the current epoch's inline slot for a mode and direction, or null.</summary>
        public BlockCipher? PeekCachedHandle(BlockCipherMode mode, bool encrypting) => KeyField(aes)?.PeekInline(mode, encrypting);

        /// <summary>How many handles for a mode and direction the current epoch keeps and no call is using.</summary>
        public int CachedCount(BlockCipherMode mode, bool encrypting) => KeyField(aes)?.CachedCount(mode, encrypting) ?? 0;
    }

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_key")]
    private static extern ref KeyEpoch? KeyField(CachedAes aes);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_backend")]
    private static extern ref CipherBackend BackendField(CachedAes aes);
}
