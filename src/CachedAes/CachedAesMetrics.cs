using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Threading;
using CachedCryptography.Selection;

namespace CachedCryptography;

/// <summary>
/// The <see cref="Meter"/> CachedAes reports to (<c>dotnet-counters monitor --counters CachedAes</c>, OpenTelemetry's
/// <c>AddMeter("CachedAes")</c>): how many native handles were made, re-keyed, given back and freed by a finalizer, how
/// often a call found every cached handle busy, how the OpenSSL context pool served, and which backend and paths the
/// process uses.
/// </summary>
/// <remarks>
/// <para>Every counter is counted where a native handle is made, re-keyed or given back, or a pooled context is taken:
/// never on the path of a call that finds its cached handle, so the steady one-shot path costs the same with or without a
/// listener.</para>
/// <para>Handles freed by the finalizer of a dropped instance or transform (one never disposed) are counted by
/// <c>cachedaes.handles.finalized</c>, an observable counter: the finalizer only adds to a static total with an
/// interlocked increment and calls no listener (docs/design-notes.md, "Native ownership"), and a listener reads the
/// total on its own thread when it collects observable instruments. So <c>cachedaes.handles.created</c> minus
/// <c>cachedaes.handles.released</c> minus <c>cachedaes.handles.finalized</c> is the number of handles still held (cached
/// in an instance or transform, or in use by a call) as of the last collection, and does not grow for code that drops
/// instances or transforms instead of disposing them, once the collector has finalized them.</para>
/// </remarks>
public static class CachedAesMetrics
{
    /// <summary>The meter's name: <c>CachedAes</c>.</summary>
    public const string MeterName = "CachedAes";

    private static readonly Meter s_meter = new(MeterName, typeof(CachedAesMetrics).Assembly.GetName().Version?.ToString());

    private static readonly Counter<long> s_created = s_meter.CreateCounter<long>(
        "cachedaes.handles.created", "{handle}", "Native AES handles made (each one a native cipher object keyed once).");

    private static readonly Counter<long> s_rekeyed = s_meter.CreateCounter<long>(
        "cachedaes.handles.rekeyed", "{handle}", "Native AES handles re-keyed in place by a key change instead of being made again.");

    private static readonly Counter<long> s_released = s_meter.CreateCounter<long>(
        "cachedaes.handles.released", "{handle}", "Native AES handles given back (freed, or cleansed and pooled).");

    private static readonly Counter<long> s_contended = s_meter.CreateCounter<long>(
        "cachedaes.calls.contended", "{call}", "Calls that found every cached handle of their mode and direction busy and used one of their own.");

    private static readonly Counter<long> s_poolHits = s_meter.CreateCounter<long>(
        "cachedaes.pool.hits", "{context}", "OpenSSL contexts taken from the pool of keyless contexts.");

    private static readonly Counter<long> s_poolMisses = s_meter.CreateCounter<long>(
        "cachedaes.pool.misses", "{context}", "OpenSSL contexts allocated because the pool was empty.");

    static CachedAesMetrics()
    {
        s_meter.CreateObservableGauge(
            "cachedaes.backend", ObserveBackend, null, "1 for the backend and paths in use (tags: backend, ecb, cbc).");
        s_meter.CreateObservableCounter<long>(
            "cachedaes.handles.finalized",
            FinalizedHandles.Total,
            "{handle}",
            "Native AES handles freed by a finalizer because the instance or transform that held them was dropped without Dispose.");
    }

    internal static void HandleCreated() => s_created.Add(1);

    internal static void HandleRekeyed() => s_rekeyed.Add(1);

    internal static void HandleReleased() => s_released.Add(1);

    internal static void CallContended() => s_contended.Add(1);

    internal static void PoolHit() => s_poolHits.Add(1);

    internal static void PoolMiss() => s_poolMisses.Add(1);

    private static Measurement<int> ObserveBackend()
    {
        BackendSelection selection = ProcessBackend.Selection;
        return new Measurement<int>(
            1,
            new KeyValuePair<string, object?>("backend", selection.Backend.Kind.ToString()),
            new KeyValuePair<string, object?>("ecb", selection.Ecb.ToString()),
            new KeyValuePair<string, object?>("cbc", selection.Cbc.ToString()));
    }

    /// <summary>
    /// The total of handles freed by key epochs' finalizers. A class of its own, with no static constructor, so that a
    /// finalizer counting here never runs <see cref="CachedAesMetrics"/>' static constructor, which creates the meter and
    /// would call listeners' <see cref="MeterListener.InstrumentPublished"/> on the finalizer thread.
    /// </summary>
    internal static class FinalizedHandles
    {
        private static long s_total;

        /// <summary>Counts one handle: an interlocked increment of a static field, and nothing else.</summary>
        internal static void Add() => Interlocked.Increment(ref s_total);

        /// <summary>The total so far (read by the observable counter, on the listener's thread).</summary>
        internal static long Total() => Interlocked.Read(ref s_total);
    }
}
