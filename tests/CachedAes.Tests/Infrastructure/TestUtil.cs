using System;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>Small helpers shared by the core tests.</summary>
internal static class TestUtil
{
    public const string IncompleteBlockMessage = "The input data is not a complete block.";
    public const string BadPaddingMessage = "Padding is invalid and cannot be removed.";
    public const string DestinationTooShortMessage = "Destination is too short.";

    /// <summary>Canary byte that pre-fills caller buffers.</summary>
    public const byte Canary = 0xC5;

    public static Aes Stock(byte[] key)
    {
        Aes aes = Aes.Create();
        aes.Key = key;
        return aes;
    }

    public static byte[] Filled(int length, byte value = Canary)
    {
        byte[] b = new byte[length];
        b.AsSpan().Fill(value);
        return b;
    }

    public static byte[] Random(Random rng, int length)
    {
        byte[] b = new byte[length];
        rng.NextBytes(b);
        return b;
    }

    /// <summary>
    /// Asserts that after a failure <paramref name="after"/> holds no new data: each byte is either what it was before the
    /// call (<paramref name="before"/>) or zero.
    /// </summary>
    public static void AssertNoNewData(ReadOnlySpan<byte> before, ReadOnlySpan<byte> after, string context)
    {
        Assert.Equal(before.Length, after.Length);
        for (int i = 0; i < after.Length; i++)
        {
            if (after[i] != before[i] && after[i] != 0)
            {
                Assert.Fail($"{context}: byte {i} of the caller's buffer is 0x{after[i]:x2} after a failure (was 0x{before[i]:x2}); " +
                    "only the old value or zero is allowed (no plaintext left behind).");
            }
        }
    }

    public static string Hex(ReadOnlySpan<byte> b) => Convert.ToHexString(b);

    /// <summary>Every value of <typeparamref name="T"/> with every AES key size in bits (128, 192, 256), as theory data.</summary>
    public static TheoryData<T, int> WithEveryKeySize<T>()
        where T : struct, Enum
    {
        var data = new TheoryData<T, int>();
        foreach (T value in Enum.GetValues<T>())
        {
            foreach (int bits in new[] { 128, 192, 256 })
            {
                data.Add(value, bits);
            }
        }

        return data;
    }

    /// <summary>Runs <paramref name="action"/> once to warm it, then returns what a second run allocates on this thread.</summary>
    public static long AllocatedWhenWarm(Action action)
    {
        action();
        long before = GC.GetAllocatedBytesForCurrentThread();
        action();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    /// <summary>
    /// Runs the collector, the finalizers and the sweep of dropped keys until <paramref name="done"/> holds, at most 20
    /// times: what objects dropped late in a run need before everything they held is given back (a few collections more
    /// than one). The sweep runs here at once, not only on the thread pool after each collection, so the test need not
    /// wait for a pool thread.
    /// </summary>
    public static void CollectUntil(Func<bool> done)
    {
        for (int i = 0; i < 20 && !done(); i++)
        {
            CollectDropped();
        }
    }

    /// <summary>
    /// A full collection, the finalizers it queued, a sweep of dropped keys (<see cref="CachedCryptography.Ownership.Reclaimer"/>),
    /// and a wait for give-backs a sweep on a pool thread is in the middle of, so that what the dropped keys held is all
    /// given back when this returns.
    /// </summary>
    public static void CollectDropped()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        CachedCryptography.Ownership.Reclaimer.SweepNow();
        CachedCryptography.Ownership.Reclaimer.WaitUntilGivenBack(TimeSpan.FromSeconds(30));
    }
}
