using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// A test-only record, kept apart from the state words it checks, of who holds each key memory and each handle, and of
/// which handles sit in a slot: the stress lanes switch it on and end at the first thing with two holders. Off unless
/// the switch <c>CachedAes.AuditOwnership</c> or the variable <c>CACHEDAES_AUDIT_OWNERSHIP=1</c> says otherwise, read once;
/// when off, every hook is a test of a static read-only field, which optimized code removes.
/// </summary>
/// <remarks>
/// The record holds things and holders weakly (a holder's death must stay visible to the collector), and a thing the
/// reclaimer takes back from a dropped holder must have a holder the collector has found unreachable. A broken rule ends
/// the process (<see cref="Environment.FailFast(string)"/>) with what broke it, so a stress program cannot carry on past it.
/// </remarks>
internal static class OwnershipAudit
{
    /// <summary>The switch that turns the audit on.</summary>
    internal const string SwitchName = "CachedAes.AuditOwnership";

    /// <summary>The environment variable that turns the audit on (when the switch is not set).</summary>
    internal const string EnvironmentVariable = "CACHEDAES_AUDIT_OWNERSHIP";

    /// <summary>Whether the audit runs in this process.</summary>
    internal static readonly bool Enabled = AppContext.TryGetSwitch(SwitchName, out bool on)
        ? on
        : Environment.GetEnvironmentVariable(EnvironmentVariable) is "1" or "true";

    private static readonly ConditionalWeakTable<object, Record> s_records = new();
    private static readonly Lock s_lock = new();

    /// <summary>How many times a hook ran (a test seam: the stress lanes report it, so an audit that ran can be told from one that did not).</summary>
    internal static long Checks => Interlocked.Read(ref s_checks);

    private static long s_checks;

    /// <summary><paramref name="holder"/> becomes the one holder of <paramref name="thing"/>.</summary>
    internal static void Take(object thing, object holder) => Update(thing, record =>
    {
        object? other = null;
        return record.Holder?.TryGetTarget(out other) == true ? $"taken by {Describe(holder)} while {Describe(other!)} holds it" : null;
    }, record => record.Holder = new WeakReference<object>(holder));

    /// <summary><paramref name="holder"/> gives <paramref name="thing"/> up; it must be the holder.</summary>
    internal static void Give(object thing, object holder) => Update(thing, record =>
    {
        object? held = null;
        return record.Holder?.TryGetTarget(out held) == true && held == holder ? null : $"given up by {Describe(holder)}, which does not hold it";
    }, record => record.Holder = null);

    /// <summary>The reclaimer takes <paramref name="thing"/> back from its dropped holder, which must be unreachable.</summary>
    internal static void GiveDropped(object thing) => Update(thing, record =>
    {
        object? held = null;
        return record.Holder is null ? "taken back for a dropped holder, but nobody held it"
            : record.Holder.TryGetTarget(out held) ? $"taken back for a dropped holder while {Describe(held)} is reachable"
            : null;
    }, record => record.Holder = null);

    /// <summary>A handle goes into a slot (<paramref name="into"/>), which it must not be in, or out of one it must be in.</summary>
    internal static void InSlot(object handle, bool into) => Update(handle, record =>
        record.InSlot == into ? (into ? "put into a slot while it is in one" : "taken out of a slot it is not in") : null,
        record => record.InSlot = into);

    // Checks the record of `thing` under the lock (`broken` says what is wrong, or null), then changes it.
    private static void Update(object thing, Func<Record, string?> broken, Action<Record> change)
    {
        lock (s_lock)
        {
            Record record = s_records.GetOrCreateValue(thing);
            if (broken(record) is { } what)
            {
                Fail($"{Describe(thing)} {what}");
            }

            change(record);
            s_checks++;
        }
    }

    private static string Describe(object thing) => $"{thing.GetType().Name}#{RuntimeHelpers.GetHashCode(thing)}";

    [DoesNotReturn]
    private static void Fail(string what) => Environment.FailFast($"CachedAes ownership audit: {what}.");

    private sealed class Record
    {
        public WeakReference<object>? Holder;
        public bool InSlot;
    }
}
