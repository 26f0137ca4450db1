using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Parameters shared by the ECB/CBC shapes. <see cref="Size"/> is the plaintext length; with PKCS7 the
/// ciphertext is one block longer when <see cref="Size"/> is a multiple of 16 (so 16 B of plaintext is a
/// 32-byte, two-block operation in both directions).
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
public abstract class EcbCbcBenchmarkBase
{
    /// <summary>The one-shot being measured.</summary>
    [ParamsAllValues]
    public CipherOperation Operation { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(16, 32, 64, 128, 1024, 16384)]
    public int Size { get; set; }

    private protected CipherWorkload Workload { get; private set; } = null!;

    /// <summary>Prepares the inputs (with stock) for the current parameters.</summary>
    private protected void PrepareWorkload() => Workload = new CipherWorkload(Operation, Size);

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
[QuickSubset(nameof(Size), 16, 1024, 16384)]
public class EcbCbcSteady : EcbCbcBenchmarkBase
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

/// <summary>Single: new instance, set the key, one span one-shot, dispose.</summary>
[QuickSubset(nameof(Size), 16)]
public class EcbCbcSingle : EcbCbcBenchmarkBase
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

/// <summary>Twice: new instance, set the key, two span one-shots, dispose.</summary>
public class EcbCbcTwice : EcbCbcBenchmarkBase
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
        return Workload.Run(aes) + Workload.Run(aes);
    }

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached()
    {
        using Aes aes = CachedAes.Create();
        aes.SetKey(TestData.Key);
        return Workload.Run(aes) + Workload.Run(aes);
    }
}
