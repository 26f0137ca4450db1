using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// What the <c>CachedAes</c> meter (<see cref="CachedAesMetrics"/>) records on the thread that made this object, while it
/// is not disposed: the count of measurements per counter. A <see cref="MeterListener"/> hears a counter on the thread
/// that adds to it, so work on other threads (tests running in parallel) is not counted. Data Protection protects and
/// unprotects on the caller's thread, so a count above zero says that CachedAes ran for that call.
/// </summary>
internal sealed class CachedAesCalls : IDisposable
{
    private readonly int _thread = Environment.CurrentManagedThreadId;
    private readonly MeterListener _listener = new();
    private readonly Dictionary<string, long> _counts = [];

    public CachedAesCalls()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == CachedAesMetrics.MeterName && !instrument.IsObservable)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
        {
            if (Environment.CurrentManagedThreadId == _thread)
            {
                lock (_counts)
                {
                    _counts[instrument.Name] = _counts.GetValueOrDefault(instrument.Name) + value;
                }
            }
        });
        _listener.Start();
    }

    /// <summary>Native AES handles CachedAes made on this thread (<c>cachedaes.handles.created</c>).</summary>
    public long HandlesCreated => Count("cachedaes.handles.created");

    /// <summary>Every <c>cachedaes.*</c> counter's total on this thread.</summary>
    public long Total
    {
        get
        {
            lock (_counts)
            {
                long total = 0;
                foreach (long value in _counts.Values)
                {
                    total += value;
                }

                return total;
            }
        }
    }

    public long Count(string instrument)
    {
        lock (_counts)
        {
            return _counts.GetValueOrDefault(instrument);
        }
    }

    /// <summary>Runs <paramref name="action"/> and returns the handles CachedAes made on this thread meanwhile.</summary>
    public long During(Action action)
    {
        long before = HandlesCreated;
        action();
        return HandlesCreated - before;
    }

    public void Dispose() => _listener.Dispose();
}
