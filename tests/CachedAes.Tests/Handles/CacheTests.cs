using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>Handle caching through the internal seams: reuse, and invalidation on every key-change path.</summary>
public class CacheTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Backend_reports_what_it_is(string backend)
    {
        using CachedAes cached = BackendData.Create(backend);
        if (backend == "StockFallback")
        {
            Assert.Equal(CachedAesBackend.StockFallback, cached.Backend);
            return;
        }

        Assert.NotEqual(CachedAesBackend.StockFallback, cached.Backend);
        if (backend == "PlatformDefault" && OperatingSystem.IsLinux())
        {
            Assert.Equal(CachedAesBackend.OpenSsl, cached.Backend);
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Thousand_one_shots_reuse_one_handle_per_mode_and_direction(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        Assert.Equal(0, cached.HandleCreations);
        Assert.Null(cached.PeekCachedHandle(BlockCipherMode.Ecb, true));
        var rng = new Random(1234);
        byte[] dest = new byte[1100];

        // ECB encrypt only: the key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles), so
        // a second call makes the one cached handle, the same object throughout: two creations in all.
        cached.EncryptEcb(new byte[16], PaddingMode.None);
        cached.EncryptEcb(new byte[16], PaddingMode.None);
        BlockCipher? ecbEnc = cached.PeekCachedHandle(BlockCipherMode.Ecb, true);
        Assert.NotNull(ecbEnc);
        for (int i = 0; i < 1000; i++)
        {
            byte[] pt = TestUtil.Random(rng, rng.Next(1, 70));
            int n = cached.EncryptEcb(pt, dest, PaddingMode.PKCS7);
            Assert.True(stock.EncryptEcb(pt, PaddingMode.PKCS7).AsSpan().SequenceEqual(dest.AsSpan(0, n)));
        }

        Assert.Equal(2, cached.HandleCreations);
        Assert.Same(ecbEnc, cached.PeekCachedHandle(BlockCipherMode.Ecb, true));

        // ECB decrypt: one more (the key already caches, so its first decryption handle stays).
        for (int i = 0; i < 1000; i++)
        {
            byte[] ct = stock.EncryptEcb(TestUtil.Random(rng, rng.Next(0, 70)), PaddingMode.PKCS7);
            int n = cached.DecryptEcb(ct, dest, PaddingMode.PKCS7);
            Assert.True(stock.DecryptEcb(ct, PaddingMode.PKCS7).AsSpan().SequenceEqual(dest.AsSpan(0, n)));
        }

        Assert.Equal(3, cached.HandleCreations);
        Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, false));

        // CBC both ways, short and long messages: one handle per direction.
        for (int i = 0; i < 1000; i++)
        {
            byte[] pt = TestUtil.Random(rng, i % 2 == 0 ? rng.Next(0, 40) : rng.Next(200, 1000));
            int n = cached.EncryptCbc(pt, s_iv, dest);
            byte[] expected = stock.EncryptCbc(pt, s_iv);
            Assert.True(expected.AsSpan().SequenceEqual(dest.AsSpan(0, n)));
            n = cached.DecryptCbc(expected, s_iv, dest);
            Assert.True(pt.AsSpan().SequenceEqual(dest.AsSpan(0, n)));
        }

        Assert.Equal(5, cached.HandleCreations);
        Assert.Same(ecbEnc, cached.PeekCachedHandle(BlockCipherMode.Ecb, true));
    }

    public enum KeyChange
    {
        KeySetter,
        SetKey,
        KeySizeSetter,
        KeySizeSetterSameSize,
        GenerateKey,
        Dispose,
        Clear,
    }

    public static TheoryData<string, KeyChange, bool> KeyChanges()
    {
        var data = new TheoryData<string, KeyChange, bool>();
        foreach (string backend in BackendData.All)
        {
            foreach (KeyChange change in Enum.GetValues<KeyChange>())
            {
                data.Add(backend, change, false);
                data.Add(backend, change, true);
            }
        }

        return data;
    }

    /// <summary>
    /// After any key change no cached handle holds the old key: a change that sets a key re-keys each idle handle in place
    /// (where the backend can) or releases it, and one that discards the key (a key size change, Dispose, Clear)
    /// releases them all. Every handle still cached is checked through the seam itself against stock under the new key,
    /// and exactly the released ones are made again by the calls that follow.
    /// </summary>
    [Theory]
    [MemberData(nameof(KeyChanges))]
    public void Every_key_change_leaves_no_handle_of_the_old_key(string backend, KeyChange change, bool readKeyFirst)
    {
        byte[] oldKey = RandomNumberGenerator.GetBytes(32);
        byte[] pt = RandomNumberGenerator.GetBytes(100);
        CachedAes cached = BackendData.Create(backend, oldKey);
        try
        {
            // Warm every handle. The key's first handle (the first ECB encryption's) is given back after its call
            // (KeyEpoch.Handles.cs, _cachesHandles): a second ECB encryption makes the one that stays.
            cached.EncryptEcb(pt, PaddingMode.PKCS7);
            byte[] ecbCt = cached.EncryptEcb(pt, PaddingMode.PKCS7);
            cached.DecryptEcb(ecbCt, PaddingMode.PKCS7);
            byte[] cbcCt = cached.EncryptCbc(pt, s_iv);
            cached.DecryptCbc(cbcCt, s_iv);
            Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, true));
            Assert.NotNull(cached.PeekCachedHandle(BlockCipherMode.Ecb, false));
            int created = cached.HandleCreations;

            byte[]? explicitKey = null;
            switch (change)
            {
                case KeyChange.KeySetter: explicitKey = RandomNumberGenerator.GetBytes(24); cached.Key = explicitKey; break;
                case KeyChange.SetKey: explicitKey = RandomNumberGenerator.GetBytes(16); cached.SetKey(explicitKey); break;
                case KeyChange.KeySizeSetter: cached.KeySize = 128; break;
                case KeyChange.KeySizeSetterSameSize: cached.KeySize = 256; break;
                case KeyChange.GenerateKey: cached.GenerateKey(); break;
                case KeyChange.Dispose: cached.Dispose(); break;
                case KeyChange.Clear: cached.Clear(); break;
            }

            bool keySet = change is KeyChange.KeySetter or KeyChange.SetKey or KeyChange.GenerateKey;
            var kept = new List<(BlockCipherMode Mode, bool Encrypting, BlockCipher Handle)>();
            foreach (BlockCipherMode mode in new[] { BlockCipherMode.Ecb, BlockCipherMode.Cbc })
            {
                foreach (bool encrypting in new[] { true, false })
                {
                    if (cached.PeekCachedHandle(mode, encrypting) is { } handle)
                    {
                        Assert.True(keySet, $"{mode} {(encrypting ? "encryption" : "decryption")} handle still cached after {change}");
                        kept.Add((mode, encrypting, handle));
                    }
                }
            }

            // A kept handle is used directly through the seam: it must give stock's output under the new key (which is not
            // the old one, checked below).
            if (kept.Count > 0)
            {
                using Aes stockNew = TestUtil.Stock(cached.Key);
                foreach ((BlockCipherMode mode, bool encrypting, BlockCipher handle) in kept)
                {
                    byte[] block = pt.AsSpan(0, 32).ToArray();
                    byte[] output = new byte[32];
                    Assert.True(handle.TryTransform(mode == BlockCipherMode.Cbc ? s_iv : [], block, output));
                    byte[] expected = (mode, encrypting) switch
                    {
                        (BlockCipherMode.Ecb, true) => stockNew.EncryptEcb(block, PaddingMode.None),
                        (BlockCipherMode.Ecb, false) => stockNew.DecryptEcb(block, PaddingMode.None),
                        (_, true) => stockNew.EncryptCbc(block, s_iv, PaddingMode.None),
                        _ => stockNew.DecryptCbc(block, s_iv, PaddingMode.None),
                    };
                    Assert.Equal(expected, output);
                }
            }

            byte[]? keyBefore = readKeyFirst ? cached.Key : null;
            byte[] ecb = cached.EncryptEcb(pt, PaddingMode.PKCS7);
            byte[] cbc = cached.EncryptCbc(pt, s_iv);
            byte[] newKey = cached.Key;
            if (keyBefore is not null)
            {
                Assert.Equal(keyBefore, newKey);
            }

            if (explicitKey is not null)
            {
                Assert.Equal(explicitKey, newKey);
            }

            Assert.NotEqual(oldKey, newKey);
            using Aes stock = TestUtil.Stock(newKey);
            Assert.Equal(stock.EncryptEcb(pt, PaddingMode.PKCS7), ecb);
            Assert.Equal(stock.EncryptCbc(pt, s_iv), cbc);
            Assert.Equal(pt, cached.DecryptEcb(stock.EncryptEcb(pt, PaddingMode.ANSIX923), PaddingMode.ANSIX923));
            Assert.Equal(pt, cached.DecryptCbc(stock.EncryptCbc(pt, s_iv), s_iv));
            Assert.Equal(created + 4 - kept.Count, cached.HandleCreations);
        }
        finally
        {
            cached.Dispose();
        }
    }
}
