using System;
using System.Threading;

namespace CachedCryptography.Seam;

/// <summary>
/// A bound on how many keys keep one backend's handles cached at once: about <see cref="Limit"/>. Each
/// <see cref="CipherBackend"/> has one, so in a process that uses the platform's backend it bounds the whole process. A
/// key that would start caching handles (its second call) while the bound is reached does not: each of its calls takes
/// a handle and gives it back, as a key's first call does (<c>Ownership/KeyEpoch.Handles.cs</c>, "The first handle").
/// </summary>
/// <remarks>
/// <para><b>Why.</b> An instance never disposed keeps the handles it cached until a collection finds it unreachable and
/// the reclaimer gives them back. Its handle slots survive that collection (its key memory lists them for the
/// reclaimer), and the collector answers a high survival rate with a larger gen-0 budget, so the next collection comes
/// later and more dropped instances pile up, each holding native contexts the collector cannot see
/// (docs/design-notes.md, "A bound on cached keys").</para>
/// <para><b>What is counted.</b> Keys with handle slots: the key owner adds one when it attaches a key's slots to the
/// key's memory, and takes it away when that memory is recycled (the key was closed, or the reclaimer found it dropped).
/// Kept instances count too: with more than <see cref="Limit"/> keys in use at once, about that many cache handles and
/// the others run every call on a handle of its own.</para>
/// <para><b>Cost.</b> The count is a <see cref="LiveCount"/> (a cell per processor, each on cache lines of its own), so
/// threads that each make and close keys do not take one line from each other. It is touched only when a key makes its
/// slots and when its memory is recycled, never by a call that finds its cached handle. A thread sums the cells once
/// per <see cref="SumEvery"/> of its questions and answers from the last sum in between, so the bound is soft: each
/// thread may pass it by fewer than that many keys, and a key change that moves idle handles to a new key is not asked
/// at all.</para>
/// </remarks>
internal sealed class CachedKeyBudget
{
    /// <summary>About how many keys keep handles cached at once.</summary>
    internal const int Limit = 4096;

    /// <summary>How many of its questions a thread answers from the last sum before it sums the cells again.</summary>
    internal const int SumEvery = 64;

    // Questions this thread answers before its next sum (of whichever budget it asks then).
    [ThreadStatic]
    private static int t_untilSum;

    private readonly LiveCount _count = new();

    // 1 when the last sum reached the limit. Written only when it changes.
    private int _full;

    /// <summary>The keys with slots now (exact only while no other thread adds or takes away; a test seam).</summary>
    internal int Count => _count.Value;

    /// <summary>Whether a key may start caching handles now: asked by a key about to make its slots for a call.</summary>
    internal bool HasRoom()
    {
        if (--t_untilSum > 0)
        {
            return Volatile.Read(ref _full) == 0;
        }

        t_untilSum = SumEvery;
        int full = Count >= Limit ? 1 : 0;
        if (Volatile.Read(ref _full) != full)
        {
            Volatile.Write(ref _full, full);
        }

        return full == 0;
    }

    /// <summary>A key's slots were attached to its memory.</summary>
    internal void Added() => _count.Add(1);

    /// <summary>A memory with slots attached was recycled (on any thread: only the sum means anything).</summary>
    internal void Removed() => _count.Add(-1);
}
