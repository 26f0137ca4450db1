using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Runtime;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Scaling;

/// <summary>
/// <c>CachedAes.Scaling [THREADS [SECONDS [SHAPES]]]</c>: for each shape and each thread count (a comma-separated list,
/// default <c>1,2</c>), runs the shape on that many threads for SECONDS (default 1) after a warm-up of the same length,
/// and prints messages per second for all threads together. Every output is compared with stock's bytes for the same
/// key; a mismatch ends the run with exit code 1. The GC mode and backend come from the environment
/// (<c>DOTNET_gcServer</c>, <c>CACHEDAES_USE_CPU_INTRINSICS</c>), so one process measures one configuration.
/// </summary>
internal static class Program
{
    private const int KeyCount = 16;

    private static readonly byte[][] s_keys = MakeKeys();
    private static readonly byte[] s_iv = Enumerable.Range(0x40, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[] s_plaintext = Enumerable.Range(0x10, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[][] s_expected = s_keys.Select(StockCbc).ToArray();

    // One shape: the work of one thread, given its index; it runs until stop is set and returns how many messages it
    // made. Each returns the bytes it made through Check.
    private static readonly Dictionary<string, Func<int, StopFlag, long>> s_shapes = new()
    {
        ["shared-instance"] = SharedInstance,
        ["instance-per-thread"] = (_, stop) => KeptInstance(new CachedAes(), stop),
        ["stock-per-thread"] = (_, stop) => KeptInstance(Aes.Create(), stop),
        ["new-instance"] = (t, stop) => NewInstance(static () => new CachedAes(), t, stop, dispose: true),
        ["new-stock-instance"] = (t, stop) => NewInstance(Aes.Create, t, stop, dispose: true),
        ["new-key"] = NewKey,
        ["never-disposed"] = (t, stop) => NewInstance(static () => new CachedAes(), t, stop, dispose: false),
        ["never-disposed-stock"] = (t, stop) => NewInstance(Aes.Create, t, stop, dispose: false),
    };

    private static CachedAes? s_shared;

    public static int Main(string[] args)
    {
        int[] threads = (args.Length > 0 ? args[0] : "1,2").Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture)).ToArray();
        double seconds = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1;
        string[] shapes = args.Length > 2 && args[2] != "all" ? args[2].Split(',') : s_shapes.Keys.ToArray();

        Console.WriteLine($"# {Environment.ProcessorCount} processors, .NET {Environment.Version}, server GC: {GCSettings.IsServerGC}, "
            + $"backend: {CachedAesDiagnostics.Backend}, library: {typeof(CachedAes).Assembly.GetName().Version}");
        Console.WriteLine("shape\tthreads\tmessages/s\tvs 1 thread");
        foreach (string shape in shapes)
        {
            if (!s_shapes.TryGetValue(shape, out Func<int, StopFlag, long>? work))
            {
                Console.Error.WriteLine($"unknown shape {shape}; known: {string.Join(", ", s_shapes.Keys)}");
                return 2;
            }

            double? first = null;
            foreach (int n in threads)
            {
                s_shared = new CachedAes { Key = s_keys[0] };
                Run(work, n, seconds);                  // warm-up: past tiered compilation, caches filled
                double rate = Run(work, n, seconds);
                s_shared.Dispose();
                first ??= n == threads[0] ? rate : null;
                string ratio = first is double f ? (rate / f).ToString("0.0", CultureInfo.InvariantCulture) + "x" : "";
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{shape}\t{n}\t{rate / 1e6:0.000} M\t{ratio}"));
            }
        }

        return 0;
    }

    private static double Run(Func<int, StopFlag, long> work, int threads, double seconds)
    {
        var stop = new StopFlag();
        long[] counts = new long[threads];
        using var ready = new CountdownEvent(threads);
        using var go = new ManualResetEventSlim();
        var workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int index = t;
            workers[t] = new Thread(() =>
            {
                ready.Signal();
                go.Wait();
                counts[index] = work(index, stop);
            });
            workers[t].Start();
        }

        ready.Wait();
        var clock = Stopwatch.StartNew();
        go.Set();
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        stop.Stopped = true;
        foreach (Thread w in workers)
        {
            w.Join();
        }

        return counts.Sum() / clock.Elapsed.TotalSeconds;
    }

    private static long SharedInstance(int thread, StopFlag stop)
    {
        CachedAes aes = s_shared!;
        byte[] output = new byte[16];
        long n = 0;
        while (!stop.Stopped)
        {
            aes.EncryptCbc(s_plaintext, s_iv, output, PaddingMode.None);
            Check(output, 0);
            n++;
        }

        return n;
    }

    private static long KeptInstance(Aes aes, StopFlag stop)
    {
        using (aes)
        {
            aes.Key = s_keys[1];
            byte[] output = new byte[16];
            long n = 0;
            while (!stop.Stopped)
            {
                aes.EncryptCbc(s_plaintext, s_iv, output, PaddingMode.None);
                Check(output, 1);
                n++;
            }

            return n;
        }
    }

    private static long NewInstance(Func<Aes> create, int thread, StopFlag stop, bool dispose)
    {
        byte[] output = new byte[16];
        long n = 0;
        while (!stop.Stopped)
        {
            int k = (int)((n + thread) % KeyCount);
            Aes aes = create();
            aes.Key = s_keys[k];
            aes.EncryptCbc(s_plaintext, s_iv, output, PaddingMode.None);
            if (dispose)
            {
                aes.Dispose();
            }

            Check(output, k);
            n++;
        }

        return n;
    }

    private static long NewKey(int thread, StopFlag stop)
    {
        using var aes = new CachedAes();
        byte[] output = new byte[16];
        long n = 0;
        while (!stop.Stopped)
        {
            int k = (int)((n + thread) % KeyCount);
            aes.Key = s_keys[k];
            aes.EncryptCbc(s_plaintext, s_iv, output, PaddingMode.None);
            Check(output, k);
            n++;
        }

        return n;
    }

    private static void Check(byte[] output, int key)
    {
        if (!output.AsSpan().SequenceEqual(s_expected[key]))
        {
            Console.Error.WriteLine($"output for key {key} differs from stock's: {Convert.ToHexString(output)}");
            Environment.Exit(1);
        }
    }

    private static byte[][] MakeKeys()
    {
        var random = new Random(20261127);
        var keys = new byte[KeyCount][];
        for (int i = 0; i < KeyCount; i++)
        {
            keys[i] = new byte[i % 3 == 0 ? 16 : i % 3 == 1 ? 24 : 32];
            random.NextBytes(keys[i]);
        }

        return keys;
    }

    private static byte[] StockCbc(byte[] key)
    {
        using Aes stock = Aes.Create();
        stock.Key = key;
        return stock.EncryptCbc(s_plaintext, s_iv, PaddingMode.None);
    }

    private sealed class StopFlag
    {
        public volatile bool Stopped;
    }
}
