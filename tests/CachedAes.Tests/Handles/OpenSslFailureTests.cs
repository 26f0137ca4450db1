using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// A real failing OpenSSL call: the cached context is reset behind the instance's back with
/// <c>EVP_CIPHER_CTX_reset</c>, so the next <c>EVP_CipherUpdate</c> fails inside OpenSSL and pushes an error.
/// </summary>
public static partial class OpenSslFailureTests
{
    [LibraryImport("libcrypto.so.3")]
    private static partial int EVP_CIPHER_CTX_reset(IntPtr ctx);

    /// <summary>Resets a context behind its owner's back, so that the next update fails inside OpenSSL.</summary>
    internal static int ResetContext(IntPtr ctx) => EVP_CIPHER_CTX_reset(ctx);

    [OpenSslFact]
    public static void Failing_EVP_CipherUpdate_surfaces_OpenSSLs_reason_drops_the_handle_and_the_next_call_works()
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(64);
        using Aes stock = TestUtil.Stock(key);
        byte[] ciphertext = stock.EncryptEcb(plaintext, PaddingMode.None);

        using CachedAes cached = BackendData.Create("PlatformDefault", key);
        Assert.Equal(CachedAesBackend.OpenSsl, cached.Backend);

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): the second call makes
        // the one that stays.
        Assert.Equal(plaintext, cached.DecryptEcb(ciphertext, PaddingMode.None));
        Assert.Equal(plaintext, cached.DecryptEcb(ciphertext, PaddingMode.None));

        var handle = Assert.IsType<OpenSslCipher>(CountingBackend.Inner(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: false)!));
        Assert.Equal(1, EVP_CIPHER_CTX_reset(handle.Context));

        byte[] destination = TestUtil.Filled(64);
        byte[] before = (byte[])destination.Clone();
        var e = Assert.Throws<CryptographicException>(() => cached.DecryptEcb(ciphertext, destination, PaddingMode.None));

        // The message carries OpenSSL's own reason, read from the thread's error queue.
        Assert.StartsWith("OpenSSL EVP_CipherUpdate failed: error:", e.Message, StringComparison.Ordinal);
        Assert.True(handle.IsFaulted);
        Assert.Null(cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: false));
        TestUtil.AssertNoNewData(before, destination, "after a failed EVP_CipherUpdate");

        // A new context is created and gives stock's result.
        int creations = cached.HandleCreations;
        Assert.Equal(plaintext, cached.DecryptEcb(ciphertext, PaddingMode.None));
        Assert.Equal(creations + 1, cached.HandleCreations);
    }
}
