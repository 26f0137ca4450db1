using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CachedCryptography;

/// <summary>
/// The <see cref="Meter"/> CachedAes reports to (<c>dotnet-counters monitor --counters CachedAes</c>, OpenTelemetry's
/// <c>AddMeter("CachedAes")</c>): how many native handles were made, re-keyed, given back, and given back for instances
/// dropped without <c>Dispose</c>, how
/// often a call found every cached handle busy or ran past the bound on keys with cached handles, how the OpenSSL
/// context pool served, and which backend and paths the process uses.
/// </summary>
/// <remarks>
/// <para>Every counter is counted where a native handle is made, re-keyed or given back, or a pooled context is taken:
/// never on the path of a call that finds its cached handle, so the steady one-shot path costs the same with or without a
/// listener.</para>
/// <para>Handles given back for a dropped instance or transform (one never disposed) are counted by
/// <c>cachedaes.handles.finalized</c> (the name it had when a finalizer freed them; now the sweep that runs after each
/// collection finds them), an observable counter: the sweep only adds to a static total and calls no listener, and a
/// listener reads the total on its own thread when it collects observable instruments. So
/// <c>cachedaes.handles.created</c> minus <c>cachedaes.handles.released</c> minus <c>cachedaes.handles.finalized</c> is the
/// number of handles still held (cached in an instance or transform, or in use by a call) as of the last collection, and
/// does not grow for code that drops instances or transforms instead of disposing them, once the collector has found
/// them.</para>
/// <para>A listener whose callback throws (on an instrument being published or on a measurement) does not make a
/// CachedAes operation fail or leak: the exception is dropped where the measurement is recorded, so it never interrupts
/// an operation between making a native handle and giving it an owner.</para>
/// </remarks>
public static class CachedAesMetrics
{
    /// <summary>The meter's name: <c>CachedAes</c>.</summary>
    public const string MeterName = "CachedAes";

    private static readonly Meter s_meter = new(MeterName, typeof(CachedAesMetrics).Assembly.GetName().Version?.ToString());

    private static readonly Counter<long>? s_created = NewCounter("cachedaes.handles.created", "{handle}", "Native AES handles made (each one a native cipher object keyed once).");
    private static readonly Counter<long>? s_rekeyed = NewCounter("cachedaes.handles.rekeyed", "{handle}", "Native AES handles re-keyed in place by a key change instead of being made again.");
    private static readonly Counter<long>? s_released = NewCounter("cachedaes.handles.released", "{handle}", "Native AES handles given back (freed, or cleansed and pooled).");
    private static readonly Counter<long>? s_contended = NewCounter("cachedaes.calls.contended", "{call}", "Calls that found every cached handle of their mode and direction busy and used one of their own.");
    private static readonly Counter<long>? s_uncached = NewCounter("cachedaes.calls.uncached", "{call}", "Calls under a key past the bound on keys with cached handles (about 4,096 per backend), each on a handle made for the call and given back after it.");
    private static readonly Counter<long>? s_poolHits = NewCounter("cachedaes.pool.hits", "{context}", "OpenSSL contexts taken from the pool of keyless contexts.");
    private static readonly Counter<long>? s_poolMisses = NewCounter("cachedaes.pool.misses", "{context}", "OpenSSL contexts allocated because the pool was empty.");

    // Empty until the process's backend has been chosen (the first CachedAes made without a backend of a test's own).
    private static Measurement<int>[] s_backend = [];

    static CachedAesMetrics()
    {
        _ = Create(() => s_meter.CreateObservableGauge(
            "cachedaes.backend", ObserveBackend, null, "1 for the backend and paths in use (tags: backend, ecb, cbc)."));
        _ = Create(() => s_meter.CreateObservableCounter<long>(
            "cachedaes.handles.finalized",
            FinalizedHandles.Total,
            "{handle}",
            "Native AES handles given back because the instance or transform that held them was dropped without Dispose (found after the collection that found it unreachable)."));
        _ = Create(() => s_meter.CreateObservableCounter<long>(
            "cachedaes.ownership.violations",
            Violations.Total,
            "{violation}",
            "Ownership rules found broken (each also threw an InvalidOperationException naming the rule): 0 unless CachedAes has a bug."));
    }

    internal static void HandleCreated() => Count(s_created);

    internal static void HandleRekeyed() => Count(s_rekeyed);

    internal static void HandleReleased() => Count(s_released);

    internal static void CallContended() => Count(s_contended);

    internal static void CallUncached() => Count(s_uncached);

    internal static void PoolHit() => Count(s_poolHits);

    internal static void PoolMiss() => Count(s_poolMisses);

    // Adds one, only when someone listens (no work otherwise); a listener's exception stays here (see the remarks).
    private static void Count(Counter<long>? counter)
    {
        if (counter is { Enabled: true })
        {
            CountListened(counter);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void CountListened(Counter<long> counter)
    {
        try
        {
            counter.Add(1);
        }
#pragma warning disable CA1031 // a listener's exception must not fail or leak the operation being counted
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    // A counter of the meter, or null as for Create.
    private static Counter<long>? NewCounter(string name, string unit, string description) =>
        Create(() => s_meter.CreateCounter<long>(name, unit, description));

    // An instrument, or null when a listener threw while it was being published to it (the instrument then reports
    // nothing, and the meter's type still initializes).
    private static T? Create<T>(Func<T> create)
        where T : class
    {
        try
        {
            return create();
        }
#pragma warning disable CA1031 // see above: a listener's exception must not make this type unusable
        catch (Exception)
#pragma warning restore CA1031
        {
            return null;
        }
    }

    /// <summary>
    /// Records the process's backend and paths for the <c>cachedaes.backend</c> gauge (called once, by the selection, so
    /// that this type depends on nothing but the public enums: every folder may count here without a cycle).
    /// </summary>
    internal static void PublishBackend(CachedAesBackend backend, CachedAesPath ecb, CachedAesPath cbc) =>
        Volatile.Write(ref s_backend, [new Measurement<int>(
            1,
            new KeyValuePair<string, object?>("backend", backend.ToString()),
            new KeyValuePair<string, object?>("ecb", ecb.ToString()),
            new KeyValuePair<string, object?>("cbc", cbc.ToString()))]);

    private static IEnumerable<Measurement<int>> ObserveBackend() => Volatile.Read(ref s_backend);

    /// <summary>
    /// The total of handles given back for dropped key epochs (<see cref="Ownership.Reclaimer"/>). A class of its own,
    /// with no static constructor, so that the reclaimer, which runs after collections on a pool thread, never runs <see cref="CachedAesMetrics"/>' static constructor, which creates the meter and would call listeners'
    /// <see cref="MeterListener.InstrumentPublished"/> there.
    /// </summary>
    internal static class FinalizedHandles
    {
        private static long s_total;

        /// <summary>Counts <paramref name="handles"/> handles: an interlocked add to a static field, and nothing else.</summary>
        internal static void Add(int handles) => Interlocked.Add(ref s_total, handles);

        /// <summary>The total so far (read by the observable counter, on the listener's thread).</summary>
        internal static long Total() => Interlocked.Read(ref s_total);
    }

    /// <summary>
    /// The total of ownership rules found broken (<see cref="Ownership.Invariant"/>): a class of its own with no static
    /// constructor, for the same reason as <see cref="FinalizedHandles"/>.
    /// </summary>
    internal static class Violations
    {
        private static long s_total;

        /// <summary>Counts one: an interlocked increment of a static field, and nothing else.</summary>
        internal static void Add() => Interlocked.Increment(ref s_total);

        /// <summary>The total so far (read by the observable counter, on the listener's thread).</summary>
        internal static long Total() => Interlocked.Read(ref s_total);
    }
}
