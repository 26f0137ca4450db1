using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// What listening to the <c>CachedAes</c> meter costs (<see cref="CachedAesMetrics"/>): a kept instance's steady 16-byte
/// CBC encryption with nobody listening (baseline) and with a <see cref="MeterListener"/> enabled on every instrument,
/// and a new instance per message (which creates, and gives back, a native handle: the counted events) both ways.
/// </summary>
[MemoryDiagnoser]
public class MetricsOverhead
{
    private readonly byte[] _plaintext = TestData.Fill(16, 0x4D);
    private readonly byte[] _destination = new byte[32];
    private CachedAes _kept = null!;
    private MeterListener? _listener;

    /// <summary>Keys the kept instance; no listener.</summary>
    [GlobalSetup(Targets = [nameof(SteadyNoListener), nameof(NewInstanceNoListener)])]
    public void SetupWithout() => _kept = new CachedAes { Key = TestData.Key };

    /// <summary>Keys the kept instance and starts a listener on every CachedAes instrument.</summary>
    [GlobalSetup(Targets = [nameof(SteadyWithListener), nameof(NewInstanceWithListener)])]
    public void SetupWith()
    {
        SetupWithout();
        _listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == CachedAesMetrics.MeterName)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            },
        };
        _listener.SetMeasurementEventCallback<long>((_, value, _, _) => Measurements += value);
        _listener.Start();
    }

    /// <summary>What the listener received (kept, so the callback's work is not optimized away).</summary>
    public long Measurements { get; private set; }

    /// <summary>Stops the listener and frees the instance.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _listener?.Dispose();
        _kept.Dispose();
    }

    /// <summary>Steady call, nobody listening (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int SteadyNoListener() => _kept.EncryptCbc(_plaintext, TestData.Iv, _destination);

    /// <summary>Steady call with a listener on every instrument.</summary>
    [Benchmark]
    public int SteadyWithListener() => _kept.EncryptCbc(_plaintext, TestData.Iv, _destination);

    /// <summary>A new instance per message, nobody listening.</summary>
    [Benchmark]
    public int NewInstanceNoListener() => NewInstance();

    /// <summary>A new instance per message with a listener (each message counts a handle made and one given back).</summary>
    [Benchmark]
    public int NewInstanceWithListener() => NewInstance();

    private int NewInstance()
    {
        using var aes = new CachedAes();
        aes.SetKey(TestData.Key);
        return aes.EncryptCbc(_plaintext, TestData.Iv, _destination);
    }
}
