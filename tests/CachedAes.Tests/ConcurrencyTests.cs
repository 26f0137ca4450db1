using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The concurrency guard: concurrent use of one instance either works exactly like stock or throws the documented
/// CryptographicException; it never yields wrong bytes or a stale key.
/// </summary>
public class ConcurrencyTests
{
    private const int Threads = 4;
    private static readonly byte[] s_iv = Convert.FromHexString("1f1e1d1c1b1a19181716151413121110");

    private sealed record Op(int Kind, byte[] Input, byte[] Expected);

    private static byte[] Execute(SymmetricAlgorithm a, int kind, byte[] input) => kind switch
    {
        0 => a.EncryptEcb(input, PaddingMode.PKCS7),
        1 => a.DecryptEcb(input, PaddingMode.PKCS7),
        2 => a.EncryptCbc(input, s_iv, PaddingMode.PKCS7),
        3 => a.DecryptCbc(input, s_iv, PaddingMode.PKCS7),
        4 => a.EncryptCfb(input, s_iv, PaddingMode.None, 8),
        _ => a.DecryptCfb(input, s_iv, PaddingMode.None, 8),
    };

    private static bool IsGuardException(Exception e) =>
        e is CryptographicException && e.Message == TestUtil.ConcurrencyMessage;

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Hammering_one_instance_gives_stock_bytes_or_the_documented_exception(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        var ops = new List<Op>();
        var rng = new Random(77);
        using (Aes stock = TestUtil.Stock(key))
        {
            for (int i = 0; i < 96; i++)
            {
                int kind = i % (BackendData.StockCfbWorks ? 6 : 4); // kinds 4 and 5 are CFB
                byte[] data = TestUtil.Random(rng, rng.Next(0, 300));
                byte[] input = kind switch
                {
                    1 => stock.EncryptEcb(data, PaddingMode.PKCS7),
                    3 => stock.EncryptCbc(data, s_iv, PaddingMode.PKCS7),
                    _ => data,
                };
                ops.Add(new Op(kind, input, Execute(stock, kind, input)));
            }
        }

        using CachedAes cached = BackendData.Create(backend, key);
        var errors = new ConcurrentQueue<string>();
        int successes = 0, rejections = 0;
        using var barrier = new Barrier(Threads);
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var r = new Random(seed);
                barrier.SignalAndWait();
                for (int i = 0; i < 3000; i++)
                {
                    Op op = ops[r.Next(ops.Count)];
                    try
                    {
                        byte[] got = Execute(cached, op.Kind, op.Input);
                        if (!got.AsSpan().SequenceEqual(op.Expected))
                        {
                            errors.Enqueue($"kind {op.Kind}, {op.Input.Length} bytes: wrong result");
                        }

                        Interlocked.Increment(ref successes);
                    }
#pragma warning disable CA1031 // every outcome is recorded
                    catch (Exception e)
#pragma warning restore CA1031
                    {
                        if (IsGuardException(e))
                        {
                            Interlocked.Increment(ref rejections);
                        }
                        else
                        {
                            errors.Enqueue($"kind {op.Kind}: unexpected {e}");
                        }
                    }
                }
            });
            threads[t].Start();
        }

        foreach (Thread th in threads)
        {
            th.Join();
        }

        Assert.True(errors.IsEmpty, string.Join(Environment.NewLine, errors));
        Assert.Equal(Threads * 3000, successes + rejections);
        Assert.True(successes > 0);

        // The guard was released every time: the instance still works for every operation.
        foreach (Op op in ops)
        {
            Assert.Equal(op.Expected, Execute(cached, op.Kind, op.Input));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Key_changes_during_encryption_never_leave_a_stale_key_in_use(string backend)
    {
        const int KeyCount = 300;
        byte[] pt = Convert.FromHexString("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
        var keys = new byte[KeyCount][];
        var byEcb = new Dictionary<string, int>(StringComparer.Ordinal);
        var byCbc = new Dictionary<string, int>(StringComparer.Ordinal);
        for (int i = 0; i < KeyCount; i++)
        {
            keys[i] = RandomNumberGenerator.GetBytes(i % 3 == 0 ? 16 : 32);
            using Aes stock = TestUtil.Stock(keys[i]);
            byEcb.Add(Convert.ToHexString(stock.EncryptEcb(pt, PaddingMode.None)), i);
            byCbc.Add(Convert.ToHexString(stock.EncryptCbc(pt, s_iv, PaddingMode.None)), i);
        }

        using CachedAes cached = BackendData.Create(backend, keys[0]);
        var setOk = new bool[KeyCount];
        setOk[0] = true;
        int published = 0; // highest key index whose SetKey/Key setter has returned
        int done = 0;
        var errors = new ConcurrentQueue<string>();
        var observed = new ConcurrentQueue<int>();

        var workers = new List<Thread>();
        for (int t = 0; t < Threads - 1; t++)
        {
            bool useCbc = t % 2 == 1;
            var worker = new Thread(() =>
            {
                while (Volatile.Read(ref done) == 0)
                {
                    int seen = Volatile.Read(ref published);
                    try
                    {
                        byte[] ct = useCbc ? cached.EncryptCbc(pt, s_iv, PaddingMode.None) : cached.EncryptEcb(pt, PaddingMode.None);
                        if (!(useCbc ? byCbc : byEcb).TryGetValue(Convert.ToHexString(ct), out int used))
                        {
                            errors.Enqueue("a result matches no key that was ever set");
                        }
                        else if (used < seen)
                        {
                            errors.Enqueue($"stale key: used key #{used} after key #{seen} had been set");
                        }
                        else
                        {
                            observed.Enqueue(used);
                        }
                    }
#pragma warning disable CA1031
                    catch (Exception e) when (!IsGuardException(e))
#pragma warning restore CA1031
                    {
                        errors.Enqueue("unexpected " + e);
                    }
                    catch (CryptographicException)
                    {
                    }
                }
            });
            worker.Start();
            workers.Add(worker);
        }

        for (int i = 1; i < KeyCount; i++)
        {
            for (int attempt = 0; ; attempt++)
            {
                try
                {
                    if (i % 2 == 0)
                    {
                        cached.SetKey(keys[i]);
                    }
                    else
                    {
                        cached.Key = keys[i];
                    }

                    break;
                }
                catch (CryptographicException e) when (IsGuardException(e) && attempt < 100_000)
                {
                    Thread.Yield();
                }
            }

            setOk[i] = true;
            Volatile.Write(ref published, i);
            if (i % 16 == 0)
            {
                Thread.Sleep(1);
            }
        }

        Volatile.Write(ref done, 1);
        foreach (Thread w in workers)
        {
            w.Join();
        }

        Assert.True(errors.IsEmpty, string.Join(Environment.NewLine, errors));
        foreach (int used in observed)
        {
            Assert.True(setOk[used], $"key #{used} was used but never set");
        }

        // After the key changer finished, a call uses the final key.
        using Aes final = TestUtil.Stock(keys[KeyCount - 1]);
        Assert.Equal(final.EncryptEcb(pt, PaddingMode.None), cached.EncryptEcb(pt, PaddingMode.None));
        Assert.Equal(final.EncryptCbc(pt, s_iv, PaddingMode.None), cached.EncryptCbc(pt, s_iv, PaddingMode.None));
        Assert.Equal(keys[KeyCount - 1], cached.Key);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public async Task Sequential_use_from_different_threads_works(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(24);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        for (int i = 0; i < 40; i++)
        {
            byte[] pt = RandomNumberGenerator.GetBytes(i * 7);
            int kind = i % (BackendData.StockCfbWorks ? 6 : 4); // kinds 4 and 5 are CFB
            byte[] input = kind switch
            {
                1 => stock.EncryptEcb(pt, PaddingMode.PKCS7),
                3 => stock.EncryptCbc(pt, s_iv, PaddingMode.PKCS7),
                _ => pt,
            };
            byte[] expected = Execute(stock, kind, input);
            byte[] got = await Task.Run(() => Execute(cached, kind, input));
            Assert.Equal(expected, got);
            if (i % 10 == 9)
            {
                byte[] newKey = RandomNumberGenerator.GetBytes(16);
                await Task.Run(() => cached.SetKey(newKey));
                stock.Key = newKey;
            }
        }
    }
}
