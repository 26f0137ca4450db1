using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>Parameters shared by the RFC 5649 (KWP) shapes. <see cref="Length"/> is the plaintext (key) length.</summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public abstract class KwpBenchmarkBase
{
    /// <summary>Wrap or unwrap.</summary>
    [ParamsAllValues]
    public KeyWrapOperation Operation { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(1, 8, 15, 16, 32, 512, 513, 4096, 4097)]
    public int Length { get; set; }

    private protected KeyWrapWorkload Workload { get; private set; } = null!;

    /// <summary>Prepares the inputs (with stock) for the current parameters.</summary>
    private protected void PrepareWorkload() => Workload = new KeyWrapWorkload(Operation, Length);

    /// <summary>Creates an instance of the implementation under test keyed with the benchmark key.</summary>
    private protected static Aes CreateKeyed(bool cached)
    {
        Aes aes = cached ? CachedAes.Create() : Aes.Create();
        aes.SetKey(TestData.Key);
        return aes;
    }

    /// <summary>
    /// Prepares the inputs and checks, on a fresh keyed instance, that the implementation produces stock's bytes.
    /// Each benchmark method has its own setup, so a failure of one implementation does not hide the other.
    /// </summary>
    private protected void PrepareAndVerify(bool cached)
    {
        PrepareWorkload();
        using Aes aes = CreateKeyed(cached);
        Workload.Verify(aes, cached ? "Cached" : "Stock");
    }
}

/// <summary>Steady: one keyed instance reused across invocations; span overloads into a preallocated destination.</summary>
[QuickSubset(nameof(Length), 32)]
public class KwpSteady : KwpBenchmarkBase
{
    private Aes? _aes;

    /// <summary>Keys one stock instance and checks its output.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => SetupInstance(cached: false);

    /// <summary>Keys one CachedAes instance and checks its output.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => SetupInstance(cached: true);

    /// <summary>Disposes the instance.</summary>
    [GlobalCleanup]
    public void Cleanup() => _aes?.Dispose();

    /// <summary>Stock <c>Aes.Create()</c> instance (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Workload.Run(_aes!);

    /// <summary>CachedAes instance.</summary>
    [Benchmark]
    public int Cached() => Workload.Run(_aes!);

    private void SetupInstance(bool cached)
    {
        PrepareWorkload();
        _aes = CreateKeyed(cached);
        Workload.Verify(_aes, cached ? "Cached" : "Stock");
    }
}

/// <summary>Single: new instance, set the key, one span call, dispose.</summary>
public class KwpSingle : KwpBenchmarkBase
{
    /// <summary>Prepares the inputs and checks stock's output.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => PrepareAndVerify(cached: false);

    /// <summary>Prepares the inputs and checks CachedAes's output.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => PrepareAndVerify(cached: true);

    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock()
    {
        using Aes aes = Aes.Create();
        aes.SetKey(TestData.Key);
        return Workload.Run(aes);
    }

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached()
    {
        using Aes aes = CachedAes.Create();
        aes.SetKey(TestData.Key);
        return Workload.Run(aes);
    }
}
