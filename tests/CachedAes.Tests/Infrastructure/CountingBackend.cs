using System;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// Wraps a backend and counts the handles it makes and the ones not yet released, so that tests can check that
/// handles are cached, bounded and never leaked. (Production backends carry no counters; every handle the wrapper hands
/// out forwards to the inner backend's handle, which <see cref="Inner"/> on a handle reaches.)
/// </summary>
internal sealed class CountingBackend(CipherBackend inner) : CipherBackend
{
    private int _creations;
    private int _live;
    private int _droppedReleases;
    private int _doubleReleases;

    /// <summary>The wrapped backend.</summary>
    public CipherBackend InnerBackend => inner;

    /// <summary>How many handles <see cref="CipherBackend.Create"/> has made (never decreases).</summary>
    public int Creations => Volatile.Read(ref _creations);

    /// <summary>Handles made and not yet released (by their holder, or by the sweep of a dropped key epoch).</summary>
    public int LiveHandles => Volatile.Read(ref _live);

    /// <summary>Handles given back by the sweep of dropped keys (an instance or transform dropped without Dispose).</summary>
    public int DroppedReleases => Volatile.Read(ref _droppedReleases);

    /// <summary>Handles given up twice, once of the two times by the sweep of dropped keys (which must not throw). Must stay zero.</summary>
    public int DoubleReleases => Volatile.Read(ref _doubleReleases);

    public override CachedAesBackend Kind => inner.Kind;

    public override string Description => inner.Description;

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        var counted = new Counted(this, inner.Create(mode, encrypting, key));
        Interlocked.Increment(ref _creations);
        Interlocked.Increment(ref _live);
        return counted;
    }

    /// <summary>The handle under a counted one (or the handle itself when it is not counted).</summary>
    public static BlockCipher Inner(BlockCipher cipher) => cipher is Counted counted ? counted.Wrapped : cipher;

    private sealed class Counted(CountingBackend owner, BlockCipher wrapped) : ForwardingCipher(wrapped)
    {
        private int _released;

        public override void Release()
        {
            // Released once: a second release is an ownership bug the counts must show, not hide. On the sweep of dropped
            // keys (a pool thread) it is counted, never thrown: an exception there would end the process.
            bool dropped = Reclaimer.OnReclaimingThread;
            if (Interlocked.Exchange(ref _released, 1) != 0)
            {
                if (dropped)
                {
                    Interlocked.Increment(ref owner._doubleReleases);
                    return;
                }

                throw new InvalidOperationException("A handle was released twice.");
            }

            Interlocked.Decrement(ref owner._live);
            if (dropped)
            {
                Interlocked.Increment(ref owner._droppedReleases);
            }

            base.Release();
        }
    }
}
