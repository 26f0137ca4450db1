using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Operations;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// RFC 3394 at run time: allocations of warm calls, several threads on one instance, a native failure part way
/// through (on the instance and in the core), all checked against the RFC 3394 section 4 vectors.
/// </summary>
public sealed class Rfc3394RuntimeTests
{
    [Theory]
    [InlineData(16)]
    [InlineData(32)]
    [InlineData(4096)]
    public void Warm_span_overloads_allocate_nothing(int length)
    {
        using var aes = new CachedAes { Key = RandomNumberGenerator.GetBytes(32) };
        byte[] plaintext = RandomNumberGenerator.GetBytes(length);
        byte[] wrapped = new byte[CachedAes.GetKeyWrapLength(length)];
        byte[] unwrapped = new byte[length];

        // Warm: both ECB handles created, code jitted.
        aes.EncryptKeyWrap(plaintext, wrapped);
        _ = aes.DecryptKeyWrap(wrapped, unwrapped);
        _ = aes.TryDecryptKeyWrap(wrapped, unwrapped, out _);

        Assert.Equal(0, TestUtil.AllocatedWhenWarm(() => aes.EncryptKeyWrap(plaintext, wrapped)));
        Assert.Equal(0, TestUtil.AllocatedWhenWarm(() => _ = aes.DecryptKeyWrap(wrapped, unwrapped)));
        Assert.Equal(0, TestUtil.AllocatedWhenWarm(() => _ = aes.TryDecryptKeyWrap(wrapped, unwrapped, out _)));
        Assert.Equal(plaintext, unwrapped);
    }

    [Theory]
    [InlineData(16)]
    [InlineData(32)]
    [InlineData(4096)]
    public void Array_returning_overloads_allocate_only_the_result(int length)
    {
        using var aes = new CachedAes { Key = RandomNumberGenerator.GetBytes(32) };
        byte[] plaintext = RandomNumberGenerator.GetBytes(length);
        byte[] wrapped = aes.EncryptKeyWrap(plaintext);
        _ = aes.DecryptKeyWrap(wrapped);

        // The cost of one result array, calibrated on this runtime rather than assumed.
        long wrapArray = TestUtil.AllocatedWhenWarm(() => _ = new byte[length + 8]);
        long keyArray = TestUtil.AllocatedWhenWarm(() => _ = new byte[length]);

        Assert.Equal(wrapArray, TestUtil.AllocatedWhenWarm(() => _ = aes.EncryptKeyWrap(plaintext)));
        Assert.Equal(wrapArray, TestUtil.AllocatedWhenWarm(() => _ = aes.EncryptKeyWrap(plaintext.AsSpan())));
        Assert.Equal(keyArray, TestUtil.AllocatedWhenWarm(() => _ = aes.DecryptKeyWrap(wrapped)));
        Assert.Equal(keyArray, TestUtil.AllocatedWhenWarm(() => _ = aes.DecryptKeyWrap(wrapped.AsSpan())));
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Several_threads_on_one_instance_get_the_RFC_results(string backend)
    {
        // The three RFC examples under the 256-bit KEK: 16, 24 and 32 bytes of key data.
        List<Rfc3394VectorTests.Rfc3394Vector> vectors = Rfc3394VectorTests.Read().Where(v => v.Kek.Length == 32).ToList();
        Assert.Equal(3, vectors.Count);
        Assert.All(vectors, v => Assert.Equal(vectors[0].Kek, v.Kek));

        const int Threads = 4;
        const int Calls = 2000;
        using CachedAes aes = BackendData.Create(backend, vectors[0].Kek);
        var errors = new ConcurrentQueue<string>();
        int successes = 0;
        using var barrier = new Barrier(Threads);
        var threads = new Thread[Threads];

        for (int t = 0; t < Threads; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var random = new Random(seed);
                barrier.SignalAndWait();

                for (int i = 0; i < Calls; i++)
                {
                    Rfc3394VectorTests.Rfc3394Vector v = vectors[random.Next(vectors.Count)];
                    int overload = random.Next(7);

                    try
                    {
                        (byte[] expected, byte[] actual) = Run(aes, v, overload);

                        if (!expected.AsSpan().SequenceEqual(actual))
                        {
                            errors.Enqueue($"overload {overload}, {v.Data.Length} bytes: wrong result {TestUtil.Hex(actual)}");
                        }

                        Interlocked.Increment(ref successes);
                    }
#pragma warning disable CA1031 // every outcome is recorded
                    catch (Exception e)
#pragma warning restore CA1031
                    {
                        errors.Enqueue($"overload {overload}: {e}");
                    }
                }
            });
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.True(errors.IsEmpty, string.Join(Environment.NewLine, errors.Take(20)));
        Assert.Equal(Threads * Calls, successes);

        // Every call released the instance: each overload still works afterwards.
        for (int overload = 0; overload < 7; overload++)
        {
            foreach (Rfc3394VectorTests.Rfc3394Vector v in vectors)
            {
                (byte[] expected, byte[] actual) = Run(aes, v, overload);
                Assert.Equal(expected, actual);
            }
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_native_failure_part_way_clears_the_destination_drops_the_handle_and_the_next_call_works(string backend)
    {
        Rfc3394VectorTests.Rfc3394Vector v = Rfc3394VectorTests.Read().Single(r => r.Data.Length == 32);
        var faults = new Backends.FaultInjectingBackend(BackendData.Backend(backend));
        using var aes = new CachedAes(faults) { Key = v.Kek };

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): one wrap first, so that
        // the calls below cache their handles.
        Assert.Equal(v.Wrapped, Call(aes, true, v.Data, new byte[v.Wrapped.Length]));
        Assert.Null(aes.PeekCachedHandle(BlockCipherMode.Ecb, encrypting: true));

        foreach (bool encrypting in new[] { true, false })
        {
            byte[] input = encrypting ? v.Data : v.Wrapped;
            byte[] expected = encrypting ? v.Wrapped : v.Data;
            Assert.Equal(expected, Call(aes, encrypting, input, new byte[expected.Length]));
            BlockCipher? handle = aes.PeekCachedHandle(BlockCipherMode.Ecb, encrypting);
            Assert.NotNull(handle);

            // The next AES step fails like a native call.
            faults.FailNextTransform();
            byte[] destination = TestUtil.Filled(expected.Length);
            Assert.Throws<CryptographicException>(() => Call(aes, encrypting, input, destination));
            Assert.True(destination.AsSpan().IndexOfAnyExcept((byte)0) < 0, $"{backend}, encrypting={encrypting}: destination not cleared: {TestUtil.Hex(destination)}");
            Assert.NotSame(handle, aes.PeekCachedHandle(BlockCipherMode.Ecb, encrypting));

            Assert.Equal(expected, Call(aes, encrypting, input, new byte[expected.Length]));
        }
    }

    [Theory]
    [InlineData(16, 0)]
    [InlineData(32, 0)]
    [InlineData(32, 5)]
    [InlineData(32, 23)]
    public void Core_failure_at_any_step_propagates_and_leaves_the_destination_zero(int length, int failAt)
    {
        ReadOnlySpan<byte> iv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];
        byte[] data = Enumerable.Range(1, length).Select(i => (byte)i).ToArray();
        byte[] wrapped = TestUtil.Filled(length + 8);
        var failingEncryptor = new ToyBlockCipher(4, encrypting: true) { FailAtCall = failAt };
        byte[] ivArray = iv.ToArray();
        var e = Assert.Throws<CryptographicException>(() => KeyWrap.Wrap(failingEncryptor, ivArray, data, wrapped));
        Assert.Equal("Simulated native failure.", e.Message);
        Assert.All(wrapped, b => Assert.Equal(0, b));

        KeyWrap.Wrap(new ToyBlockCipher(4, encrypting: true), iv, data, wrapped);
        byte[] unwrapped = TestUtil.Filled(length);
        var failingDecryptor = new ToyBlockCipher(4, encrypting: false) { FailAtCall = failAt };
        e = Assert.Throws<CryptographicException>(() => KeyWrap.Unwrap(failingDecryptor, ivArray, wrapped, unwrapped));
        Assert.Equal("Simulated native failure.", e.Message);
        Assert.All(unwrapped, b => Assert.Equal(0, b));

        // The same handles without a failure round-trip, so the failure above is the injected one.
        KeyWrap.Unwrap(new ToyBlockCipher(4, encrypting: false), iv, wrapped, unwrapped);
        Assert.Equal(data, unwrapped);
    }

    private static (byte[] Expected, byte[] Actual) Run(CachedAes aes, Rfc3394VectorTests.Rfc3394Vector v, int overload)
    {
        switch (overload)
        {
            case 0:
                return (v.Wrapped, aes.EncryptKeyWrap(v.Data));
            case 1:
                return (v.Wrapped, aes.EncryptKeyWrap(v.Data.AsSpan()));
            case 2:
            {
                byte[] destination = new byte[v.Wrapped.Length];
                aes.EncryptKeyWrap(v.Data, destination);
                return (v.Wrapped, destination);
            }

            case 3:
                return (v.Data, aes.DecryptKeyWrap(v.Wrapped));
            case 4:
                return (v.Data, aes.DecryptKeyWrap(v.Wrapped.AsSpan()));
            case 5:
            {
                byte[] destination = new byte[v.Data.Length];
                int written = aes.DecryptKeyWrap(v.Wrapped, destination);
                return (v.Data, destination.AsSpan(0, written).ToArray());
            }

            default:
            {
                byte[] destination = new byte[v.Data.Length];
                return aes.TryDecryptKeyWrap(v.Wrapped, destination, out int written)
                    ? (v.Data, destination.AsSpan(0, written).ToArray())
                    : (v.Data, []);
            }
        }
    }

    private static byte[] Call(CachedAes aes, bool encrypting, byte[] input, byte[] destination)
    {
        if (encrypting)
        {
            aes.EncryptKeyWrap(input, destination);
            return destination;
        }

        Assert.True(aes.TryDecryptKeyWrap(input, destination, out int written));
        Assert.Equal(destination.Length, written);
        return destination;
    }
}
