using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// A native failure (injected through the seam over every backend) surfaces as CryptographicException, releases the
/// handle instead of caching it, leaves no plaintext in the destination, and the next call works on a new handle.
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
    public void A_failed_call_releases_its_handle_and_the_next_call_works(string backend, bool cbc, bool encrypting)
    {
        byte[] key = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        var faults = new FaultInjectingBackend(BackendData.Backend(backend));
        var counted = new CountingBackend(faults);
        using var cached = new CachedAes(counted) { Key = key };
        BlockCipherMode mode = cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): one call first, so
        // that the calls below cache their handles.
        byte[] block = new byte[16];
        Call(cached, cbc, encrypting, block, new byte[16], PaddingMode.None);
        Assert.Null(cached.PeekCachedHandle(mode, encrypting));
        foreach (int length in new[] { 16, 48, 208, 4096 })
        {
            foreach (PaddingMode padding in new[] { PaddingMode.None, PaddingMode.PKCS7 })
            {
                string context = $"{backend} {mode} encrypting={encrypting} {length} B {padding}";
                byte[] pt = RandomNumberGenerator.GetBytes(length);
                byte[] ct = cbc ? stock.EncryptCbc(pt, s_iv, padding) : stock.EncryptEcb(pt, padding);
                byte[] input = encrypting ? pt : ct;
                byte[] expected = encrypting ? ct : pt;

                Assert.Equal(expected, Call(cached, cbc, encrypting, input, new byte[ct.Length], padding));
                BlockCipher? healthy = cached.PeekCachedHandle(mode, encrypting);
                Assert.NotNull(healthy);
                int creations = cached.HandleCreations;

                // Every destination shape: long enough, exact, one block short (decrypt with padding), in place.
                foreach (int destinationLength in new[] { ct.Length + 16, ct.Length, ct.Length - 16 })
                {
                    if (destinationLength < (encrypting ? ct.Length : expected.Length) || destinationLength < 0)
                    {
                        continue;
                    }

                    faults.FailNextTransform();
                    byte[] destination = TestUtil.Filled(destinationLength);
                    byte[] before = (byte[])destination.Clone();
                    var e = Assert.Throws<CryptographicException>(() => Call(cached, cbc, encrypting, input, destination, padding));
                    Assert.Equal(FaultInjectingBackend.Message, e.Message);
                    TestUtil.AssertNoNewData(before, destination, context);

                    // The failed handle was released, not cached; the next call makes a new one and gives stock's bytes.
                    Assert.Null(cached.PeekCachedHandle(mode, encrypting));
                    Assert.Equal(expected, Call(cached, cbc, encrypting, input, new byte[ct.Length], padding));
                    Assert.Equal(++creations, cached.HandleCreations);
                }

                byte[] inPlace = (byte[])input.Clone();
                Array.Resize(ref inPlace, ct.Length);
                byte[] inPlaceBefore = (byte[])inPlace.Clone();
                faults.FailNextTransform();
                Assert.Throws<CryptographicException>(() => Call(cached, cbc, encrypting, inPlace, inPlace, padding, inputLength: input.Length));
                if (!encrypting)
                {
                    TestUtil.AssertNoNewData(inPlaceBefore, inPlace, context + " in place");
                }
                else
                {
                    // The plaintext was the caller's own buffer; no ciphertext or padding is left in it.
                    Assert.All(inPlace, b => Assert.Equal(0, b));
                }
            }
        }

        cached.Dispose();
        Assert.Equal(0, counted.LiveHandles);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_failure_in_a_key_wrap_step_leaves_no_plaintext_and_releases_the_handle(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        var faults = new FaultInjectingBackend(BackendData.Backend(backend));
        var counted = new CountingBackend(faults);
        using var cached = new CachedAes(counted) { Key = key };
        byte[] plaintext = RandomNumberGenerator.GetBytes(40);
        byte[] wrapped = cached.EncryptKeyWrapPadded(plaintext);

        faults.FailNextTransform();
        byte[] destination = new byte[wrapped.Length];
        Assert.Throws<CryptographicException>(() => cached.EncryptKeyWrapPadded(plaintext, destination));
        Assert.All(destination, b => Assert.Equal(0, b));

        faults.FailNextTransform();
        byte[] unwrapped = TestUtil.Filled(plaintext.Length);
        Assert.Throws<CryptographicException>(() => cached.DecryptKeyWrapPadded(wrapped, unwrapped));
        TestUtil.AssertNoNewData(TestUtil.Filled(plaintext.Length), unwrapped, "unwrap");

        Assert.Equal(wrapped, cached.EncryptKeyWrapPadded(plaintext));
        Assert.Equal(plaintext, cached.DecryptKeyWrapPadded(wrapped));
        cached.Dispose();
        Assert.Equal(0, counted.LiveHandles);
    }

    private static byte[] Call(CachedAes aes, bool cbc, bool encrypting, byte[] input, byte[] destination, PaddingMode padding, int inputLength = -1)
    {
        ReadOnlySpan<byte> source = input.AsSpan(0, inputLength < 0 ? input.Length : inputLength);
        int n = (cbc, encrypting) switch
        {
            (false, true) => aes.EncryptEcb(source, destination, padding),
            (false, false) => aes.TryDecryptEcb(source, destination, padding, out int w) ? w : -1,
            (true, true) => aes.EncryptCbc(source, s_iv, destination, padding),
            (true, false) => aes.TryDecryptCbc(source, s_iv, destination, out int w, padding) ? w : -1,
        };
        Assert.True(n >= 0, "destination unexpectedly too small");
        return destination.AsSpan(0, n).ToArray();
    }
}
