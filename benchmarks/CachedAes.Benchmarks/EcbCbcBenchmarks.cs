using BenchmarkDotNet.Attributes;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Parameters shared by the ECB/CBC shapes. <see cref="Size"/> is the plaintext length; with PKCS7 the
/// ciphertext is one block longer when <see cref="Size"/> is a multiple of 16 (so 16 B of plaintext is a
/// 32-byte, two-block operation in both directions).
/// </summary>
public abstract class EcbCbcBenchmarkBase : InstanceBenchmarkBase<CipherWorkload>
{
    /// <summary>The one-shot being measured.</summary>
    [ParamsAllValues]
    public CipherOperation Operation { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(16, 32, 64, 128, 1024, 16384)]
    public int Size { get; set; }

    private protected override CipherWorkload CreateWorkload() => new(Operation, Size);
}

/// <summary>Steady: one keyed instance reused across invocations; span overloads into a preallocated destination.</summary>
[QuickSubset(nameof(Size), 16, 1024, 16384)]
public class EcbCbcSteady : EcbCbcBenchmarkBase
{
    private protected override bool ReusesInstance => true;

    /// <summary>Stock <c>Aes.Create()</c> instance (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Workload.Run(Instance!);

    /// <summary>CachedAes instance.</summary>
    [Benchmark]
    public int Cached() => Workload.Run(Instance!);
}

/// <summary>Single: new instance, set the key, one span one-shot, dispose.</summary>
[QuickSubset(nameof(Size), 16)]
public class EcbCbcSingle : EcbCbcBenchmarkBase
{
    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RunOnNewInstance(cached: false, calls: 1);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RunOnNewInstance(cached: true, calls: 1);
}

/// <summary>Twice: new instance, set the key, two span one-shots, dispose.</summary>
public class EcbCbcTwice : EcbCbcBenchmarkBase
{
    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RunOnNewInstance(cached: false, calls: 2);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RunOnNewInstance(cached: true, calls: 2);
}
