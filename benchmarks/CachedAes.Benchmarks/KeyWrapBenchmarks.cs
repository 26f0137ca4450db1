using BenchmarkDotNet.Attributes;

namespace CachedCryptography.Benchmarks;

/// <summary>Parameters shared by the RFC 5649 (KWP) shapes. <see cref="Length"/> is the plaintext (key) length.</summary>
public abstract class KwpBenchmarkBase : InstanceBenchmarkBase<KeyWrapWorkload>
{
    /// <summary>Wrap or unwrap.</summary>
    [ParamsAllValues]
    public KeyWrapOperation Operation { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(1, 8, 15, 16, 32, 512, 513, 4096, 4097)]
    public int Length { get; set; }

    private protected override KeyWrapWorkload CreateWorkload() => new(Operation, Length);
}

/// <summary>
/// Steady: one keyed instance reused across invocations; span overloads into a preallocated destination. The third row
/// of each case is the native floor (<see cref="NativeFloor"/>: one update of the platform's library per AES step).
/// </summary>
[QuickSubset(nameof(Length), 32)]
[QuickSubset(nameof(Operation), KeyWrapOperation.EncryptKeyWrapPadded)]
public class KwpSteady : KwpBenchmarkBase
{
    private NativeFloor? _floor;

    private protected override bool ReusesInstance => true;

    /// <summary>Keys the floor's ECB context and checks its output against stock's.</summary>
    [GlobalSetup(Target = nameof(Floor))]
    public void SetupFloor() => _floor = new KeyWrapWorkload(Operation, Length).CreateFloor();

    /// <summary>The native floor: RFC 5649 over one ECB handle of the platform's library, one update per AES step through the cheapest P/Invoke.</summary>
    [Benchmark]
    [FloorRow]
    public int Floor() => _floor!.Run();

    /// <summary>Stock <c>Aes.Create()</c> instance (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Workload.Run(Instance!);

    /// <summary>CachedAes instance.</summary>
    [Benchmark]
    public int Cached() => Workload.Run(Instance!);
}

/// <summary>Single: new instance, set the key, one span call, dispose.</summary>
public class KwpSingle : KwpBenchmarkBase
{
    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RunOnNewInstance(cached: false, calls: 1);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RunOnNewInstance(cached: true, calls: 1);
}
