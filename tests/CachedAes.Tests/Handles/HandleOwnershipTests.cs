using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests;

/// <summary>
/// Handle ownership made deterministic: a backend whose next transform of a chosen mode and direction waits until the
/// test lets it go, so a second call really finds the handle reserved. What the lease promises then: the second call
/// neither waits nor fails, the instance keeps the handles both calls made (up to one per processor, 64 at most), later calls reuse
/// them instead of making new ones, a faulted handle is never reused, and a key change releases every one of them.
/// Also: a failed handle creation leaves no slot reserved, generated keys are random, a key epoch's memory is valid,
/// the stock instance kept for CFB is reused and released with its key, and a key change releases the old key's memory.
/// (That a released key memory is zeroed is checked in <see cref="KeyMemoryReleaseTests"/>, which runs alone.)
/// </summary>
public sealed class HandleOwnershipTests
{
    private static readonly byte[] s_iv = Enumerable.Range(0, 16).Select(i => (byte)(0xB0 + i)).ToArray();

    [Fact]
    public void After_two_calls_meet_every_mode_and_direction_reuses_its_handles_and_a_key_change_rekeys_the_idle_ones()
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(i * 3)).ToArray();
        byte[] plaintext = Enumerable.Range(0, 48).Select(i => (byte)(i + 1)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using var gated = new GatedBackend(new FaultInjectingBackend(StockBackend.Instance));
        var counted = new CountingBackend(gated);
        using var cached = new CachedAes(counted) { Key = key };
        int kept = Math.Min(2, KeyEpoch.HandlesPerMode);

        // One handle per mode and direction, waiting in the instance before any contention. The key's first handle is
        // given back after its call (KeyEpoch.Handles.cs, _cachesHandles), so a first ECB encryption comes before: five
        // handles made, four kept.
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Equal(0, counted.LiveHandles);
        AssertEveryOperationMatchesStock(cached, stock, plaintext);
        Assert.Equal(5, counted.Creations);
        Assert.Equal(4, counted.LiveHandles);

        // A call holds the ECB encryption handle; a second one meanwhile gets a handle of its own, at once.
        byte[] expected = stock.EncryptEcb(plaintext, PaddingMode.None);
        byte[]? heldResult = null;
        gated.HoldNext(BlockCipherMode.Ecb, encrypting: true);
        var holder = new Thread(() => heldResult = cached.EncryptEcb(plaintext, PaddingMode.None));
        holder.Start();
        gated.WaitUntilHeld();
        Assert.Equal(expected, cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Equal(6, counted.Creations);
        gated.Release();
        holder.Join();
        Assert.Equal(expected, heldResult);

        // Both ECB encryption handles are kept (one per processor, 64 at most), and from now on no call makes a new handle:
        // the waiting handles of the other modes and directions move to the slots used after the first contention.
        Assert.Equal(kept, cached.CachedCount(BlockCipherMode.Ecb, encrypting: true));
        for (int i = 0; i < 20; i++)
        {
            AssertEveryOperationMatchesStock(cached, stock, plaintext);
        }

        Assert.Equal(6, counted.Creations);
        Assert.Equal(5 - (2 - kept), counted.LiveHandles);

        // A handle whose native call failed is released, never cached again: the next call makes a new one.
        gated.Faults.FailNextTransform();
        Assert.Throws<CryptographicException>(() => cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        AssertEveryOperationMatchesStock(cached, stock, plaintext);
        Assert.Equal(7, counted.Creations);
        Assert.Equal(1, cached.CachedCount(BlockCipherMode.Cbc, encrypting: true));
        Assert.Equal(5 - (2 - kept), counted.LiveHandles);

        // A key change gives back the idle handles of the shared slots (threads that share an instance make new ones as
        // they need them: KeyEpoch.Handles.cs, SweepHandles), while a call still running across it finishes with its
        // handle and the old key; that handle is then released, not kept.
        gated.HoldNext(BlockCipherMode.Cbc, encrypting: false);
        byte[] cbc = stock.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        holder = new Thread(() => heldResult = cached.DecryptCbc(cbc, s_iv, PaddingMode.None));
        holder.Start();
        gated.WaitUntilHeld();
        int createdBefore = counted.Creations;
        byte[] newKey = key.Select(b => (byte)~b).ToArray();
        cached.Key = newKey;
        Assert.Equal(createdBefore, counted.Creations);
        Assert.Equal(1, counted.LiveHandles);
        gated.Release();
        holder.Join();
        Assert.Equal(plaintext, heldResult);
        Assert.Equal(0, counted.LiveHandles);

        // Every operation now runs on handles of the new key, one made per mode and direction and kept.
        using Aes stockNew = TestUtil.Stock(newKey);
        for (int i = 0; i < 3; i++)
        {
            AssertEveryOperationMatchesStock(cached, stockNew, plaintext);
        }

        Assert.Equal(createdBefore + 4, counted.Creations);
        Assert.Equal(4, counted.LiveHandles);
    }

    [Theory]
    [InlineData(false, true)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    [InlineData(true, false)]
    public void With_every_slot_taken_a_call_uses_a_handle_of_its_own_and_at_most_one_per_processor_stays(bool cbc, bool encrypting)
    {
        BlockCipherMode mode = cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        byte[] key = Enumerable.Range(0, 24).Select(i => (byte)(0x90 - i)).ToArray();
        byte[] plaintext = Enumerable.Range(0, 32).Select(i => (byte)(i * 5)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using var gated = new GatedBackend(new FaultInjectingBackend(StockBackend.Instance));
        var counted = new CountingBackend(gated);
        using var cached = new CachedAes(counted) { Key = key };
        int perMode = KeyEpoch.HandlesPerMode;
        byte[] input = encrypting ? plaintext : mode == BlockCipherMode.Ecb ? stock.EncryptEcb(plaintext, PaddingMode.None) : stock.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        byte[] expected = encrypting ? mode == BlockCipherMode.Ecb ? stock.EncryptEcb(plaintext, PaddingMode.None) : stock.EncryptCbc(plaintext, s_iv, PaddingMode.None) : plaintext;

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): one call first, so
        // that the held calls below cache what they make. It leaves one creation and no live handle behind.
        Assert.Equal(expected, Call());
        Assert.Equal(1, counted.Creations);
        Assert.Equal(0, counted.LiveHandles);

        // One call more than there are shared slots, all held at once: the first holds the instance's first slot, the
        // others switch it to the shared slots and take one each.
        gated.HoldNext(mode, encrypting, perMode + 1);
        byte[]?[] results = new byte[perMode + 1][];
        Thread[] holders = Enumerable.Range(0, perMode + 1).Select(i => new Thread(() => results[i] = Call())).ToArray();
        foreach (Thread holder in holders)
        {
            holder.Start();
        }

        gated.WaitUntilHeld();

        // Every slot is reserved: this call makes a handle of its own, at once, and releases it when it returns.
        Assert.Equal(expected, Call());
        Assert.Equal(1 + perMode + 2, counted.Creations);
        Assert.Equal(perMode + 1, counted.LiveHandles);

        gated.Release();
        foreach (Thread holder in holders)
        {
            holder.Join();
        }

        Assert.All(results, r => Assert.Equal(expected, r));

        // The handle from the first slot comes back to find every shared slot taken: it is released. One per shared slot
        // stays (one per processor, 64 at most).
        Assert.Equal(perMode, cached.CachedCount(mode, encrypting));
        Assert.Equal(perMode, counted.LiveHandles);
        Assert.Equal(expected, Call());
        Assert.Equal(1 + perMode + 2, counted.Creations);

        byte[] Call() => (mode, encrypting) switch
        {
            (BlockCipherMode.Ecb, true) => cached.EncryptEcb(input, PaddingMode.None),
            (BlockCipherMode.Ecb, false) => cached.DecryptEcb(input, PaddingMode.None),
            (BlockCipherMode.Cbc, true) => cached.EncryptCbc(input, s_iv, PaddingMode.None),
            _ => cached.DecryptCbc(input, s_iv, PaddingMode.None),
        };
    }

    [Fact]
    public void A_failed_handle_creation_leaves_nothing_reserved()
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(0x40 + i)).ToArray();
        byte[] plaintext = new byte[32];
        using Aes stock = TestUtil.Stock(key);
        int failures = 1;
        var backend = new MisbehavingBackend(StockBackend.Instance) { FailCreate = (_, _) => Interlocked.Decrement(ref failures) >= 0 };
        using var cached = new CachedAes(backend) { Key = key };

        Assert.Throws<CryptographicException>(() => cached.EncryptEcb(plaintext, PaddingMode.None));

        // The slot was given up: the next call makes its handle there, as on a first call. That handle is the key's first,
        // given back after its call (KeyEpoch.Handles.cs, _cachesHandles); the call after it makes one in the same inline
        // slot and caches it (a slot left reserved would have sent both calls to the shared slots instead).
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Null(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(0, backend.LiveHandles);
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(1, cached.CachedCount(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(1, backend.LiveHandles);
    }

    /// <summary>
    /// The first-handle policy (<c>KeyEpoch.Handles.cs</c>, <c>_cachesHandles</c>): a key's first handle goes back to its
    /// backend when its call returns instead of being cached; the second call's handle is cached and every later call
    /// reuses it, and the key's later handles (other modes and directions) are cached from their first call. So an
    /// instance used for one call and dropped without Dispose leaves its finalizer nothing to free: on OpenSSL its
    /// context waits, reset, in the backend's pool.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_keys_first_handle_is_given_back_after_its_call_and_the_second_is_cached_for_every_later_call(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(48);
        using Aes stock = TestUtil.Stock(key);
        byte[] expected = stock.EncryptCbc(plaintext, s_iv, PaddingMode.None);

        // One call, then the instance is dropped without Dispose: its handle is back with the backend as soon as the call
        // returns (on OpenSSL in the pool, which grows by one), and the key's finalizer, once it has run, freed nothing.
        CountingBackend dropped = BackendData.IsolatedBackend(backend);
        OpenSslBackend? openSsl = null;
        int pooled = 0;
        if (backend == "PlatformDefault" && OperatingSystem.IsLinux())
        {
            openSsl = Assert.IsType<OpenSslBackend>(dropped.InnerBackend);
            pooled = openSsl.Pool.Count;
        }

        WeakReference droppedKey = OneCallThenDrop(dropped, key, plaintext, expected);
        Assert.Equal(1, dropped.Creations);
        Assert.Equal(0, dropped.LiveHandles);
        if (openSsl is not null && OperatingSystem.IsLinux())
        {
            Assert.Equal(pooled + 1, openSsl.Pool.Count);
            Assert.Equal(openSsl.Pool.Count, openSsl.Pool.LiveContexts);
        }

        TestUtil.CollectUntil(() => !droppedKey.IsAlive);
        Assert.False(droppedKey.IsAlive);
        Assert.Equal(0, dropped.DroppedReleases);
        Assert.Equal(0, dropped.LiveHandles);

        // A kept instance: the first call's handle is given back likewise, nothing is cached after it; the second call's
        // is cached, and every later call reuses it (creations stop growing).
        CountingBackend counted = BackendData.IsolatedBackend(backend);
        using (var cached = new CachedAes(counted) { Key = key })
        {
            Assert.Equal(expected, cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
            Assert.Equal(1, counted.Creations);
            Assert.Equal(0, counted.LiveHandles);
            foreach (BlockCipherMode mode in (BlockCipherMode[])[BlockCipherMode.Ecb, BlockCipherMode.Cbc])
            {
                Assert.Equal(0, cached.CachedCount(mode, encrypting: true));
                Assert.Equal(0, cached.CachedCount(mode, encrypting: false));
            }

            Assert.Equal(expected, cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
            Assert.Equal(2, counted.Creations);
            Assert.Equal(1, counted.LiveHandles);
            BlockCipher? kept = cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting: true);
            Assert.NotNull(kept);
            for (int i = 0; i < 20; i++)
            {
                Assert.Equal(expected, cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
                Assert.Same(kept, cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting: true));
            }

            Assert.Equal(2, counted.Creations);
            Assert.Equal(1, counted.LiveHandles);

            // Only the key's first handle is given back: its first decryption's handle is cached at once.
            Assert.Equal(plaintext, cached.DecryptCbc(expected, s_iv, PaddingMode.None));
            Assert.Equal(3, counted.Creations);
            Assert.Equal(2, counted.LiveHandles);
            Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting: false));
        }

        Assert.Equal(0, counted.LiveHandles);
    }

    // An instance over `backend` that makes one call and is dropped without Dispose; a weak reference to its key epoch
    // that lives until the epoch's key memory has been finalized (its finalizer reaches the epoch).
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static WeakReference OneCallThenDrop(CountingBackend backend, byte[] key, byte[] plaintext, byte[] expected)
    {
        var aes = new CachedAes(backend) { Key = key };
        Assert.Equal(expected, aes.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        return new WeakReference(aes.KeyEpoch, trackResurrection: true);
    }

    [Fact]
    public void Generated_keys_are_random()
    {
        // Lazily generated (first use), GenerateKey, and a KeySize change followed by use: no two alike.
        var keys = new System.Collections.Generic.List<string>();
        for (int i = 0; i < 8; i++)
        {
            using var lazy = new CachedAes();
            keys.Add(Convert.ToHexString(lazy.Key));

            using var generated = new CachedAes();
            generated.GenerateKey();
            keys.Add(Convert.ToHexString(generated.Key));

            using var resized = new CachedAes { KeySize = 128 };
            resized.EncryptEcb(new byte[16], PaddingMode.None);
            keys.Add(Convert.ToHexString(resized.Key));
        }

        Assert.Equal(keys.Count, keys.Distinct(StringComparer.Ordinal).Count());
        Assert.All(keys, k => Assert.NotEqual(new string('0', k.Length), k));
    }

    [Fact]
    public void The_stock_instance_is_reused_and_a_key_change_releases_it_and_the_old_key()
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(0x70 + i)).ToArray();
        byte[] plaintext = Enumerable.Range(0, 32).Select(i => (byte)i).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using var cached = new CachedAes(StockBackend.Instance) { Key = key };

        // CFB runs on a stock instance holding the epoch's key, kept between calls, not made again for each.
        Assert.Equal(stock.EncryptCfb(plaintext, s_iv), cached.EncryptCfb(plaintext, s_iv));
        KeyEpoch first = cached.KeyEpoch!;
        StockAes kept = Assert.IsType<StockAes>(first.CachedStock);
        Assert.Equal(plaintext, cached.DecryptCfb(stock.EncryptCfb(plaintext, s_iv), s_iv));
        Assert.Same(kept, first.CachedStock);
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));

        // A key change empties the stock slot and disposes that instance (stock makes a new key when one disposed is
        // read). The instance alone held its key, so the change rewrote the epoch in place: the old key's bytes are gone
        // from its memory, replaced by the new key's, under a new version.
        long versionBefore = first.Version;
        byte[] newKey = [.. key.Select(b => (byte)~b)];
        cached.Key = newKey;
        Assert.Same(first, cached.KeyEpoch);
        Assert.NotEqual(versionBefore, first.Version);
        Assert.Equal(newKey, first.KeyCopy());
        Assert.Null(first.CachedStock);
        Assert.NotEqual(key, kept.Aes.Key);

        // CFB afterwards runs on a new stock instance holding the new key.
        using Aes stockNew = TestUtil.Stock(newKey);
        Assert.Equal(stockNew.EncryptCfb(plaintext, s_iv), cached.EncryptCfb(plaintext, s_iv));
        Assert.NotSame(kept, first.CachedStock);

        // Dispose releases the epoch: its memory is zeroed and freed.
        cached.Dispose();
        Assert.True(first.IsClosed);
        Assert.True(first.KeyMemoryReleased);
    }

    [Fact]
    public void A_stock_instance_is_lent_again_while_its_key_lasts_and_released_when_given_back_after_a_key_change()
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(0x90 + i)).ToArray();
        var current = default(InstanceKey);
        current.Enter();
        current.Replace(key);
        current.Exit();
        KeyEpoch first = current.Epoch!;

        // The instance given back is the one the next caller gets (the slot is empty while it is out).
        Aes lent;
        using (KeyEpoch.StockLease earlier = current.RentStock(128))
        {
            lent = earlier.Aes;
        }

        KeyEpoch.StockLease lease = current.RentStock(128);
        Aes held = lease.Aes;
        Assert.Same(lent, held);
        Assert.Null(first.CachedStock);
        Assert.Equal(key, held.Key);

        // The key is released while the instance is out; given back, it is disposed instead of kept by the retired epoch.
        current.Enter();
        current.Release();
        current.Exit();
        lease.Dispose();
        Assert.Null(first.CachedStock);
        Assert.NotEqual(key, held.Key);
        Assert.True(first.KeyMemoryReleased);
    }

    private static void AssertEveryOperationMatchesStock(CachedAes cached, Aes stock, byte[] plaintext)
    {
        byte[] ecb = stock.EncryptEcb(plaintext, PaddingMode.None);
        byte[] cbc = stock.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        Assert.Equal(ecb, cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Equal(plaintext, cached.DecryptEcb(ecb, PaddingMode.None));
        Assert.Equal(cbc, cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        Assert.Equal(plaintext, cached.DecryptCbc(cbc, s_iv, PaddingMode.None));
    }
}

/// <summary>
/// A released key memory is zeroed before it is pooled, and reused under a new generation. Run alone: the check reads
/// the memory after it went back to the process-wide pool, where a test running beside it could take it and write its
/// own key first (seen once, with a test making keys in parallel).
/// </summary>
[Collection(nameof(KeyMemoryReleaseTests))]
[CollectionDefinition(nameof(KeyMemoryReleaseTests), DisableParallelization = true)]
public sealed class KeyMemoryReleaseTests
{
    [Fact]
    public void A_released_epochs_key_memory_is_zeroed_and_reused_for_the_next_key_under_a_new_generation()
    {
        byte[] key = [.. Enumerable.Range(1, 16).Select(i => (byte)i)];
        var first = new KeyEpoch(StockBackend.Instance, key, heldByInstance: false);
        KeyMemory memory = first.Memory;
        Assert.Equal(key, first.KeyCopy());

        // The last holder lets go: the memory is zeroed and pooled, and the epoch's key can no longer be read.
        first.RemoveTransform();
        Assert.True(first.KeyMemoryReleased);
        Assert.Null(first.KeyCopy());
        Assert.False(memory.Bytes.ContainsAnyExcept((byte)0));

        // Later keys take pooled memory (this one among them, whichever thread gets it), under a generation of their own:
        // the first epoch never reads the next owner's key.
        byte[] next = [.. key.Select(b => (byte)~b)];
        var later = Enumerable.Range(0, 64).Select(_ => new KeyEpoch(StockBackend.Instance, next, heldByInstance: false)).ToList();
        Assert.Null(first.KeyCopy());
        Assert.All(later, epoch => Assert.Equal(next, epoch.KeyCopy()));
        later.ForEach(epoch => epoch.RemoveTransform());
    }
}
