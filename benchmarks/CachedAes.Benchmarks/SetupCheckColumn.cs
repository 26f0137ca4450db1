using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Two columns of the summary, and so of BenchmarkDotNet's CSV and markdown exports: how many calls of a benchmark's
/// setup check threw (<c>Check threw</c>) and how many returned bytes other than stock's (<c>Check wrong</c>). Only
/// <see cref="EcbCbcShared"/> has such a check (each thread 20,000 calls started together); other rows show "-". The
/// measured calls' exceptions are BenchmarkDotNet's own <c>Exceptions</c> column (<see cref="BenchmarkSetup.CreateBaseConfig"/>
/// adds its exception diagnoser).
/// </summary>
internal sealed class SetupCheckColumn : IColumn
{
    /// <summary>The calls of the setup check that threw.</summary>
    public static readonly IColumn Threw = new SetupCheckColumn("Check threw", counts => counts.Threw, "threw");

    /// <summary>The calls of the setup check that returned bytes other than stock's.</summary>
    public static readonly IColumn Wrong = new SetupCheckColumn("Check wrong", counts => counts.Wrong, "returned bytes other than stock's");

    private readonly Func<SetupCheck.Counts, long> _pick;

    private SetupCheckColumn(string name, Func<SetupCheck.Counts, long> pick, string what)
    {
        ColumnName = name;
        _pick = pick;
        Legend = $"Calls of the global setup's check that {what} (EcbCbcShared: 20,000 per thread, started together)";
    }

    /// <inheritdoc/>
    public string Id => nameof(SetupCheckColumn) + "." + ColumnName;

    /// <inheritdoc/>
    public string ColumnName { get; }

    /// <inheritdoc/>
    public bool AlwaysShow => true;

    /// <inheritdoc/>
    public ColumnCategory Category => ColumnCategory.Custom;

    /// <inheritdoc/>
    public int PriorityInCategory => 0;

    /// <inheritdoc/>
    public bool IsNumeric => true;

    /// <inheritdoc/>
    public UnitType UnitType => UnitType.Dimensionless;

    /// <inheritdoc/>
    public string Legend { get; }

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) =>
        SetupCheck.Find(summary, benchmarkCase) is { } counts ? _pick(counts).ToString(CultureInfo.InvariantCulture) : "-";

    /// <inheritdoc/>
    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => GetValue(summary, benchmarkCase);

    /// <inheritdoc/>
    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <inheritdoc/>
    public bool IsAvailable(Summary summary) => summary.BenchmarksCases.Any(c => SetupCheck.Find(summary, c) is not null);
}

/// <summary>
/// The counts of a benchmark's setup check, from the process that ran it to <see cref="SetupCheckColumn"/>. Out of
/// process, the benchmark process prints one <see cref="Marker"/> line and BenchmarkDotNet keeps that process's output
/// with the case's report (<c>ExecuteResult.StandardOutput</c>); in process (the quick mode), the check ran in this
/// process and its counts are kept here, by case.
/// </summary>
internal static class SetupCheck
{
    /// <summary>Starts the line a benchmark process prints: <c>SetupCheck: Case calls=N;threw=N;wrong=N</c>.</summary>
    public const string Marker = "SetupCheck:";

    private static readonly ConcurrentDictionary<string, Counts> InThisProcess = new(StringComparer.Ordinal);

    /// <summary>Calls made, calls that threw, calls that returned other bytes than stock's.</summary>
    internal sealed record Counts(long Calls, long Threw, long Wrong)
    {
        public static Counts operator +(Counts a, Counts b) => new(a.Calls + b.Calls, a.Threw + b.Threw, a.Wrong + b.Wrong);
    }

    /// <summary>Records a check's counts: called by the benchmark's global setup.</summary>
    public static void Report(string type, string method, IEnumerable<(string Name, object Value)> parameters, long calls, long threw, long wrong)
    {
        string key = Key(type, method, parameters.Select(p => (p.Name, Convert.ToString(p.Value, CultureInfo.InvariantCulture) ?? string.Empty)));
        Counts counts = new(calls, threw, wrong);
        InThisProcess.AddOrUpdate(key, counts, (_, before) => before + counts);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{Marker} {key} calls={calls};threw={threw};wrong={wrong}"));
    }

    /// <summary>The counts of a case, or null when it has no setup check (or did not run).</summary>
    public static Counts? Find(Summary summary, BenchmarkCase benchmarkCase)
    {
        Counts? printed = null;
        foreach (string line in summary[benchmarkCase]?.ExecuteResults.SelectMany(r => r.StandardOutput ?? []) ?? [])
        {
            if (line.StartsWith(Marker, StringComparison.Ordinal) && Parse(line) is { } counts)
            {
                printed = printed is null ? counts : printed + counts;
            }
        }

        return printed ?? InThisProcess.GetValueOrDefault(Key(
            benchmarkCase.Descriptor.Type.Name,
            benchmarkCase.Descriptor.WorkloadMethod.Name,
            benchmarkCase.Parameters.Items.Select(p => (p.Name, Convert.ToString(p.Value, CultureInfo.InvariantCulture) ?? string.Empty))));
    }

    private static string Key(string type, string method, IEnumerable<(string Name, string Value)> parameters) =>
        $"{type}.{method}({string.Join('&', parameters.OrderBy(p => p.Name, StringComparer.Ordinal).Select(p => p.Name + "=" + p.Value))})";

    private static Counts? Parse(string line)
    {
        Dictionary<string, long> fields = [];
        foreach (string field in line[(line.LastIndexOf(' ') + 1)..].Split(';'))
        {
            string[] pair = field.Split('=', 2);
            if (pair.Length == 2 && long.TryParse(pair[1], NumberStyles.None, CultureInfo.InvariantCulture, out long value))
            {
                fields[pair[0]] = value;
            }
        }

        return fields.TryGetValue("calls", out long calls) && fields.TryGetValue("threw", out long threw) && fields.TryGetValue("wrong", out long wrong)
            ? new Counts(calls, threw, wrong)
            : null;
    }
}
