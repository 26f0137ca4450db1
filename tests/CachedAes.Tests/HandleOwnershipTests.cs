using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Core;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Handle ownership made deterministic: a backend whose next transform of a chosen mode and direction waits until the
/// test lets it go, so a second call really finds the handle reserved. What the lease promises then: the second call
/// neither waits nor fails, the instance keeps the handles both calls made (up to one per processor), later calls reuse
/// them instead of making new ones, a faulted handle is never reused, and a key change releases every one of them.
/// Also: a failed handle creation leaves no slot reserved, generated keys are random, and a key epoch's memory is valid.
/// </summary>
public sealed class HandleOwnershipTests
{
    private static readonly byte[] s_iv = Enumerable.Range(0, 16).Select(i => (byte)(0xB0 + i)).ToArray();

    [Fact]
    public void After_two_calls_meet_every_mode_and_direction_reuses_its_handles_and_a_key_change_releases_them()
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(i * 3)).ToArray();
        byte[] plaintext = Enumerable.Range(0, 48).Select(i => (byte)(i + 1)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using var gated = new GatedBackend(new FaultInjectingBackend(StockBackend.Instance));
        var counted = new CountingBackend(gated);
        using var cached = new CachedAes(counted) { Key = key };
        int kept = Math.Min(2, KeyEpoch.HandlesPerMode);

        // One handle per mode and direction, waiting in the instance before any contention.
        AssertEveryOperationMatchesStock(cached, stock, plaintext);
        Assert.Equal(4, counted.Creations);

        // A call holds the ECB encryption handle; a second one meanwhile gets a handle of its own, at once.
        byte[] expected = stock.EncryptEcb(plaintext, PaddingMode.None);
        byte[]? heldResult = null;
        gated.HoldNext(BlockCipherMode.Ecb, encrypting: true);
        var holder = new Thread(() => heldResult = cached.EncryptEcb(plaintext, PaddingMode.None));
        holder.Start();
        gated.WaitUntilHeld();
        Assert.Equal(expected, cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Equal(5, counted.Creations);
        gated.Release();
        holder.Join();
        Assert.Equal(expected, heldResult);

        // Both ECB encryption handles are kept (one per processor at most), and from now on no call makes a new handle:
        // the waiting handles of the other modes and directions move to the slots used after the first contention.
        Assert.Equal(kept, cached.CachedCount(BlockCipherMode.Ecb, encrypting: true));
        for (int i = 0; i < 20; i++)
        {
            AssertEveryOperationMatchesStock(cached, stock, plaintext);
        }

        Assert.Equal(5, counted.Creations);
        Assert.Equal(5 - (2 - kept), counted.LiveHandles);

        // A handle whose native call failed is released, never cached again: the next call makes a new one.
        gated.Faults.FailNextTransform();
        Assert.Throws<CryptographicException>(() => cached.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        AssertEveryOperationMatchesStock(cached, stock, plaintext);
        Assert.Equal(6, counted.Creations);
        Assert.Equal(1, cached.CachedCount(BlockCipherMode.Cbc, encrypting: true));
        Assert.Equal(5 - (2 - kept), counted.LiveHandles);

        // A call still running across a key change finishes with its handle, which is then released, not kept.
        gated.HoldNext(BlockCipherMode.Cbc, encrypting: false);
        byte[] cbc = stock.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        holder = new Thread(() => heldResult = cached.DecryptCbc(cbc, s_iv, PaddingMode.None));
        holder.Start();
        gated.WaitUntilHeld();
        byte[] newKey = key.Select(b => (byte)~b).ToArray();
        cached.Key = newKey;
        Assert.Equal(1, counted.LiveHandles); // only the held one
        gated.Release();
        holder.Join();
        Assert.Equal(plaintext, heldResult);
        Assert.Equal(0, counted.LiveHandles);
        Assert.Equal(0, cached.CachedCount(BlockCipherMode.Cbc, encrypting: false));

        using Aes stockNew = TestUtil.Stock(newKey);
        AssertEveryOperationMatchesStock(cached, stockNew, plaintext);
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
        Assert.Equal(perMode + 2, counted.Creations);
        Assert.Equal(perMode + 1, counted.LiveHandles);

        gated.Release();
        foreach (Thread holder in holders)
        {
            holder.Join();
        }

        Assert.All(results, r => Assert.Equal(expected, r));

        // The handle from the first slot comes back to find every shared slot taken: it is released. One per processor stays.
        Assert.Equal(perMode, cached.CachedCount(mode, encrypting));
        Assert.Equal(perMode, counted.LiveHandles);
        Assert.Equal(expected, Call());
        Assert.Equal(perMode + 2, counted.Creations);

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

        // The slot was given up: the next call makes its handle there and caches it, as on a first call.
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));
        Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(1, cached.CachedCount(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(1, backend.LiveHandles);
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
    public void A_key_epoch_holds_a_valid_handle_so_disposing_it_zeroes_and_frees_the_key()
    {
        // SafeHandle runs ReleaseHandle (zero, then free) only for a handle that is not invalid.
        var epoch = new KeyEpoch([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
        Assert.False(epoch.IsInvalid);
        Assert.Equal(16, epoch.DangerousKey.Length);
        epoch.Dispose();
        Assert.True(epoch.IsClosed);
        Assert.False(epoch.TryAddRef());
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

    /// <summary>
    /// Wraps a backend: after <see cref="HoldNext"/>, the next transform of that mode and direction signals and then
    /// waits for <see cref="Release"/> before it runs, so the test decides when the handle is given back.
    /// </summary>
    private sealed class GatedBackend(FaultInjectingBackend inner) : CipherBackend, IDisposable
    {
        private readonly ManualResetEventSlim _held = new();
        private readonly ManualResetEventSlim _release = new();
        private int _toHold;
        private BlockCipherMode _mode;
        private bool _encrypting;

        public FaultInjectingBackend Faults => inner;

        public override CachedAesBackend Kind => inner.Kind;

        public override string Description => inner.Description + ", gated";

        /// <summary>Holds the next <paramref name="calls"/> transforms of this mode and direction until <see cref="Release"/>.</summary>
        public void HoldNext(BlockCipherMode mode, bool encrypting, int calls = 1)
        {
            _held.Reset();
            _release.Reset();
            _mode = mode;
            _encrypting = encrypting;
            Volatile.Write(ref _toHold, calls);
        }

        /// <summary>Waits until every call asked for is held.</summary>
        public void WaitUntilHeld() => Assert.True(_held.Wait(TimeSpan.FromSeconds(30)), "the held calls never started");

        public void Release() => _release.Set();

        public void Dispose()
        {
            _held.Dispose();
            _release.Dispose();
        }

        public override BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
            new Handle(this, inner.Create(mode, encrypting, key));

        private void MaybeHold(BlockCipherMode mode, bool encrypting)
        {
            if (mode != _mode || encrypting != _encrypting)
            {
                return;
            }

            int remaining = Volatile.Read(ref _toHold);
            while (remaining > 0)
            {
                int seen = Interlocked.CompareExchange(ref _toHold, remaining - 1, remaining);
                if (seen == remaining)
                {
                    if (remaining == 1)
                    {
                        _held.Set(); // the last of them: every held call is inside its transform, its handle reserved
                    }

                    Assert.True(_release.Wait(TimeSpan.FromSeconds(30)), "the held call was never released");
                    return;
                }

                remaining = seen;
            }
        }

        private sealed class Handle(GatedBackend owner, BlockCipher inner) : ForwardingCipher(inner)
        {
            public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
            {
                owner.MaybeHold(Mode, Encrypting);
                return base.TryTransform(iv, input, output);
            }
        }
    }
}
