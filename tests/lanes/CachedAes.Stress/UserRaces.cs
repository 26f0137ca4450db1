using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Selection;

namespace CachedCryptography.Stress;

/// <summary>
/// The programs of issue 41 as users would write them, on the public surface only (<c>new CachedAes()</c> over the
/// process's backend), every output compared with stock's. Each returns null when it passed, else what failed. A watchdog
/// ends the process (exit code 3) when the main loop makes no progress for <see cref="HangSeconds"/>: a hang is a
/// failure, never a slow run.
/// </summary>
internal static class UserRaces
{
    private const int HangSeconds = 60;

    /// <summary>
    /// Setters racing <c>Dispose</c> with a new instance: two threads (or <c>CACHEDAES_STRESS_SETTERS</c>) set the key of
    /// the instance published in a static field, in a loop; the main thread makes a new instance, keys it, encrypts once,
    /// publishes it, spins a little and disposes the one it replaced (issue 41's hang).
    /// </summary>
    public static string? KeyDispose(double seconds)
    {
        int setters = int.TryParse(Environment.GetEnvironmentVariable("CACHEDAES_STRESS_SETTERS"), out int n) ? n : 2;
        byte[][] keys = Keys(8, 32);
        byte[] iv = RandomNumberGenerator.GetBytes(16), plaintext = RandomNumberGenerator.GetBytes(16);
        byte[][] expected = [.. keys.Select(k => StockCbc(k, plaintext, iv))];
        CachedAes current = new() { Key = keys[0] };
        bool stop = false;
        long sets = 0, rounds = 0, wrong = 0;
        var threads = Enumerable.Range(0, setters).Select(id => new Thread(() =>
        {
            int i = id;
            while (!Volatile.Read(ref stop))
            {
                Volatile.Read(ref current).Key = keys[i++ & 7];
                Interlocked.Increment(ref sets);
            }
        }) { IsBackground = true }).ToList();
        using var watchdog = Watchdog(() => Interlocked.Read(ref rounds));
        threads.ForEach(t => t.Start());
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            int k = (int)(rounds & 7);
            var next = new CachedAes { Key = keys[k] };
            if (!next.EncryptCbc(plaintext, iv).AsSpan().SequenceEqual(expected[k]))
            {
                wrong++;
            }

            CachedAes old = Interlocked.Exchange(ref current, next);
            Thread.SpinWait(50);
            old.Dispose();
            Interlocked.Increment(ref rounds);
        }

        Volatile.Write(ref stop, true);
        threads.ForEach(t => t.Join());
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"key-dispose: {setters} setters, {rounds} rounds, {sets} key sets, {wrong} outputs unlike stock's"));
        return wrong == 0 ? null : $"{wrong} new-instance outputs unlike stock's";
    }

    /// <summary>
    /// Instances dropped without <c>Dispose</c> after using two modes (so each caches a handle), on
    /// <paramref name="threads"/> threads: the resident set's growth, and the native contexts left once the load stops
    /// and collections have run.
    /// </summary>
    public static string? DroppedLoad(double seconds, int threads, long growthLimitBytes)
    {
        var pool = (ProcessBackend.Selection.Native as OpenSslBackend)?.Pool;
        byte[] iv = RandomNumberGenerator.GetBytes(16), plaintext = RandomNumberGenerator.GetBytes(32);
        long before = Resident();
        long peak = before, peakContexts = 0, messages = 0, wrong = 0;
        bool stop = false;
        var workers = Enumerable.Range(0, threads).Select(index => new Thread(() =>
        {
            byte[] key = RandomNumberGenerator.GetBytes(16);
            byte[] expected = StockEcb(key, plaintext);
            while (!Volatile.Read(ref stop))
            {
                var aes = new CachedAes { Key = key };
                if (!aes.EncryptEcb(plaintext, PaddingMode.None).AsSpan().SequenceEqual(expected))
                {
                    Interlocked.Increment(ref wrong);
                }

                _ = aes.DecryptCbc(aes.EncryptCbc(plaintext, iv), iv);
                Interlocked.Increment(ref messages);
            }
        })).ToList();
        using var watchdog = Watchdog(() => Interlocked.Read(ref messages));
        workers.ForEach(w => w.Start());
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            Thread.Sleep(100);
            peak = Math.Max(peak, Resident());
            peakContexts = Math.Max(peakContexts, pool?.LiveContexts ?? 0);
        }

        Volatile.Write(ref stop, true);
        workers.ForEach(w => w.Join());
        long atEnd = Resident();
        for (int i = 0; i < 5; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Thread.Sleep(200);
        }

        int left = pool is null ? 0 : pool.LiveContexts - pool.Count;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"dropped-load: {threads} threads, {messages} messages, resident {before >> 20} MB before, peak {peak >> 20} MB, {atEnd >> 20} MB at the end, {Resident() >> 20} MB after collections; native contexts: peak {peakContexts}, {left} in use after collections (pool holds {pool?.Count ?? 0})"));
        return wrong != 0 ? $"{wrong} outputs unlike stock's"
            : peak - before > growthLimitBytes ? $"the resident set grew by {(peak - before) >> 20} MB, over the {growthLimitBytes >> 20} MB limit"
            : left != 0 ? $"{left} native contexts still in use after the load and collections"
            : null;
    }

    /// <summary>
    /// One thread calls a transform while another disposes it and sets the instance's key (the review's first finding):
    /// every output is under the transform's key, or the call throws <see cref="ObjectDisposedException"/>.
    /// </summary>
    public static string? TransformDispose(double seconds)
    {
        byte[][] keys = Keys(2, 16);
        byte[] plaintext = RandomNumberGenerator.GetBytes(16);
        byte[][] expected = [.. keys.Select(k => StockEcb(k, plaintext))];
        using var aes = new CachedAes { Mode = CipherMode.ECB, Padding = PaddingMode.None };
        long rounds = 0, outputs = 0, disposedCalls = 0, wrong = 0;
        using var watchdog = Watchdog(() => Interlocked.Read(ref rounds));
        var clock = Stopwatch.StartNew();
        using var go = new SemaphoreSlim(0);
        using var done = new SemaphoreSlim(0);
        ICryptoTransform? transform = null;
        int next = 0;
        var disposer = new Thread(() =>
        {
            while (true)
            {
                go.Wait();
                if (Volatile.Read(ref transform) is not { } t)
                {
                    return;
                }

                t.Dispose();
                aes.Key = keys[Volatile.Read(ref next)];
                done.Release();
            }
        });
        disposer.Start();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            int k = (int)(rounds & 1);
            aes.Key = keys[k];
            Volatile.Write(ref transform, aes.CreateEncryptor());
            Volatile.Write(ref next, k ^ 1);
            go.Release();
            for (int i = 0; i < 16; i++)
            {
                try
                {
                    outputs++;
                    if (!transform!.TransformFinalBlock(plaintext, 0, 16).AsSpan().SequenceEqual(expected[k]))
                    {
                        wrong++;
                    }
                }
                catch (ObjectDisposedException)
                {
                    disposedCalls++;
                }
            }

            done.Wait();
            Interlocked.Increment(ref rounds);
        }

        Volatile.Write(ref transform, null);
        go.Release();
        disposer.Join();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"transform-dispose: {rounds} rounds, {outputs} calls, {disposedCalls} threw ObjectDisposedException, {wrong} outputs under another key"));
        return wrong == 0 ? null : $"{wrong} transform outputs under a key other than the transform's";
    }

    /// <summary>
    /// One thread sets the key from an array that another thread keeps rewriting (the review's second finding): the key
    /// the instance returns and the key its cached handles use must be one and the same.
    /// </summary>
    public static string? KeyBuffer(double seconds)
    {
        byte[][] keys = Keys(2, 32);
        byte[] shared = (byte[])keys[0].Clone();
        byte[] plaintext = RandomNumberGenerator.GetBytes(16), iv = RandomNumberGenerator.GetBytes(16);
        using var aes = new CachedAes { Key = keys[0] };
        bool stop = false;
        var writer = new Thread(() =>
        {
            int i = 0;
            while (!Volatile.Read(ref stop))
            {
                keys[i++ & 1].CopyTo(shared, 0);
            }
        });
        writer.Start();
        long rounds = 0, split = 0;
        using var watchdog = Watchdog(() => Interlocked.Read(ref rounds));
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            aes.EncryptEcb(plaintext, PaddingMode.None);
            aes.EncryptCbc(plaintext, iv, PaddingMode.None);
            aes.Key = shared;
            byte[] stored = aes.Key;
            using Aes stock = Aes.Create();
            stock.Key = stored;
            if (!stock.EncryptEcb(plaintext, PaddingMode.None).AsSpan().SequenceEqual(aes.EncryptEcb(plaintext, PaddingMode.None))
                || !stock.EncryptCbc(plaintext, iv, PaddingMode.None).AsSpan().SequenceEqual(aes.EncryptCbc(plaintext, iv, PaddingMode.None)))
            {
                split++;
            }

            Interlocked.Increment(ref rounds);
        }

        Volatile.Write(ref stop, true);
        writer.Join();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"key-buffer: {rounds} rounds, {split} instances split between two keys"));
        return split == 0 ? null : $"{split} rounds left the instance's handles under another key than the one Key returns";
    }

    // Ends the process with exit code 3 when `progress` stops moving for HangSeconds.
    private static Timer Watchdog(Func<long> progress)
    {
        long last = -1;
        var stalled = Stopwatch.StartNew();
        return new Timer(_ =>
        {
            long now = progress();
            if (now != last)
            {
                last = now;
                stalled.Restart();
            }
            else if (stalled.Elapsed.TotalSeconds > HangSeconds)
            {
                Console.WriteLine($"stress: HANG: no progress for {HangSeconds} s (at {now})");
                Console.Out.Flush();
                Environment.Exit(3);
            }
        }, null, 1000, 1000);
    }

    private static byte[][] Keys(int count, int size) => [.. Enumerable.Range(0, count).Select(_ => RandomNumberGenerator.GetBytes(size))];

    private static byte[] StockCbc(byte[] key, byte[] plaintext, byte[] iv)
    {
        using Aes stock = Aes.Create();
        stock.Key = key;
        return stock.EncryptCbc(plaintext, iv);
    }

    private static byte[] StockEcb(byte[] key, byte[] plaintext)
    {
        using Aes stock = Aes.Create();
        stock.Key = key;
        return stock.EncryptEcb(plaintext, PaddingMode.None);
    }

    // The resident set size from /proc/self/statm (pages), in bytes.
    private static long Resident() =>
        long.Parse(File.ReadAllText("/proc/self/statm").Split(' ')[1], CultureInfo.InvariantCulture) * Environment.SystemPageSize;
}
