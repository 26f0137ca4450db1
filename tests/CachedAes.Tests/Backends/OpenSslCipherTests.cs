using System;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.OpenSsl;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// What the OpenSSL handle relies on from libcrypto, checked against the real library: a re-key restarts a CBC context
/// at the chaining block the handle tracks because the handle passes that IV itself (OpenSSL promises nothing about
/// the IV of a re-key without one), and a key of no AES size is never handed to a re-key.
/// </summary>
[SupportedOSPlatform("linux")]
public static unsafe class OpenSslCipherTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("000102030405060708090a0b0c0d0e0f");

    private static OpenSslBackend NewBackend()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? backend, out string? reason), reason);
        return (OpenSslBackend)backend;
    }

    /// <summary>
    /// The context is given a non-zero IV behind the handle's back (<c>EVP_CipherInit_ex</c> with only an IV, which OpenSSL
    /// 3 also records as the IV a re-key without one restores): the state a provider leaves when it restores another
    /// IV than the first, or none (OpenSSL's own providers before 3.0.0's fix for issue 14704, third-party providers such
    /// as wolfProvider before January 2025). A re-key that passes no IV then starts the next message from that IV, and
    /// its first block comes out wrong; one that passes the IV its chaining block records gives stock's bytes.
    /// </summary>
    [OpenSslTheory]
    [InlineData(true, 32)]
    [InlineData(false, 32)]
    [InlineData(true, 16)]
    [InlineData(false, 24)]
    public static void A_rekeyed_cbc_context_starts_each_message_at_its_iv_whatever_iv_the_provider_would_restore(bool encrypting, int keySize)
    {
        OpenSslBackend backend = NewBackend();
        byte[] first = RandomNumberGenerator.GetBytes(keySize);
        byte[] second = RandomNumberGenerator.GetBytes(keySize);
        byte[] data = RandomNumberGenerator.GetBytes(64);
        var handle = (OpenSslCipher)backend.Create(BlockCipherMode.Cbc, encrypting, first);
        try
        {
            byte[] stale = RandomNumberGenerator.GetBytes(16);
            fixed (byte* iv = stale)
            {
                Assert.Equal(1, Libcrypto.EVP_CipherInit_ex(handle.Context, IntPtr.Zero, IntPtr.Zero, null, iv, -1));
            }

            Assert.True(handle.TryRekey(second));

            byte[] output = new byte[data.Length];
            Assert.True(handle.TryTransform(s_iv, data, output));
            Assert.Equal(Stock.Cbc(second, s_iv, data, encrypting), output);
        }
        finally
        {
            handle.Release();
        }
    }

    /// <summary>
    /// A re-key picks the cipher by key length: a length that is no AES key size must be refused, not mapped to a cipher
    /// (20 bytes would re-key AES-128 with the first 16, 8 bytes would index the wrong cipher and read past the key).
    /// The handle stays usable with its old key.
    /// </summary>
    [OpenSslTheory]
    [InlineData(false, 20)]
    [InlineData(true, 20)]
    [InlineData(true, 8)]
    [InlineData(false, 40)]
    [InlineData(true, 0)]
    public static void A_rekey_with_a_key_of_no_aes_size_is_refused_and_the_handle_keeps_its_key(bool cbc, int length)
    {
        BlockCipherMode mode = cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        OpenSslBackend backend = NewBackend();
        byte[] key = RandomNumberGenerator.GetBytes(16);
        byte[] data = RandomNumberGenerator.GetBytes(32);
        byte[] iv = mode == BlockCipherMode.Cbc ? s_iv : [];
        BlockCipher handle = backend.Create(mode, encrypting: true, key);
        try
        {
            Assert.False(handle.TryRekey(RandomNumberGenerator.GetBytes(length)));
            Assert.False(handle.IsFaulted);

            byte[] output = new byte[data.Length];
            Assert.True(handle.TryTransform(iv, data, output));
            Assert.Equal(mode == BlockCipherMode.Cbc ? Stock.Cbc(key, iv, data, true) : Stock.Ecb(key, data, true), output);
        }
        finally
        {
            handle.Release();
        }
    }
}
