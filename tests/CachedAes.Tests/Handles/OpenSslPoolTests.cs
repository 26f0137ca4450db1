using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The OpenSSL backend's pool of empty contexts: what goes back is cleansed (holds no key), what comes out is keyed
/// for its new owner only, and the pool is bounded and trimmed. Each test uses a backend (and pool) of its own.
/// </summary>
[SupportedOSPlatform("linux")]
public static unsafe partial class OpenSslPoolTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("00112233445566778899aabbccddeeff");

    [LibraryImport("libcrypto.so.3")]
    private static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);

    [LibraryImport("libcrypto.so.3")]
    private static partial void ERR_clear_error();

    private static OpenSslBackend NewBackend()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? backend, out string? reason), reason);
        return (OpenSslBackend)backend;
    }

    [OpenSslFact]
    public static void A_context_returned_by_one_instance_is_cleansed_and_rekeyed_for_the_next_only()
    {
        OpenSslBackend backend = NewBackend();
        byte[] keyA = RandomNumberGenerator.GetBytes(32);
        byte[] keyB = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(64);
        using Aes stockA = TestUtil.Stock(keyA);
        using Aes stockB = TestUtil.Stock(keyB);

        // A key's first handle is given back (reset and pooled) after its call (KeyEpoch.Handles.cs, _cachesHandles), and
        // its second call takes that context out of the pool again and caches it: each instance below makes two calls.
        var a = new CachedAes(backend) { Key = keyA };
        Assert.Equal(stockA.EncryptCbc(plaintext, s_iv, PaddingMode.None), a.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        Assert.Equal(1, backend.Pool.Count);
        Assert.Equal(stockA.EncryptCbc(plaintext, s_iv, PaddingMode.None), a.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        BlockCipher used = a.PeekCachedHandle(BlockCipherMode.Cbc, encrypting: true)!;
        Assert.NotNull(used);
        Assert.Equal(0, backend.Pool.Count);
        Assert.Equal(1, backend.Pool.LiveContexts);

        a.Dispose();
        Assert.Equal(1, backend.Pool.Count);
        Assert.Equal(0, InUse(backend));

        // The pooled context has no key any more: a transform on it fails inside OpenSSL.
        AssertHoldsNoKey(((OpenSslCipher)used).Context);

        // Instance B gets the same context (now ECB decrypt, another key) and only B's key works on it.
        using var b = new CachedAes(backend) { Key = keyB };
        byte[] ciphertextB = stockB.EncryptEcb(plaintext, PaddingMode.None);
        Assert.Equal(plaintext, b.DecryptEcb(ciphertextB, PaddingMode.None));
        Assert.Equal(plaintext, b.DecryptEcb(ciphertextB, PaddingMode.None));
        Assert.Same(used, b.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: false));
        Assert.Equal(0, backend.Pool.Count);
        Assert.NotEqual(plaintext, b.DecryptEcb(stockA.EncryptEcb(plaintext, PaddingMode.None), PaddingMode.None));

        // And as an encryptor for B it produces B's ciphertext, never A's.
        b.Dispose();
        using var b2 = new CachedAes(backend) { Key = keyB };
        Assert.Equal(ciphertextB, b2.EncryptEcb(plaintext, PaddingMode.None));
        byte[] produced = b2.EncryptEcb(plaintext, PaddingMode.None);
        Assert.Same(used, b2.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));
        Assert.Equal(ciphertextB, produced);
        Assert.NotEqual(stockA.EncryptEcb(plaintext, PaddingMode.None), produced);
    }

    [OpenSslFact]
    public static void Every_release_cleanses_and_the_pool_stays_within_its_capacity()
    {
        OpenSslBackend backend = NewBackend();
        var instances = new List<CachedAes>();
        int handles = 0;
        for (int i = 0; i < OpenSslContextPool.Capacity + 5; i++)
        {
            // The key's first handle (the first ECB encryption's) goes back to the pool after its call (KeyEpoch.Handles.cs,
            // _cachesHandles), and the second takes it out again: three contexts in use per instance.
            var aes = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
            aes.EncryptEcb(new byte[16], PaddingMode.PKCS7);
            aes.EncryptEcb(new byte[16], PaddingMode.PKCS7);
            aes.DecryptCbc(aes.EncryptCbc(new byte[40], s_iv), s_iv);
            handles += 3;
            instances.Add(aes);
        }

        Assert.Equal(handles, InUse(backend));
        Assert.Equal(handles, backend.Pool.LiveContexts);
        instances.ForEach(a => a.Dispose());

        Assert.Equal(0, InUse(backend));
        Assert.Equal(OpenSslContextPool.Capacity, backend.Pool.Count);

        // Every context that went back was reset first: none in the pool can transform anything.
        Assert.All(backend.Pool.PooledContexts, AssertHoldsNoKey);
        Assert.Equal(OpenSslContextPool.Capacity, backend.Pool.LiveContexts);

        // Trimming frees idle contexts: nothing is idle long enough yet, then everything when asked to free all.
        Assert.Equal(0, backend.Pool.Trim(OpenSslContextPool.IdleMilliseconds));
        Assert.Equal(OpenSslContextPool.Capacity, backend.Pool.Trim(0));
        Assert.Equal(0, backend.Pool.Count);
        Assert.Equal(0, backend.Pool.LiveContexts);
    }

    [OpenSslFact]
    public static void A_faulted_context_is_freed_not_pooled()
    {
        OpenSslBackend backend = NewBackend();
        var aes = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };

        // The key's first handle is given back (pooled) after its call (KeyEpoch.Handles.cs, _cachesHandles); the second
        // call takes that context out of the pool again and caches it.
        aes.EncryptEcb(new byte[16], PaddingMode.None);
        aes.EncryptEcb(new byte[16], PaddingMode.None);
        var handle = (OpenSslCipher)aes.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true)!;
        Assert.Equal(1, OpenSslFailureTests.ResetContext(handle.Context));

        Assert.Throws<CryptographicException>(() => aes.EncryptEcb(new byte[16], PaddingMode.None));
        Assert.True(handle.IsFaulted);
        Assert.Equal(0, backend.Pool.Count);
        Assert.Equal(0, backend.Pool.LiveContexts);
        aes.Dispose();
        Assert.Equal(0, InUse(backend));
    }

    [OpenSslFact]
    public static void Each_gen2_collection_runs_the_pools_callback_and_an_unused_pool_is_collected()
    {
        // The callback (a finalizer that re-registers itself) stamps the pool's clock at every gen-2 collection: a
        // context returned after a forced collection records a time no earlier than just before it.
        OpenSslBackend backend = NewBackend();
        System.Threading.Thread.Sleep(30); // the pool's clock starts at its creation: later readings differ from it
        long beforeCollection = Environment.TickCount64;
        long stamped = 0;
        for (int i = 0; i < 3 && stamped < beforeCollection; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            var aes = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
            aes.EncryptEcb(new byte[16], PaddingMode.None);
            aes.Dispose();
            OpenSslCipher pooled = backend.Pool.TryRent()!;
            stamped = pooled.IdleSince;
            Assert.True(backend.Pool.TryReturn(pooled));
        }

        Assert.True(stamped >= beforeCollection, $"idle since {stamped}, collection at {beforeCollection} or later");
        Assert.Equal(1, backend.Pool.Trim(0));

        // The callback holds its pool weakly: a pool nobody uses is collected, and the callbacks after that (which then
        // find no pool and stop) neither keep it alive nor fail.
        WeakReference unused = DropABackend();
        for (int i = 0; i < 5 && unused.IsAlive; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.False(unused.IsAlive);
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    [OpenSslFact]
    public static void A_pool_collected_with_contexts_in_it_frees_them()
    {
        // Three instances disposed: their contexts wait, keyless, in the pool of a backend that is then dropped. Its last
        // gen-2 callback, finding the pool gone, frees them (nothing else can reach them any more).
        (WeakReference pool, LiveCount contexts) = DropABackendWithPooledContexts(3);
        Assert.Equal(3, contexts.Value);
        for (int i = 0; i < 10 && (pool.IsAlive || contexts.Value != 0); i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        Assert.False(pool.IsAlive);
        Assert.Equal(0, contexts.Value);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static WeakReference DropABackend() => new(NewBackend().Pool);

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static (WeakReference Pool, LiveCount Contexts) DropABackendWithPooledContexts(int count)
    {
        OpenSslBackend backend = NewBackend();
        var instances = new List<CachedAes>();
        for (int i = 0; i < count; i++)
        {
            // Two calls: the key's first handle goes back to the pool after its call (KeyEpoch.Handles.cs, _cachesHandles),
            // and the second takes it out again and caches it, so each instance keeps a context of its own.
            var aes = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(16) };
            aes.EncryptEcb(new byte[16], PaddingMode.None);
            aes.EncryptEcb(new byte[16], PaddingMode.None);
            instances.Add(aes);
        }

        instances.ForEach(aes => aes.Dispose());
        Assert.Equal(count, backend.Pool.Count);
        return (new WeakReference(backend.Pool), backend.Pool.Contexts);
    }

    // Contexts that hold a key: every native context of the backend that is not waiting, keyless, in its pool.
    private static int InUse(OpenSslBackend backend) => backend.Pool.LiveContexts - backend.Pool.Count;

    private static void AssertHoldsNoKey(IntPtr context)
    {
        byte* block = stackalloc byte[16];
        int written;
        int result = EVP_CipherUpdate(context, block, &written, block, 16);
        ERR_clear_error();
        Assert.NotEqual(1, result);
    }
}
