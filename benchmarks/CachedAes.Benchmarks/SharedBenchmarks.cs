using System;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Security.Cryptography;
using System.Threading;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Shared: one instance serving 1 or 2 threads at once, 16 B one-shots, throughput. Every invocation runs
/// <see cref="OperationsPerInvoke"/> calls split evenly across <see cref="Threads"/> threads (the calling thread
/// plus workers started once in the global setup), so Mean is wall time per operation: with two threads that
/// scale perfectly it is half the one-thread Mean. Each thread has its own input and destination buffers.
/// Every method's global setup first runs a contended check (each thread 20,000 calls, started together, every
/// output compared with stock's). A CachedAes method fails the benchmark, with the counts, if any call threw or returned
/// wrong bytes. A stock method is measured anyway and its counts are the columns <c>Check threw</c> and
/// <c>Check wrong</c> (<see cref="SetupCheckColumn"/>): stock .NET 11 throws on an instance used by two threads at once,
/// so <see cref="SharedStock"/> catches the <see cref="CryptographicException"/>s of its measured calls, which
/// BenchmarkDotNet's <c>Exceptions</c> column counts per call, and its time per call includes them.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Operation), CipherOperation.EncryptEcb)]
[QuickSubset(nameof(Threads), 2)]
public class EcbCbcShared
{
    /// <summary>Calls per invocation, across all threads.</summary>
    public const int OperationsPerInvoke = 4096;

    private const int CheckCallsPerThread = 20_000;

    private readonly object _gate = new();
    private CipherWorkload[] _workloads = [];
    private byte[][] _spacers = [];
    private ThreadCrew? _crew;
    private Aes? _shared;
    private ThreadLocal<Aes>? _perThread;
    private Action<int>? _body;

    /// <summary>ECB or CBC encrypt of 16 B (a 32 B, two-block operation with PKCS7).</summary>
    [Params(CipherOperation.EncryptEcb, CipherOperation.EncryptCbc)]
    public CipherOperation Operation { get; set; }

    /// <summary>Threads calling at once.</summary>
    [Params(1, 2)]
    public int Threads { get; set; }

    /// <summary>Sets up one shared stock instance.</summary>
    [GlobalSetup(Target = nameof(SharedStock))]
    public void SetupSharedStock() => Setup(nameof(SharedStock));

    /// <summary>Sets up one shared CachedAes.</summary>
    [GlobalSetup(Target = nameof(SharedCached))]
    public void SetupSharedCached() => Setup(nameof(SharedCached));

    /// <summary>Sets up one CachedAes behind a lock.</summary>
    [GlobalSetup(Target = nameof(LockedCached))]
    public void SetupLockedCached() => Setup(nameof(LockedCached));

    /// <summary>Sets up the per-thread stock instances.</summary>
    [GlobalSetup(Target = nameof(ThreadLocalStock))]
    public void SetupThreadLocalStock() => Setup(nameof(ThreadLocalStock));

    /// <summary>Sets up the new-instance-per-call shape.</summary>
    [GlobalSetup(Target = nameof(NewStockPerCall))]
    public void SetupNewStockPerCall() => Setup(nameof(NewStockPerCall));

    /// <summary>Stops the workers and disposes the instances.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _crew?.Dispose();
        _shared?.Dispose();
        if (_perThread is not null)
        {
            foreach (Aes aes in _perThread.Values)
            {
                aes.Dispose();
            }

            _perThread.Dispose();
        }
    }

    /// <summary>
    /// One stock <c>Aes.Create()</c> instance shared by every thread, no lock (baseline). Stock .NET 10 allows it;
    /// stock .NET 11 throws on overlapping calls, which are caught (BenchmarkDotNet's <c>Exceptions</c> column counts them).
    /// </summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = OperationsPerInvoke)]
    public void SharedStock() => RunRound();

    /// <summary>One CachedAes shared by every thread, no lock.</summary>
    [Benchmark(OperationsPerInvoke = OperationsPerInvoke)]
    public void SharedCached() => RunRound();

    /// <summary>One CachedAes shared by every thread behind a <c>lock</c>.</summary>
    [Benchmark(OperationsPerInvoke = OperationsPerInvoke)]
    public void LockedCached() => RunRound();

    /// <summary>A stock instance per thread from a <see cref="ThreadLocal{T}"/>.</summary>
    [Benchmark(OperationsPerInvoke = OperationsPerInvoke)]
    public void ThreadLocalStock() => RunRound();

    /// <summary>A new stock instance per call: <c>Aes.Create()</c>, set the key, one call, dispose.</summary>
    [Benchmark(OperationsPerInvoke = OperationsPerInvoke)]
    public void NewStockPerCall() => RunRound();

    private void RunRound() => _crew!.Run(_body!);

    private void Setup(string method)
    {
        if (OperationsPerInvoke % Threads != 0)
        {
            throw new InvalidOperationException($"{OperationsPerInvoke} operations do not split evenly over {Threads} threads.");
        }

        // Each thread's buffers are apart from the other's: objects allocated one after another sit side by side, and
        // two threads writing destinations on one cache line would measure the line moving between cores, not the
        // implementation. A spacer allocated between the workloads (and kept alive) keeps them two lines apart.
        _workloads = new CipherWorkload[Threads];
        _spacers = new byte[Threads][];
        for (int i = 0; i < Threads; i++)
        {
            _workloads[i] = new CipherWorkload(Operation, 16);
            _spacers[i] = new byte[128];
        }

        Func<int, Aes> instance = CreateInstanceSource(method);
        _crew = new ThreadCrew(Threads);
        Check(method, instance);

        int share = OperationsPerInvoke / Threads;
        _body = method == nameof(SharedStock)
            ? thread =>
            {
                CipherWorkload workload = _workloads[thread];
                Aes aes = instance(thread);
                for (int i = 0; i < share; i++)
                {
                    try
                    {
                        workload.Run(aes);
                    }
                    catch (CryptographicException)
                    {
                        // Stock .NET 11 on overlapping calls: counted by BenchmarkDotNet's exception diagnoser.
                    }
                }
            }
            : method == nameof(LockedCached)
            ? thread =>
            {
                CipherWorkload workload = _workloads[thread];
                Aes aes = instance(thread);
                for (int i = 0; i < share; i++)
                {
                    lock (_gate)
                    {
                        workload.Run(aes);
                    }
                }
            }
            : method == nameof(NewStockPerCall)
            ? thread =>
            {
                CipherWorkload workload = _workloads[thread];
                for (int i = 0; i < share; i++)
                {
                    using Aes aes = instance(thread);
                    workload.Run(aes);
                }
            }
            : thread =>
            {
                CipherWorkload workload = _workloads[thread];
                Aes aes = instance(thread);
                for (int i = 0; i < share; i++)
                {
                    workload.Run(aes);
                }
            };
    }

    // Where each call's instance comes from. For NewStockPerCall it is a new keyed instance the caller disposes.
    private Func<int, Aes> CreateInstanceSource(string method)
    {
        switch (method)
        {
            case nameof(SharedStock):
                _shared = TestData.CreateStockKeyed();
                return _ => _shared;
            case nameof(SharedCached) or nameof(LockedCached):
                CachedAes cached = CachedAes.Create();
                cached.SetKey(TestData.Key);
                _shared = cached;
                return _ => _shared;
            case nameof(ThreadLocalStock):
                _perThread = new ThreadLocal<Aes>(TestData.CreateStockKeyed, trackAllValues: true);
                return _ => _perThread.Value!;
            case nameof(NewStockPerCall):
                return _ => TestData.CreateStockKeyed();
            default:
                throw new ArgumentOutOfRangeException(nameof(method));
        }
    }

    // Every thread makes CheckCallsPerThread calls at once, each output compared with stock's.
    private void Check(string method, Func<int, Aes> instance)
    {
        int threw = 0;
        int wrong = 0;
        string? firstException = null;
        int waiting = Threads;
        _crew!.Run(thread =>
        {
            // Start together, so that the calls really overlap.
            Interlocked.Decrement(ref waiting);
            SpinWait spin = default;
            while (Volatile.Read(ref waiting) != 0)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }

            CipherWorkload workload = _workloads[thread];
            for (int i = 0; i < CheckCallsPerThread; i++)
            {
                Aes aes = instance(thread);
                try
                {
                    bool correct;
                    if (method == nameof(LockedCached))
                    {
                        lock (_gate)
                        {
                            correct = workload.RunAndCompare(aes);
                        }
                    }
                    else
                    {
                        correct = workload.RunAndCompare(aes);
                    }

                    if (!correct)
                    {
                        Interlocked.Increment(ref wrong);
                    }
                }
                catch (CryptographicException e)
                {
                    Interlocked.Increment(ref threw);
                    Interlocked.CompareExchange(ref firstException, $"{e.GetType().Name}: {e.Message}", null);
                }
                finally
                {
                    if (method == nameof(NewStockPerCall))
                    {
                        aes.Dispose();
                    }
                }
            }
        });

        SetupCheck.Report(nameof(EcbCbcShared), method, [(nameof(Operation), Operation), (nameof(Threads), Threads)],
            Threads * CheckCallsPerThread, threw, wrong);
        bool stock = method is nameof(SharedStock) or nameof(ThreadLocalStock) or nameof(NewStockPerCall);
        if ((threw != 0 || wrong != 0) && !stock)
        {
            throw BenchmarkCheck.Failure(
                $"{nameof(EcbCbcShared)}.{method} ({Operation}, {Threads} threads): " +
                $"of {Threads * CheckCallsPerThread} calls made at once, {threw} threw" +
                (firstException is null ? string.Empty : $" (first: {firstException})") +
                $" and {wrong} returned bytes other than stock's.");
        }
    }
}

/// <summary>
/// Runs one piece of work on N threads at once: the caller is thread 0, and N - 1 workers, started once, are
/// threads 1..N-1. Between rounds a worker spins for up to a millisecond (so back-to-back invocations start
/// without a wake-up delay), then blocks on its own event until the next round. An exception on any thread is
/// rethrown by <see cref="Run"/> once every thread has finished the round.
/// </summary>
internal sealed class ThreadCrew : IDisposable
{
    private static readonly long SpinTicks = Stopwatch.Frequency / 1000;

    private readonly Thread[] _workers;
    private readonly ManualResetEventSlim[] _wake;
    private Action<int>? _work;
    private int _round;
    private int _running;
    private volatile bool _stopping;
    private Exception? _failure;

    public ThreadCrew(int threads)
    {
        _workers = new Thread[threads - 1];
        _wake = new ManualResetEventSlim[threads - 1];
        for (int i = 0; i < _workers.Length; i++)
        {
            _wake[i] = new ManualResetEventSlim(initialState: false);
            _workers[i] = new Thread(WorkerLoop) { IsBackground = true, Name = $"bench-worker-{i + 1}" };
            _workers[i].Start(i + 1);
        }
    }

    /// <summary>Runs <paramref name="work"/>(0) here and <paramref name="work"/>(i) on worker i; returns when all are done.</summary>
    public void Run(Action<int> work)
    {
        if (_workers.Length == 0)
        {
            work(0);
            return;
        }

        _work = work;
        _failure = null;
        Volatile.Write(ref _running, _workers.Length);
        StartRound();

        try
        {
            work(0);
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _failure, e, null);
        }

        SpinWait spin = default;
        while (Volatile.Read(ref _running) != 0)
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }

        if (_failure is not null)
        {
            ExceptionDispatchInfo.Throw(_failure);
        }
    }

    public void Dispose()
    {
        _stopping = true;
        StartRound();
        foreach (Thread worker in _workers)
        {
            worker.Join();
        }

        foreach (ManualResetEventSlim wake in _wake)
        {
            wake.Dispose();
        }
    }

    // The round advances (a full fence) before any event is set.
    private void StartRound()
    {
        Interlocked.Increment(ref _round);
        foreach (ManualResetEventSlim wake in _wake)
        {
            wake.Set();
        }
    }

    private void WorkerLoop(object? state)
    {
        int index = (int)state!;
        ManualResetEventSlim wake = _wake[index - 1];
        int seen = 0;
        while (true)
        {
            long spinUntil = Stopwatch.GetTimestamp() + SpinTicks;
            SpinWait spin = default;
            int round;
            while ((round = Volatile.Read(ref _round)) == seen)
            {
                if (Stopwatch.GetTimestamp() < spinUntil)
                {
                    spin.SpinOnce(sleep1Threshold: -1);
                    continue;
                }

                // Only this worker resets its event. Reset, then look at the round again: a round that started
                // before the reset is seen here, and one that starts after it sets the event, so none is missed.
                wake.Reset();
                Interlocked.MemoryBarrier();
                if (Volatile.Read(ref _round) == seen)
                {
                    wake.Wait();
                }
            }

            seen = round;
            if (_stopping)
            {
                return;
            }

            try
            {
                _work!(index);
            }
            catch (Exception e)
            {
                Interlocked.CompareExchange(ref _failure, e, null);
            }

            Interlocked.Decrement(ref _running);
        }
    }
}

/// <summary>The marker that starts every failure message of the suite's own checks (the short comparison quotes them).</summary>
internal static class BenchmarkCheck
{
    public const string Marker = "Benchmark check failed:";

    /// <summary>Creates the exception a failed check throws.</summary>
    public static InvalidOperationException Failure(string message) => new($"{Marker} {message}");
}
