using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// The bound on cached keys (<c>src/CachedAes/Seam/CachedKeyBudget.cs</c>): about <see cref="CachedKeyBudget.Limit"/>
/// keys keep a backend's handles cached at once, and every call of a key past it runs on a handle given back after the
/// call, with the same output. Each test has a counted backend of its own, so its count is its own (the bound is the
/// backend's) and it runs beside other tests.
/// </summary>
public class CachedKeyBoundTests
{
    private const int Seed = 20261129;

    // Past the bound by more than one sum's slack, so that a missing bound shows.
    private const int Keys = CachedKeyBudget.Limit + 2_000;

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Past_the_bound_a_kept_instance_runs_each_call_on_a_handle_given_back_and_gets_stocks_bytes(string backendName)
    {
        CountingBackend backend = BackendData.IsolatedBackend(backendName);
        var rng = new Random(Seed);
        byte[] key = TestUtil.Random(rng, 32), block = TestUtil.Random(rng, 16), iv = TestUtil.Random(rng, 16);
        byte[] message = TestUtil.Random(rng, 40);
        using Aes stock = TestUtil.Stock(key);
        byte[] expectedEcb = stock.EncryptEcb(block, PaddingMode.None);
        byte[] expectedCbc = stock.EncryptCbc(message, iv);
        var kept = new List<CachedAes>(Keys);
        int wrong = 0;
        try
        {
            for (int i = 0; i < Keys; i++)
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv };
                kept.Add(aes);
                for (int call = 0; call < 3; call++)
                {
                    wrong += aes.EncryptEcb(block, PaddingMode.None).AsSpan().SequenceEqual(expectedEcb) ? 0 : 1;
                }

                if (i == 99)
                {
                    // Far below the bound: each key cached the handle of its second call, and its third reused it.
                    Assert.Equal(100, backend.LiveHandles);
                    Assert.Equal(200, backend.Creations);
                }
            }

            // About the bound's worth cached (a thread may pass it by less than one sum's worth); the other keys made a
            // handle for each call and gave it back.
            int cached = backend.LiveHandles;
            Assert.InRange(cached, CachedKeyBudget.Limit, CachedKeyBudget.Limit + CachedKeyBudget.SumEvery - 1);
            Assert.Equal(cached, backend.CachedKeys.Count);
            Assert.Equal((2 * cached) + (3 * (Keys - cached)), backend.Creations);

            // A transform of a key past the bound, and one-shots of CBC: right bytes, nothing more kept.
            CachedAes last = kept[^1];
            using (ICryptoTransform encryptor = last.CreateEncryptor())
            {
                wrong += encryptor.TransformFinalBlock(message, 0, message.Length).AsSpan().SequenceEqual(expectedCbc) ? 0 : 1;
            }

            wrong += last.EncryptCbc(message, iv).AsSpan().SequenceEqual(expectedCbc) ? 0 : 1;
            wrong += last.EncryptCbc(message, iv).AsSpan().SequenceEqual(expectedCbc) ? 0 : 1;
            Assert.Equal(cached, backend.LiveHandles);
            Assert.Equal(0, wrong);
        }
        finally
        {
            kept.ForEach(aes => aes.Dispose());
        }

        // Disposed, the keys leave the count, and within one sum's worth of questions a new key caches again.
        Assert.Equal(0, backend.LiveHandles);
        Assert.Equal(0, backend.CachedKeys.Count);
        var again = new List<CachedAes>();
        try
        {
            for (int i = 0; i < CachedKeyBudget.SumEvery && backend.LiveHandles == 0; i++)
            {
                var aes = new CachedAes(backend) { Key = key };
                again.Add(aes);
                aes.EncryptEcb(block, PaddingMode.None);
                aes.EncryptEcb(block, PaddingMode.None);
            }

            Assert.Equal(1, backend.LiveHandles);
        }
        finally
        {
            again.ForEach(aes => aes.Dispose());
        }
    }

    [Fact]
    public void Instances_dropped_after_two_calls_hold_at_most_about_the_bound_of_handles_until_a_sweep_gives_them_back()
    {
        // The shape that piled up native contexts: a new instance per message, two calls, never disposed. Without a
        // collection in between, each cached its second call's handle; now about the bound's worth do. A collection may
        // come during the loop, and its sweep then gives some back: the count only falls by that.
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        var rng = new Random(Seed + 1);
        byte[] key = TestUtil.Random(rng, 16), block = TestUtil.Random(rng, 16);
        using Aes stock = TestUtil.Stock(key);
        byte[] expected = stock.EncryptEcb(block, PaddingMode.None);

        int wrong = DropInstances(backend, key, block, expected);

        Assert.Equal(0, wrong);
        Assert.InRange(backend.LiveHandles, 0, CachedKeyBudget.Limit + CachedKeyBudget.SumEvery - 1);
        TestUtil.CollectDropped();
        Assert.Equal(0, backend.LiveHandles);
        Assert.Equal(0, backend.CachedKeys.Count);
    }

    // Kept out of line so that no instance stays reachable from the test's frame.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static int DropInstances(CountingBackend backend, byte[] key, byte[] block, byte[] expected)
    {
        int wrong = 0;
        for (int i = 0; i < Keys; i++)
        {
            var aes = new CachedAes(backend) { Key = key };
            wrong += aes.EncryptEcb(block, PaddingMode.None).AsSpan().SequenceEqual(expected) ? 0 : 1;
            wrong += aes.EncryptEcb(block, PaddingMode.None).AsSpan().SequenceEqual(expected) ? 0 : 1;
        }

        return wrong;
    }
}
