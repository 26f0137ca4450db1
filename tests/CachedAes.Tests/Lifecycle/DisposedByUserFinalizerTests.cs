using System;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// A user's object whose finalizer disposes the instance (and a transform) it holds, all of them dropped together: the
/// instance and its key epoch are then reachable only from an object queued for finalization, and the release that the
/// user's finalizer causes runs on the finalizer thread, recycling the key memory into that thread's cache, while the
/// sweep of dropped keys must not close that memory first (its weak handle tracks resurrection, so it still refers to
/// the epoch until the user's finalizer has run). After many such collections, new instances on every thread, the
/// test's and the finalizer's alike, must still give stock's bytes, and every handle must be given back exactly once.
/// </summary>
public class DisposedByUserFinalizerTests
{
    private static int s_wrong;

    [Theory]
    [InlineData("PlatformDefault")]
    [InlineData("SimulatedCommonCrypto")]
    public void Instances_disposed_by_a_users_finalizer_leave_nothing_half_freed_behind(string backend)
    {
        CountingBackend counted = BackendData.IsolatedBackend(backend);
        var rng = new Random(41);
        byte[] iv = TestUtil.Random(rng, 16), message = TestUtil.Random(rng, 48);
        for (int round = 0; round < 40; round++)
        {
            DropOwners(counted, rng, 50);
            GC.Collect();
            GC.WaitForPendingFinalizers();

            // New keys now take whatever memory the releases above left in a cache.
            for (int i = 0; i < 20; i++)
            {
                byte[] key = TestUtil.Random(rng, 16 + (8 * (i % 3)));
                using Aes stock = TestUtil.Stock(key);
                using var aes = new CachedAes(counted) { Key = key };
                Assert.Equal(stock.EncryptCbc(message, iv, PaddingMode.None), aes.EncryptCbc(message, iv, PaddingMode.None));
                Assert.Equal(key, aes.Key);
            }
        }

        TestUtil.CollectUntil(() => counted.LiveHandles == 0);
        Assert.Equal(0, s_wrong);
        Assert.Equal(0, counted.DoubleReleases);
        Assert.Equal(0, counted.LiveHandles);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropOwners(CountingBackend backend, Random rng, int count)
    {
        for (int i = 0; i < count; i++)
        {
            var aes = new CachedAes(backend) { Key = TestUtil.Random(rng, 32) };
            _ = aes.EncryptEcb(new byte[16], PaddingMode.None);
            _ = new Owner(aes, aes.CreateEncryptor(), backend);
        }
    }

    // Disposes what it holds from its finalizer (a pattern some code has), on the finalizer thread, then uses a new
    // instance there, which takes whatever key memory that thread would have cached.
    private sealed class Owner(CachedAes aes, ICryptoTransform transform, CountingBackend backend)
    {
        private static readonly byte[] s_key = [.. new byte[32].Select((_, i) => (byte)(i * 7))];
        private static readonly byte[] s_expected = ExpectedEcb();

        ~Owner()
        {
            transform.Dispose();
            aes.Dispose();
            using var fresh = new CachedAes(backend) { Key = s_key };
            if (!fresh.EncryptEcb(new byte[16], PaddingMode.None).AsSpan().SequenceEqual(s_expected))
            {
                System.Threading.Interlocked.Increment(ref s_wrong);
            }
        }

        private static byte[] ExpectedEcb()
        {
            using Aes stock = TestUtil.Stock(s_key);
            return stock.EncryptEcb(new byte[16], PaddingMode.None);
        }
    }
}
