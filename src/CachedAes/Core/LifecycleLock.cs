using System.Diagnostics;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// The lock an instance's rare lifecycle operations take (a key change, a key size change, <c>Dispose</c>, a first key
/// generated, a transform made), so that only one of them at a time decides what happens to the instance's key: which
/// epoch is current, whether it is rewritten in place, retired or released. Calls on cached handles never take it.
/// </summary>
/// <remarks>
/// A field of the instance (no allocation): one interlocked compare-exchange to enter, a release store to leave, and
/// spinning that backs off to yielding and sleeping when another thread holds it (<see cref="SpinWait"/>), which is
/// rare and short: the longest holder re-keys the instance's idle handles, one native call each. Not re-entrant: code
/// that holds it calls only methods that do not take it again. Its acquire and release order every memory access of
/// one holder before those of the next.
/// </remarks>
internal struct LifecycleLock
{
    private int _held;

    /// <summary>True while some thread holds the lock (for assertions).</summary>
    public readonly bool IsHeld => Volatile.Read(in _held) != 0;

    /// <summary>Waits until the lock is free and takes it.</summary>
    public void Enter()
    {
        if (Interlocked.CompareExchange(ref _held, 1, 0) != 0)
        {
            EnterContended();
        }
    }

    /// <summary>Lets the lock go; the caller holds it.</summary>
    public void Exit()
    {
        Debug.Assert(IsHeld);
        Volatile.Write(ref _held, 0);
    }

    private void EnterContended()
    {
        var spinner = default(SpinWait);
        do
        {
            spinner.SpinOnce();
        }
        while (Volatile.Read(ref _held) != 0 || Interlocked.CompareExchange(ref _held, 1, 0) != 0);
    }
}
