using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// A single interlocked flag that lets one caller at a time into an instance's cached native state.
/// It never waits: a second concurrent entry, or a re-entry from the thread that already holds it,
/// throws. Internal paths that run under the guard (key wrap, lazy key generation) therefore call
/// unguarded helpers instead of public members.
/// </summary>
internal struct ConcurrencyGuard
{
    // Same text the runtime uses for its own "one caller at a time" types.
    internal const string ConcurrentUseMessage =
        "Concurrent operations from multiple threads on this type are not supported.";

    private int _busy;

    /// <summary>Takes the guard or throws <see cref="CryptographicException"/>. Pair with <see cref="Exit"/> in a <c>finally</c>.</summary>
    public void Enter()
    {
        if (Interlocked.Exchange(ref _busy, 1) != 0)
        {
            throw new CryptographicException(ConcurrentUseMessage);
        }
    }

    /// <summary>Releases the guard taken by <see cref="Enter"/>.</summary>
    public void Exit() => Volatile.Write(ref _busy, 0);
}
