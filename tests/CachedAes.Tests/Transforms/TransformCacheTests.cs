using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Operations.Transforms;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// That transforms really run on cached native handles (the differential suite shows they behave like stock's; this shows
/// they are not stock's): which transforms are cached, that a kept instance makes no new handle per transform, that live
/// transforms hold no handle between calls, that a transform for another key keys the handle it keeps once and releases
/// it, that a transform outlives its instance on a handle of its own, and that transforms never disposed leave nothing
/// behind. A key's first handle is given back after its call and handles are cached from the second on
/// (<c>KeyEpoch.Handles.cs</c>, <c>_cachesHandles</c>): the counts below include that first handle.
/// </summary>
public sealed class TransformCacheTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("000102030405060708090a0b0c0d0e0f");

    public static TheoryData<string> NativeBackends()
    {
        var data = new TheoryData<string>();
        foreach (string name in BackendData.All)
        {
            // The stock fallback's transforms are stock's own, on purpose (checked below).
            if (name != "StockFallback")
            {
                data.Add(name);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void Ecb_and_cbc_transforms_are_cached_and_cfb_ones_are_stocks(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, RandomNumberGenerator.GetBytes(32));
        aes.IV = s_iv;
        foreach ((CipherMode mode, bool cached) in new[] { (CipherMode.ECB, true), (CipherMode.CBC, true), (CipherMode.CFB, false) })
        {
            aes.Mode = mode;
            using ICryptoTransform encryptor = aes.CreateEncryptor();
            using ICryptoTransform decryptor = aes.CreateDecryptor(aes.Key, aes.IV);
            using ICryptoTransform otherKey = aes.CreateEncryptor(RandomNumberGenerator.GetBytes(16), s_iv);
            Assert.Equal(cached, encryptor is CachedEncryptor);
            Assert.Equal(cached, decryptor is CachedDecryptor);
            Assert.Equal(cached, otherKey is CachedEncryptor);
        }
    }

    /// <summary>
    /// An ECB transform of an instance whose IV was never set generates no IV (stock's reads the IV property, which does,
    /// though ECB ignores it: a call to the system's random generator per transform). The IV property then generates one
    /// when first read, fixed from then on, as stock's is. A CBC transform still generates the IV it runs with.
    /// </summary>
    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void An_ecb_transform_generates_no_iv_and_a_cbc_one_runs_with_the_iv_it_generates(string backend)
    {
        FieldInfo ivValue = typeof(SymmetricAlgorithm).GetField("IVValue", BindingFlags.NonPublic | BindingFlags.Instance)!;
        // Any key and message do: the expected bytes come from stock below.
        var random = new Random(5012);
        byte[] key = new byte[32], message = new byte[32];
        random.NextBytes(key);
        random.NextBytes(message);

        using CachedAes ecb = BackendData.Create(backend, key);
        ecb.Mode = CipherMode.ECB;
        using (ICryptoTransform encryptor = ecb.CreateEncryptor())
        using (ICryptoTransform decryptor = ecb.CreateDecryptor())
        {
            Assert.Null(ivValue.GetValue(ecb));
            Assert.Equal(message, decryptor.TransformFinalBlock(encryptor.TransformFinalBlock(message, 0, message.Length), 0, message.Length + 16));
        }

        byte[] iv = ecb.IV;
        Assert.Equal(16, iv.Length);
        Assert.Equal(iv, ecb.IV);

        using CachedAes cbc = BackendData.Create(backend, key);
        using ICryptoTransform cbcEncryptor = cbc.CreateEncryptor();
        byte[] generated = Assert.IsType<byte[]>(ivValue.GetValue(cbc));
        using Aes stock = Aes.Create();
        stock.Key = key;
        Assert.Equal(stock.EncryptCbc(message, generated), cbcEncryptor.TransformFinalBlock(message, 0, message.Length));
        Assert.Equal(generated, cbc.IV);
    }

    [Fact]
    public void On_the_stock_fallback_every_transform_is_stocks()
    {
        using var aes = new CachedAes(new CountingBackend(StockBackend.Instance)) { Key = RandomNumberGenerator.GetBytes(32) };
        using ICryptoTransform encryptor = aes.CreateEncryptor();
        Assert.IsNotType<CachedEncryptor>(encryptor);
        Assert.Equal(0, aes.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void A_kept_instance_makes_one_handle_per_mode_and_direction_for_any_number_of_transforms(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes aes = BackendData.Create(backend, key);
        aes.IV = s_iv;
        byte[] plaintext = RandomNumberGenerator.GetBytes(40);
        byte[] expected = stock.EncryptCbc(plaintext, s_iv);

        for (int i = 0; i < 200; i++)
        {
            // The shapes of IdentityModel (CreateEncryptor() + TransformFinalBlock) and of the Learn sample (the
            // instance's own key passed back in), alternating with a decryptor.
            using ICryptoTransform encryptor = i % 2 == 0 ? aes.CreateEncryptor() : aes.CreateEncryptor(aes.Key, aes.IV);
            Assert.Equal(expected, encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
            using ICryptoTransform decryptor = aes.CreateDecryptor();
            Assert.Equal(plaintext, decryptor.TransformFinalBlock(expected, 0, expected.Length));
        }

        // One per mode and direction, and the key's first handle (the first encryptor's), given back after its call.
        Assert.Equal(3, aes.HandleCreations);
        Assert.Equal(1, aes.CachedCount(BlockCipherMode.Cbc, encrypting: true));
        Assert.Equal(1, aes.CachedCount(BlockCipherMode.Cbc, encrypting: false));

        // The one-shots share the same handles.
        Assert.Equal(expected, aes.EncryptCbc(plaintext, s_iv));
        Assert.Equal(3, aes.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void A_transform_for_another_key_keys_the_handle_it_keeps_once_and_releases_it(string backend)
    {
        CountingBackend counted = BackendData.IsolatedBackend(backend);
        using var aes = new CachedAes(counted) { Key = RandomNumberGenerator.GetBytes(32), IV = s_iv };
        byte[] otherKey = RandomNumberGenerator.GetBytes(24);
        using Aes stock = TestUtil.Stock(otherKey);
        byte[] plaintext = RandomNumberGenerator.GetBytes(33);

        // The transform's key is a key of its own: its first call's handle is that key's first, given back after the
        // call; the second call keys the handle that then serves every later call.
        ICryptoTransform encryptor = aes.CreateEncryptor(otherKey, s_iv);
        Assert.Equal(stock.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        Assert.Equal(1, counted.Creations);
        Assert.Equal(0, counted.LiveHandles);
        for (int i = 0; i < 20; i++)
        {
            Assert.Equal(stock.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        }

        Assert.Equal(2, counted.Creations);
        Assert.Equal(1, counted.LiveHandles);
        encryptor.Dispose();

        Assert.Equal(0, counted.LiveHandles);
        Assert.Equal(0, aes.CachedCount(BlockCipherMode.Cbc, encrypting: true));
    }

    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void A_transform_outlives_its_instance_on_a_handle_of_its_own_released_with_it(string backend)
    {
        CountingBackend counted = BackendData.IsolatedBackend(backend);
        byte[] key = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        var aes = new CachedAes(counted) { Key = key, IV = s_iv };
        byte[] plaintext = RandomNumberGenerator.GetBytes(64);
        ICryptoTransform encryptor = aes.CreateEncryptor();

        // Two calls: the key's first handle is given back after its call, the second call's is cached.
        Assert.Equal(stock.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        Assert.Equal(stock.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        Assert.Equal(2, counted.Creations);
        Assert.Equal(1, counted.LiveHandles);

        // Disposing the instance releases its handles (the cached one goes at once); the transform then keys one of its
        // own from the key it keeps a reference on, and uses it for every later call.
        aes.Dispose();
        Assert.Equal(0, counted.LiveHandles);
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(stock.EncryptCbc(plaintext, s_iv), encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        }

        Assert.Equal(1, counted.LiveHandles);
        Assert.Equal(3, counted.Creations);
        encryptor.Dispose();
        Assert.Equal(0, counted.LiveHandles);
    }

    [Theory]
    [MemberData(nameof(NativeBackends))]
    public void Live_transforms_hold_no_handle_between_calls(string backend)
    {
        CountingBackend counted = BackendData.IsolatedBackend(backend);
        using var aes = new CachedAes(counted) { Key = RandomNumberGenerator.GetBytes(32), IV = s_iv };
        byte[] block = new byte[16];
        var alive = new List<ICryptoTransform>();
        for (int i = 0; i < 3 * KeyEpochCap; i++)
        {
            ICryptoTransform transform = aes.CreateEncryptor();
            transform.TransformBlock(block, 0, 16, new byte[16], 0);
            alive.Add(transform);
        }

        // One thread, one call at a time: the one cached handle served every transform but the first, whose handle was
        // the key's first, given back after its call.
        Assert.Equal(2, counted.Creations);
        Assert.Equal(1, counted.LiveHandles);
        alive.ForEach(t => t.Dispose());
        Assert.Equal(1, aes.CachedCount(BlockCipherMode.Cbc, encrypting: true));
    }

    [Fact]
    public void A_transform_a_cryptostream_never_disposes_keeps_no_handle_from_the_instance()
    {
        CountingBackend counted = BackendData.IsolatedBackend("PlatformDefault");
        using var aes = new CachedAes(counted) { Key = RandomNumberGenerator.GetBytes(32), IV = s_iv };
        for (int i = 0; i < 50; i++)
        {
            // CryptoStream does not dispose its transform, and this code drops it (as the Learn sample does).
            using var crypto = new CryptoStream(new MemoryStream(), aes.CreateEncryptor(), CryptoStreamMode.Write);
            crypto.Write(new byte[100]);
        }

        // One cached handle, and the key's first (the first stream's), given back after its call.
        Assert.Equal(2, counted.Creations);
        Assert.Equal(1, aes.CachedCount(BlockCipherMode.Cbc, encrypting: true));
    }

    /// <summary>
    /// A million transforms from one kept instance and from new instances, half of them never disposed: the native
    /// contexts that exist afterwards (counted by the OpenSSL backend's pool, which also counts contexts freed by
    /// finalization) are bounded by what the pool and one instance's slots can keep.
    /// </summary>
    [OpenSslFact]
    [SupportedOSPlatform("linux")]
    public void A_million_transforms_half_never_disposed_leave_no_native_context_behind()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? raw, out string? reason), reason);
        var backend = (OpenSslBackend)raw;
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        byte[] expected = stock.EncryptCbc(plaintext, s_iv);
        using var kept = new CachedAes(backend) { Key = key, IV = s_iv };

        const int Transforms = 1_000_000;
        for (int i = 0; i < Transforms; i++)
        {
            // Every eighth transform comes from a new instance (with the instance's key or another), the rest from the
            // kept one; odd ones are dropped without Dispose.
            ICryptoTransform transform = (i % 8) switch
            {
                0 => NewInstanceTransform(backend, key),
                4 => kept.CreateEncryptor(RandomNumberGenerator.GetBytes(32), s_iv),
                _ => kept.CreateEncryptor(),
            };

            byte[] produced = transform.TransformFinalBlock(plaintext, 0, plaintext.Length);
            if (i % 8 != 4)
            {
                Assert.Equal(expected, produced);
            }

            if (i % 2 == 0)
            {
                transform.Dispose();
            }

            if (i % 100_000 == 99_999)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
        }

        TestUtil.CollectDropped();

        // Left: the pool's keyless contexts and the kept instance's cached ones (its slots, at most one per processor and
        // 64, plus the inline one). Dropped transforms held only a key reference between calls (released by their
        // finalizers), and the epochs of those made for another key were retired by them, releasing their handles into
        // the pool.
        int cached = kept.CachedCount(BlockCipherMode.Cbc, encrypting: true);
        Assert.InRange(backend.Pool.LiveContexts, 0, OpenSslContextPool.Capacity + KeyEpochCap + 1);
        Assert.Equal(backend.Pool.Count + cached, backend.Pool.LiveContexts);
    }

    private static int KeyEpochCap => CachedCryptography.Ownership.KeyEpoch.HandlesPerMode;

    private static ICryptoTransform NewInstanceTransform(CipherBackend backend, byte[] key)
    {
        using var aes = new CachedAes(backend) { Key = key, IV = s_iv };
        return aes.CreateEncryptor();
    }
}
