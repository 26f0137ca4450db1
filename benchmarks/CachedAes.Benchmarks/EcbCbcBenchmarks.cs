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

/// <summary>
/// Steady: one keyed instance reused across invocations; span overloads into a preallocated destination. The third row
/// of each case is the native floor of the same work (<see cref="NativeFloor"/>), measured in the same kind of process.
/// </summary>
[QuickSubset(nameof(Size), 16)]
[QuickSubset(nameof(Operation), CipherOperation.EncryptEcb, CipherOperation.EncryptCbc)]
public class EcbCbcSteady : EcbCbcBenchmarkBase
{
    private NativeFloor? _floor;

    private protected override bool ReusesInstance => true;

    /// <summary>Keys the floor's context and checks its output against stock's.</summary>
    [GlobalSetup(Target = nameof(Floor))]
    public void SetupFloor()
    {
        CipherCase call = new(Operation, Size);
        _floor = NativeFloor.ForCipher(call);
        _floor.Verify(call.Encrypting ? call.Ciphertext : call.PaddedPlaintext, $"{Operation} of {Size} bytes");
    }

    /// <summary>Stock <c>Aes.Create()</c> instance (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Workload.Run(Instance!);

    /// <summary>CachedAes instance.</summary>
    [Benchmark]
    public int Cached() => Workload.Run(Instance!);

    /// <summary>The native floor: the same work of the platform's AES library through the cheapest P/Invoke (padding excluded).</summary>
    [Benchmark]
    [FloorRow]
    public int Floor() => _floor!.Run();
}

/// <summary>
/// Single: new instance, set the key, one span one-shot, dispose. The third row is stock's own native per-call
/// sequence on OpenSSL (<see cref="NativeStockSequence"/>) through the cheapest P/Invoke: on Linux only.
/// </summary>
public class EcbCbcSingle : EcbCbcBenchmarkBase
{
    private NativeStockSequence? _sequence;

    /// <summary>Prepares stock's native sequence and checks its output against stock's.</summary>
    [GlobalSetup(Target = nameof(StockNativeSequence))]
    public void SetupStockNativeSequence()
    {
        CipherCase call = new(Operation, Size);
        _sequence = new NativeStockSequence(call);
        _sequence.Verify(call.Encrypting ? call.Ciphertext : call.PaddedPlaintext, $"{Operation} of {Size} bytes");
    }

    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RunOnNewInstance(cached: false, calls: 1);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RunOnNewInstance(cached: true, calls: 1);

    /// <summary>Stock's native per-call sequence on OpenSSL (new context, init, key, update, final, free), no managed work.</summary>
    [Benchmark]
    [FloorRow(openSslOnly: true)]
    public int StockNativeSequence() => _sequence!.Run();
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

/// <summary>
/// Twice, never disposed: new instance, set the key, two span one-shots of 16 bytes, and the instance dropped without
/// <c>Dispose</c> (code that makes an instance per item and forgets it). CachedAes caches a handle from an instance's second
/// call, which then waits for a collection and the reclaimer's sweep; about 4,096 keys cache handles at once
/// (src/CachedAes/Seam/CachedKeyBudget.cs), and the calls of the others give their handles back at once.
/// </summary>
public class EcbCbcTwiceDropped : InstanceBenchmarkBase<CipherWorkload>
{
    /// <summary>The one-shot being measured.</summary>
    [ParamsAllValues]
    public CipherOperation Operation { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(16)]
    public int Size { get; set; }

    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => RunOnDroppedInstance(cached: false, calls: 2);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => RunOnDroppedInstance(cached: true, calls: 2);

    private protected override CipherWorkload CreateWorkload() => new(Operation, Size);
}
