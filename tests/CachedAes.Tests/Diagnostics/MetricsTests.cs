using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests;

/// <summary>
/// The <c>CachedAes</c> meter (<see cref="CachedAesMetrics"/>), observed with a <see cref="MeterListener"/>: each counter
/// moves exactly when its event happens, and a steady one-shot records nothing. The meter is process-wide, so these tests
/// run alone (a collection that is not run in parallel with any other).
/// </summary>
[Collection(nameof(MetricsRunAlone))]
public sealed class MetricsTests : IDisposable
{
    private static readonly byte[] s_iv = new byte[16];
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _counts = new();
    private readonly List<(int Value, Dictionary<string, object?> Tags)> _backend = [];

    public MetricsTests()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == CachedAesMetrics.MeterName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        // A counter reports each increment; an observable counter reports its running total, which replaces the last one.
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) => _counts.AddOrUpdate(
            instrument.Name, value, (_, sum) => instrument.IsObservable ? value : sum + value));
        _listener.SetMeasurementEventCallback<int>((instrument, value, tags, _) =>
            _backend.Add((value, tags.ToArray().ToDictionary(t => t.Key, t => t.Value))));
        _listener.Start();
    }

    public void Dispose() => _listener.Dispose();

    [OpenSslFact]
    [SupportedOSPlatform("linux")]
    public void Handles_made_rekeyed_and_given_back_and_pool_hits_and_misses_are_counted_once_each()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? backend, out string? reason), reason);
        byte[] plaintext = RandomNumberGenerator.GetBytes(32);

        // A key's first handle is made (a pool miss) and given back after its call (cleansed, into the pool:
        // KeyEpoch.Handles.cs, _cachesHandles); the second call's is made from that pooled context (a hit) and cached.
        var first = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(32) };
        first.EncryptEcb(plaintext, PaddingMode.None);
        AssertCounts(created: 1, released: 1, poolMisses: 1);
        first.EncryptEcb(plaintext, PaddingMode.None);
        AssertCounts(created: 2, released: 1, poolHits: 1, poolMisses: 1);

        // A key change re-keys the handle in place; Dispose gives it back (cleansed, into the pool).
        first.Key = RandomNumberGenerator.GetBytes(32);
        first.EncryptEcb(plaintext, PaddingMode.None);
        AssertCounts(created: 2, rekeyed: 1, released: 1, poolHits: 1, poolMisses: 1);
        first.Dispose();
        AssertCounts(created: 2, rekeyed: 1, released: 2, poolHits: 1, poolMisses: 1);

        // The next instance takes that context from the pool: for its key's first handle (given back after the call),
        // then again for its second (cached).
        using var second = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
        second.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        AssertCounts(created: 3, rekeyed: 1, released: 3, poolHits: 2, poolMisses: 1);
        second.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        AssertCounts(created: 4, rekeyed: 1, released: 3, poolHits: 3, poolMisses: 1);

        // A steady call finds its cached handle: nothing is recorded, whatever the number of calls.
        for (int i = 0; i < 1000; i++)
        {
            second.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        }

        AssertCounts(created: 4, rekeyed: 1, released: 3, poolHits: 3, poolMisses: 1);
    }

    [Fact]
    public void The_backend_gauge_reports_the_process_backend_and_paths()
    {
        // The meter's instruments exist from the first counted event on (here: the handle this call makes).
        using (var aes = new CachedAes())
        {
            aes.EncryptEcb(new byte[16], PaddingMode.None);
        }

        _listener.RecordObservableInstruments();
        (int value, Dictionary<string, object?> tags) = Assert.Single(_backend);
        Assert.Equal(1, value);
        Assert.Equal(CachedAesDiagnostics.Backend.ToString(), tags["backend"]);
        Assert.Equal(CachedAesDiagnostics.Ecb.ToString(), tags["ecb"]);
        Assert.Equal(CachedAesDiagnostics.Cbc.ToString(), tags["cbc"]);
    }

    [Fact]
    public void Handles_given_back_for_a_dropped_instance_are_counted_by_the_observable_counter()
    {
        const int Instances = 8;
        var counted = new CountingBackend(StockBackend.Instance);
        _listener.RecordObservableInstruments();
        long before = Count("cachedaes.handles.finalized");

        // Each instance caches two handles (ECB encryption, CBC decryption) and is dropped without Dispose. Its key's
        // first handle (a first ECB encryption's) was given back when its call returned (KeyEpoch.Handles.cs,
        // _cachesHandles): one handle made and released per instance besides the two cached.
        DropInstancesWithCachedHandles(counted, Instances);
        TestUtil.CollectDropped();

        // Every handle the dropped instances held was given back by the sweep of dropped keys, none by a holder
        // (only the first handles, by their calls), and the observable counter, read on this thread, saw at least those
        // (other tests' dropped instances may add).
        Assert.Equal(3 * Instances, counted.Creations);
        Assert.Equal(2 * Instances, counted.DroppedReleases);
        Assert.Equal(0, counted.LiveHandles);
        Assert.Equal(Instances, Count("cachedaes.handles.released"));
        _listener.RecordObservableInstruments();
        Assert.True(
            Count("cachedaes.handles.finalized") - before >= 2 * Instances,
            $"cachedaes.handles.finalized rose from {before} to {Count("cachedaes.handles.finalized")}");
    }

    [Fact]
    public void A_call_that_finds_every_shared_slot_reserved_is_counted_as_contended_once()
    {
        byte[] plaintext = RandomNumberGenerator.GetBytes(32);
        using var gated = new GatedBackend(new FaultInjectingBackend(StockBackend.Instance));
        var cached = new CachedAes(gated) { Key = RandomNumberGenerator.GetBytes(32) };

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): the counts below
        // include that one handle, made and released, besides those of the held calls and the contended one.
        byte[] expected = cached.EncryptEcb(plaintext, PaddingMode.None);
        int perMode = KeyEpoch.HandlesPerMode;
        AssertCounts(created: 1, released: 1);

        // One held call in the inline slot and one in each shared slot (as in HandleOwnershipTests): every slot is
        // reserved, so this thread's call uses a handle of its own, which is the one contended call.
        gated.HoldNext(BlockCipherMode.Ecb, encrypting: true, perMode + 1);
        byte[]?[] results = new byte[perMode + 1][];
        Thread[] holders = Enumerable.Range(0, perMode + 1)
            .Select(i => new Thread(() => results[i] = cached.EncryptEcb(plaintext, PaddingMode.None)))
            .ToArray();
        foreach (Thread holder in holders)
        {
            holder.Start();
        }

        gated.WaitUntilHeld();
        Assert.Equal(expected, cached.EncryptEcb(plaintext, PaddingMode.None));
        AssertCounts(created: perMode + 3, released: 2, contended: 1);

        gated.Release();
        foreach (Thread holder in holders)
        {
            holder.Join();
        }

        Assert.All(results, r => Assert.Equal(expected, r));

        // The inline slot's handle comes back to full shared slots and is given back; the rest stay cached until Dispose.
        AssertCounts(created: perMode + 3, released: 3, contended: 1);
        cached.Dispose();
        AssertCounts(created: perMode + 3, released: perMode + 3, contended: 1);
    }

    [Fact]
    public void Calls_under_keys_past_the_bound_on_cached_keys_are_counted_and_no_other_call_is()
    {
        // Kept instances, each keyed and used three times: below the bound (CachedKeyBudget) the second call caches a
        // handle and the third reuses it, uncounted; past it, the second and third calls each use a handle of their own.
        CountingBackend backend = BackendData.IsolatedBackend("PlatformDefault");
        byte[] key = RandomNumberGenerator.GetBytes(16), block = new byte[16];
        const int Keys = CachedKeyBudget.Limit + 1_000;
        var kept = new List<CachedAes>(Keys);
        try
        {
            for (int i = 0; i < Keys; i++)
            {
                var aes = new CachedAes(backend) { Key = key };
                kept.Add(aes);
                for (int call = 0; call < 3; call++)
                {
                    aes.EncryptEcb(block, PaddingMode.None);
                }

                if (i == 99)
                {
                    Assert.Equal(0, Count("cachedaes.calls.uncached"));
                }
            }

            int cached = backend.LiveHandles;
            Assert.InRange(cached, CachedKeyBudget.Limit, CachedKeyBudget.Limit + CachedKeyBudget.SumEvery - 1);
            Assert.Equal(2 * (Keys - cached), Count("cachedaes.calls.uncached"));
        }
        finally
        {
            kept.ForEach(aes => aes.Dispose());
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void DropInstancesWithCachedHandles(CipherBackend backend, int count)
    {
        for (int i = 0; i < count; i++)
        {
            var dropped = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
            dropped.EncryptEcb(new byte[16], PaddingMode.None);
            byte[] ciphertext = dropped.EncryptEcb(new byte[16], PaddingMode.None);
            dropped.DecryptCbc(ciphertext, s_iv, PaddingMode.None);
        }
    }

    private void AssertCounts(long created = 0, long rekeyed = 0, long released = 0, long poolHits = 0, long poolMisses = 0, long contended = 0)
    {
        Assert.Equal(created, Count("cachedaes.handles.created"));
        Assert.Equal(rekeyed, Count("cachedaes.handles.rekeyed"));
        Assert.Equal(released, Count("cachedaes.handles.released"));
        Assert.Equal(poolHits, Count("cachedaes.pool.hits"));
        Assert.Equal(poolMisses, Count("cachedaes.pool.misses"));
        Assert.Equal(contended, Count("cachedaes.calls.contended"));
    }

    private long Count(string name) => _counts.TryGetValue(name, out long value) ? value : 0;
}

/// <summary>The metrics tests run alone: the meter is the whole process's.</summary>
[CollectionDefinition(nameof(MetricsRunAlone), DisableParallelization = true)]
public sealed class MetricsRunAlone;
