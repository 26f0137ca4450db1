using System;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// Which thread runs finalizers, learnt from a finalizer of this class's own, so that code that pools finalizable objects
/// can refuse to pool on it (see <see cref="KeyMemory"/>).
/// </summary>
/// <remarks>
/// A user's finalizer may dispose an instance that dies in the same collection (the instance was only reachable from
/// the user's object). Everything that instance held is then queued for finalization too, and putting any of it in a pool
/// would bring it back to life without taking it off the queue: its own finalizer would still run and free what the
/// pool hands out next (docs/design-notes.md, "Native ownership"). Such a release always runs on the finalizer thread,
/// the one thread that runs finalizers (in CoreCLR and in native AOT alike). The probe is an object with a finalizer,
/// made once and dropped at once; the first collection after that finalizes it, on that thread, and it records the
/// thread. Until then the thread is unknown, and <see cref="MayBeCurrent"/> is true everywhere.
/// </remarks>
internal static class FinalizerThread
{
    private static int s_id;

    /// <summary>Starts the probe (once per process; later calls do nothing).</summary>
    public static void Probe()
    {
        if (Volatile.Read(ref s_id) == 0)
        {
            _ = new ThreadProbe();
        }
    }

    /// <summary>
    /// False only when the current thread is known not to be the finalizer thread: the probe has run, on another thread.
    /// </summary>
    public static bool MayBeCurrent
    {
        get
        {
            int id = Volatile.Read(ref s_id);
            return id == 0 || id == Environment.CurrentManagedThreadId;
        }
    }

    private sealed class ThreadProbe
    {
        ~ThreadProbe() => Interlocked.CompareExchange(ref s_id, Environment.CurrentManagedThreadId, 0);
    }
}
