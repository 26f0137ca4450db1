using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// What the ECB/CBC and the key-wrap families share: every class compares a <c>Stock</c> baseline method with a
/// <c>Cached</c> one on the family's workload for the current parameters, with instances keyed with
/// <see cref="TestData.Key"/>. Before anything is measured, each method's own setup checks that its implementation
/// gives stock's bytes (so a failure of one implementation does not hide the other). A family declares its parameters
/// and makes its workload; a shape (Steady, Single, Twice) declares the two measured methods.
/// </summary>
/// <typeparam name="TWorkload">The family's workload; sealed, so the measured <c>Workload.Run</c> is a direct call.</typeparam>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public abstract class InstanceBenchmarkBase<TWorkload>
    where TWorkload : AesWorkload
{
    // The names of the measured methods every shape declares (the setups below target them).
    private const string StockMethod = "Stock";
    private const string CachedMethod = "Cached";

    private protected TWorkload Workload { get; private set; } = null!;

    /// <summary>With <see cref="ReusesInstance"/>: the one keyed instance every invocation uses.</summary>
    private protected Aes? Instance { get; private set; }

    /// <summary>True for a shape that measures one keyed instance kept across invocations (Steady).</summary>
    private protected virtual bool ReusesInstance => false;

    /// <summary>Prepares the inputs and checks stock's output (and keeps the instance for Steady).</summary>
    [GlobalSetup(Target = StockMethod)]
    public void SetupStock() => Setup(cached: false);

    /// <summary>Prepares the inputs and checks CachedAes's output (and keeps the instance for Steady).</summary>
    [GlobalSetup(Target = CachedMethod)]
    public void SetupCached()
    {
        BenchmarkSetup.CheckCachedBackend();
        Setup(cached: true);
    }

    /// <summary>Disposes the kept instance, if any.</summary>
    [GlobalCleanup]
    public void Cleanup() => Instance?.Dispose();

    /// <summary>The family's workload for the current parameters (inputs and stock's outputs).</summary>
    private protected abstract TWorkload CreateWorkload();

    /// <summary>Single and Twice: a new instance, the key set, <paramref name="calls"/> span calls, dispose.</summary>
    private protected int RunOnNewInstance(bool cached, int calls)
    {
        using Aes aes = CreateKeyed(cached);
        int written = 0;
        for (int call = 0; call < calls; call++)
        {
            written += Workload.Run(aes);
        }

        return written;
    }

    /// <summary>
    /// Twice, never disposed: a new instance, the key set, <paramref name="calls"/> span calls, and the instance dropped
    /// without <c>Dispose</c>: what it holds is left to the collector (and, for CachedAes, the reclaimer's sweep).
    /// </summary>
    private protected int RunOnDroppedInstance(bool cached, int calls)
    {
        Aes aes = CreateKeyed(cached);
        int written = 0;
        for (int call = 0; call < calls; call++)
        {
            written += Workload.Run(aes);
        }

        return written;
    }

    private void Setup(bool cached)
    {
        Workload = CreateWorkload();
        Aes aes = CreateKeyed(cached);
        Workload.Verify(aes, cached ? "Cached" : "Stock");
        if (ReusesInstance)
        {
            Instance = aes;
        }
        else
        {
            aes.Dispose();
        }
    }

    private static Aes CreateKeyed(bool cached)
    {
        Aes aes = cached ? CachedAes.Create() : Aes.Create();
        aes.SetKey(TestData.Key);
        return aes;
    }
}
