using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Key changes on a kept instance (docs/design-notes.md, "Re-keying in place"): while the instance alone holds its key,
/// a change rewrites the key in place and re-keys the idle handles (nothing is made, nothing allocated beyond stock's
/// own argument check); once a transform holds the key, the change moves the idle handles to a new key and the
/// transform keeps the old one. Every result is compared with stock under the key that was set.
/// </summary>
public class KeyChangeTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("f0e0d0c0b0a090807060504030201000");

    /// <summary>
    /// The backends of this project's table whose handles re-key in place: OpenSSL and CNG (the platform's on Linux and
    /// Windows, and the simulated CNG layers), the CPU intrinsics and the stock fallback. CommonCrypto handles are
    /// replaced instead.
    /// </summary>
    public static TheoryData<string> RekeyingBackends
    {
        get
        {
            var data = new TheoryData<string>();
            foreach (string name in BackendData.All)
            {
                if (name is "StockFallback" or "SimulatedCngPseudoHandles" or "SimulatedCngProviders" or "CpuIntrinsics"
                    || (name == "PlatformDefault" && !OperatingSystem.IsMacOS()))
                {
                    data.Add(name);
                }
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Key_changes_of_every_kind_interleaved_with_every_operation_match_stock(string backend)
    {
        var random = new Random(24);
        using CachedAes cached = BackendData.Create(backend);
        using Aes stock = Aes.Create();
        PaddingMode[] paddings = [PaddingMode.None, PaddingMode.PKCS7, PaddingMode.Zeros, PaddingMode.ANSIX923];
        for (int step = 0; step < 1500; step++)
        {
            if (step % 3 == 0)
            {
                // Mostly keys of the size already set (re-keyed in place), sometimes another size (another cipher).
                int size = random.Next(4) == 0 ? (16 + (8 * random.Next(3))) : cached.KeySize / 8;
                byte[] key = TestUtil.Random(random, size);
                switch (random.Next(3))
                {
                    case 0: cached.Key = key; break;
                    case 1: cached.SetKey(key); break;
                    default: cached.GenerateKey(); key = cached.Key; break;
                }

                stock.Key = key;
            }

            PaddingMode padding = paddings[random.Next(paddings.Length)];
            int length = padding == PaddingMode.None ? 16 * random.Next(0, 5) : random.Next(0, 70);
            byte[] plaintext = TestUtil.Random(random, length);
            string what = $"step {step}, {padding}, {length} bytes";
            switch (random.Next(5))
            {
                case 0:
                    Assert.True(stock.EncryptEcb(plaintext, padding).AsSpan().SequenceEqual(cached.EncryptEcb(plaintext, padding)), what);
                    break;
                case 1:
                    Assert.True(stock.EncryptCbc(plaintext, s_iv, padding).AsSpan().SequenceEqual(cached.EncryptCbc(plaintext, s_iv, padding)), what);
                    break;
                case 2:
                    byte[] ecb = stock.EncryptEcb(plaintext, padding);
                    Assert.True(stock.DecryptEcb(ecb, padding).AsSpan().SequenceEqual(cached.DecryptEcb(ecb, padding)), what);
                    break;
                case 3:
                    byte[] cbc = stock.EncryptCbc(plaintext, s_iv, padding);
                    Assert.True(stock.DecryptCbc(cbc, s_iv, padding).AsSpan().SequenceEqual(cached.DecryptCbc(cbc, s_iv, padding)), what);
                    break;
                default:
                    byte[] secret = TestUtil.Random(random, 1 + random.Next(40));
                    byte[] wrapped = stock.EncryptKeyWrapPadded(secret);
                    Assert.True(wrapped.AsSpan().SequenceEqual(cached.EncryptKeyWrapPadded(secret)), what);
                    Assert.True(secret.AsSpan().SequenceEqual(cached.DecryptKeyWrapPadded(wrapped)), what);
                    break;
            }
        }
    }

    [Theory]
    [MemberData(nameof(RekeyingBackends))]
    public void A_key_change_on_a_kept_instance_rewrites_its_key_in_place_and_rekeys_its_handles(string backend)
    {
        byte[] oldKey = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(48);
        using CachedAes cached = BackendData.Create(backend, oldKey);

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): the second ECB
        // encryption makes the one that stays.
        cached.EncryptEcb(plaintext, PaddingMode.None);
        cached.EncryptEcb(plaintext, PaddingMode.None);
        cached.DecryptCbc(cached.EncryptCbc(plaintext, s_iv), s_iv);
        KeyEpoch epoch = cached.KeyEpoch!;
        int version = epoch.Version;
        int created = cached.HandleCreations;
        BlockCipher ecb = cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true)!;

        for (int i = 0; i < 10; i++)
        {
            byte[] newKey = RandomNumberGenerator.GetBytes(32);
            cached.SetKey(newKey);

            // The same epoch, its memory now holding the new key (the old one's bytes are gone), under a new version.
            Assert.Same(epoch, cached.KeyEpoch);
            Assert.Equal(newKey, epoch.KeyCopy());
            Assert.True(epoch.Version > version);
            version = epoch.Version;

            // The same handles, re-keyed: the ECB one is the one cached before, and no call makes a new one.
            using Aes stock = TestUtil.Stock(newKey);
            Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), cached.EncryptEcb(plaintext, PaddingMode.None));
            Assert.Equal(plaintext, cached.DecryptCbc(stock.EncryptCbc(plaintext, s_iv), s_iv));
            Assert.Equal(stock.EncryptCbc(plaintext, s_iv), cached.EncryptCbc(plaintext, s_iv));
            Assert.Same(ecb, cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
            Assert.Equal(created, cached.HandleCreations);
        }
    }

    [Theory]
    [MemberData(nameof(RekeyingBackends))]
    public void A_key_change_rekeys_every_idle_handle_of_an_instance_used_by_one_thread(string backend)
    {
        using CachedAes cached = BackendData.Create(backend, RandomNumberGenerator.GetBytes(16));

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): the second ECB
        // encryption makes the one that stays.
        cached.EncryptEcb(new byte[16], PaddingMode.None);
        cached.EncryptEcb(new byte[16], PaddingMode.None);
        cached.EncryptCbc(new byte[16], s_iv, PaddingMode.None);
        int live = CountingOf(cached).LiveHandles;
        int created = cached.HandleCreations;
        Assert.Equal(2, live);

        // Each key change re-keys both cached handles in place, whether or not a call used one since the last change:
        // nothing is made or given back, and each then encrypts under the key set last.
        for (int i = 0; i < 3; i++)
        {
            byte[] key = RandomNumberGenerator.GetBytes(16);
            cached.SetKey(key);
            Assert.Equal(live, CountingOf(cached).LiveHandles);
            Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
            Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting: true));
            using Aes stock = TestUtil.Stock(key);
            Assert.Equal(stock.EncryptEcb(new byte[16], PaddingMode.None), cached.EncryptEcb(new byte[16], PaddingMode.None));
        }

        using Aes last = TestUtil.Stock(cached.Key);
        Assert.Equal(last.EncryptCbc(new byte[16], s_iv, PaddingMode.None), cached.EncryptCbc(new byte[16], s_iv, PaddingMode.None));
        Assert.Equal(created, cached.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_key_change_while_a_transform_holds_the_key_leaves_the_transform_its_key(string backend)
    {
        byte[] oldKey = RandomNumberGenerator.GetBytes(24);
        byte[] newKey = RandomNumberGenerator.GetBytes(24);
        byte[] plaintext = RandomNumberGenerator.GetBytes(40);
        using Aes stockOld = TestUtil.Stock(oldKey);
        using Aes stockNew = TestUtil.Stock(newKey);
        using CachedAes cached = BackendData.Create(backend, oldKey);
        cached.IV = s_iv;
        Assert.Equal(stockOld.EncryptCbc(plaintext, s_iv), cached.EncryptCbc(plaintext, s_iv));
        KeyEpoch first = cached.KeyEpoch!;
        using ICryptoTransform encryptor = cached.CreateEncryptor();

        cached.Key = newKey;

        // The transform's key is frozen: the instance moved to a new epoch, and the old one still holds the old key. (On
        // the stock fallback the transform is stock's own, with its own copy of the key: the instance's key is rewritten.)
        if (cached.Backend != CachedAesBackend.StockFallback)
        {
            Assert.NotSame(first, cached.KeyEpoch);
            Assert.Equal(oldKey, first.KeyCopy());
        }

        Assert.Equal(stockNew.EncryptCbc(plaintext, s_iv), cached.EncryptCbc(plaintext, s_iv));
        Assert.Equal(stockOld.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        Assert.Equal(stockNew.EncryptCbc(plaintext, s_iv), cached.EncryptCbc(plaintext, s_iv));
    }

    [Fact]
    public void A_key_change_on_a_kept_instance_allocates_no_more_than_stocks_own()
    {
        byte[][] keys = [RandomNumberGenerator.GetBytes(32), RandomNumberGenerator.GetBytes(32)];
        byte[] plaintext = new byte[16];
        byte[] destination = new byte[32];
        using CachedAes cached = new() { Key = keys[0] };
        using Aes stock = Aes.Create();
        stock.Key = keys[0];
        cached.TryEncryptCbc(plaintext, s_iv, destination, out _);

        int next = 0;
        long ours = TestUtil.AllocatedWhenWarm(() =>
        {
            cached.SetKey(keys[next ^= 1]);
            cached.TryEncryptCbc(plaintext, s_iv, destination, out _);
        });

        // Stock's SetKey checks the size against a copy of LegalKeySizes (an allocation of its own, which CachedAes pays
        // too); that copy is all a key change may allocate here.
        long stocksCheck = TestUtil.AllocatedWhenWarm(() => _ = stock.ValidKeySize(256));
        Assert.Equal(stocksCheck, ours);
    }

    /// <summary>
    /// One thread rewrites the key in place as fast as it can, alternating a 16-byte and a 32-byte key (each rewrite
    /// stores the bytes, clears the rest and stores the length); two others read it (the <c>Key</c> getter copies it
    /// under its version) and must only ever see one key or the other, never a mix. Without the version check this
    /// fails within the run (checked by removing it: "a torn key was read").
    /// </summary>
    [Theory]
    [MemberData(nameof(RekeyingBackends))]
    public void A_reader_never_sees_a_key_half_rewritten(string backend)
    {
        string a = Convert.ToHexString(Enumerable.Repeat((byte)0xAA, 16).ToArray());
        string b = Convert.ToHexString(Enumerable.Repeat((byte)0x55, 32).ToArray());
        byte[][] keys = [Convert.FromHexString(a), Convert.FromHexString(b)];
        using CachedAes cached = BackendData.Create(backend, keys[0]);
        var torn = new ConcurrentQueue<string>();
        int stop = 0;
        long reads = 0;
        var readers = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
        {
            while (Volatile.Read(ref stop) == 0)
            {
                string key = Convert.ToHexString(cached.Key);
                if (key != a && key != b)
                {
                    torn.Enqueue(key);
                }

                Interlocked.Increment(ref reads);
            }
        })).ToList();
        readers.ForEach(r => r.Start());
        for (int i = 0; i < 300_000 && torn.IsEmpty; i++)
        {
            cached.SetKey(keys[i & 1]);
        }

        Volatile.Write(ref stop, 1);
        readers.ForEach(r => r.Join());
        Assert.True(Interlocked.Read(ref reads) > 100, $"only {reads} reads");
        Assert.True(torn.IsEmpty, $"a torn key was read: {(torn.TryPeek(out string? first) ? first : "")}");
    }

    private static CountingBackend CountingOf(CachedAes cached) => (CountingBackend)cached.CipherBackend;
}
