using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// A native failure (here: a cached handle disposed behind the instance's back) surfaces as CryptographicException,
/// drops the handle, leaves no plaintext in the destination, and the next call works.
/// </summary>
public class NativeFailureTests
{
    private static readonly byte[] s_iv = Convert.FromHexString("0f0e0d0c0b0a09080706050403020100");

    public static TheoryData<string, bool, bool> Cases()
    {
        var data = new TheoryData<string, bool, bool>();
        foreach (string backend in BackendData.All)
        {
            data.Add(backend, false, true);
            data.Add(backend, false, false);
            data.Add(backend, true, true);
            data.Add(backend, true, false);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void Disposed_handle_fails_once_then_is_replaced(string backend, bool cbc, bool encrypting)
    {
        byte[] key = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        foreach (int length in new[] { 16, 48, 4096 })
        {
            byte[] pt = RandomNumberGenerator.GetBytes(length);
            byte[] ct = cbc ? stock.EncryptCbc(pt, s_iv, PaddingMode.None) : stock.EncryptEcb(pt, PaddingMode.None);
            byte[] input = encrypting ? pt : ct;
            byte[] expected = encrypting ? ct : pt;

            Assert.Equal(expected, Call(cached, cbc, encrypting, input, new byte[length]));

            // Dispose every handle this direction may have used (short CBC may run on the ECB handle).
            IBlockCipher? ecbHandle = cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting);
            IBlockCipher? cbcHandle = cbc ? cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting) : null;
            Assert.True(ecbHandle is not null || cbcHandle is not null, "no cached handle after a call");
            ecbHandle?.Dispose();
            cbcHandle?.Dispose();

            byte[] dest = TestUtil.Filled(length + 16);
            byte[] before = (byte[])dest.Clone();
            Assert.Throws<CryptographicException>(() => Call(cached, cbc, encrypting, input, dest));
            if (!encrypting)
            {
                TestUtil.AssertNoNewData(before, dest, $"{backend} cbc={cbc} length={length}");
            }

            // The failed handle is dropped (at least one of the disposed handles is no longer cached).
            bool ecbDropped = ecbHandle is not null && !ReferenceEquals(ecbHandle, cached.PeekCachedHandle(BlockCipherMode.Ecb, encrypting));
            bool cbcDropped = cbcHandle is not null && !ReferenceEquals(cbcHandle, cached.PeekCachedHandle(BlockCipherMode.Cbc, encrypting));
            Assert.True(ecbDropped || cbcDropped, "the failed handle is still cached");

            // The handles that were disposed may both be faulted; a call can hit the second one, once.
            byte[]? result = null;
            for (int attempt = 0; attempt < 2 && result is null; attempt++)
            {
                try
                {
                    result = Call(cached, cbc, encrypting, input, new byte[length]);
                }
                catch (CryptographicException) when (attempt == 0 && ecbHandle is not null && cbcHandle is not null)
                {
                }
            }

            Assert.Equal(expected, result);
            Assert.Equal(expected, Call(cached, cbc, encrypting, input, new byte[length]));
        }
    }

    private static byte[] Call(CachedAes aes, bool cbc, bool encrypting, byte[] input, byte[] dest)
    {
        int n = (cbc, encrypting) switch
        {
            (false, true) => aes.EncryptEcb(input, dest, PaddingMode.None),
            (false, false) => aes.TryDecryptEcb(input, dest, PaddingMode.None, out int w) ? w : -1,
            (true, true) => aes.EncryptCbc(input, s_iv, dest, PaddingMode.None),
            (true, false) => aes.TryDecryptCbc(input, s_iv, dest, out int w, PaddingMode.None) ? w : -1,
        };
        Assert.True(n >= 0, "destination unexpectedly too small");
        return dest.AsSpan(0, n).ToArray();
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Failure_during_padded_decrypt_leaves_no_plaintext(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        byte[] pt = RandomNumberGenerator.GetBytes(200);
        byte[] ct = stock.EncryptCbc(pt, s_iv, PaddingMode.PKCS7);
        Assert.Equal(pt, cached.DecryptCbc(ct, s_iv, PaddingMode.PKCS7));
        cached.PeekCachedHandle(BlockCipherMode.Ecb, false)?.Dispose();
        cached.PeekCachedHandle(BlockCipherMode.Cbc, false)?.Dispose();

        byte[] inPlace = (byte[])ct.Clone();
        Exception? e = Record.Exception(() => cached.TryDecryptCbc(inPlace, s_iv, inPlace, out _, PaddingMode.PKCS7));
        Assert.IsType<CryptographicException>(e);
        TestUtil.AssertNoNewData(ct, inPlace, "in-place decrypt after a native failure");

        for (int i = 0; i < 2; i++)
        {
            try
            {
                Assert.Equal(pt, cached.DecryptCbc(ct, s_iv, PaddingMode.PKCS7));
                break;
            }
            catch (CryptographicException) when (i == 0)
            {
                // Only if both the ECB and CBC decrypt handles existed and the first call hit only one.
            }
        }

        Assert.Equal(pt, cached.DecryptCbc(ct, s_iv, PaddingMode.PKCS7));
    }
}
