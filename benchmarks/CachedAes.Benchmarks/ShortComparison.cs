using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Reports;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// The last thing a run prints: BenchmarkDotNet's own joined summary table again, narrowed to the columns that
/// answer "how much faster, does it allocate, does it throw" (Mean, Ratio as a trend, Allocated, Exceptions, and the
/// setup check's counts where a class has one: <see cref="SetupCheckColumn"/>), followed by the checks a reader would
/// otherwise have to dig out of the log: rows without a result (with the reason the benchmark's own check gave) and
/// CachedAes steady-state rows that allocated. Stock .NET 11's exceptions on a shared instance are in the table, not a
/// failure.
/// </summary>
internal static class ShortComparison
{
    /// <summary>The smallest object .NET allocates on a 64-bit process (header, method table pointer, one field).</summary>
    private const long SmallestObject = 24;

    /// <summary>The columns BenchmarkDotNet shows in the full table but the short one leaves out.</summary>
    private static readonly string[] HiddenColumns =
    [
        "Error", "StdDev", "Median", "RatioSD", "Gen0", "Gen1", "Gen2", "Alloc Ratio",
    ];

    /// <summary>Prints the short table and the checks; returns false when a check failed.</summary>
    public static bool PrintAndSave(IReadOnlyList<Summary> summaries)
    {
        ILogger logger = ConsoleLogger.Default;
        if (summaries.Count == 0 || summaries.All(s => s.Reports.IsEmpty))
        {
            logger.WriteLineError("// No benchmark ran (check the filter).");
            return false;
        }

        bool clean = true;
        foreach (Summary summary in summaries.Where(s => !s.Reports.IsEmpty))
        {
            Summary brief = Narrow(summary);
            logger.WriteLine();
            logger.WriteLineHeader("// * Short comparison: CachedAes against stock Aes.Create() *");
            logger.WriteLineInfo("// Ratio is against the Stock (baseline) row with the same parameters; " +
                "Allocated is per operation. The full table, CSV and JSON are in " + summary.ResultsDirectoryPath);
            MarkdownExporter.Console.ExportToLog(brief, logger);
            string file = Path.Combine(summary.ResultsDirectoryPath, "CachedAes-short-comparison.md");
            using (StreamLogger fileLogger = new(file, append: false))
            {
                MarkdownExporter.GitHub.ExportToLog(brief, fileLogger);
            }

            logger.WriteLineInfo("// Short table saved: " + file);

            clean &= PrintChecks(summary, logger);
        }

        return clean;
    }

    private static Summary Narrow(Summary summary) => new(
        summary.Title,
        summary.Reports,
        summary.HostEnvironmentInfo,
        summary.ResultsDirectoryPath,
        summary.LogFilePath,
        summary.TotalTime,
        summary.Style.CultureInfo,
        summary.ValidationErrors,
        summary.ColumnHidingRules.AddRange(HiddenColumns.Select(name => (IColumnHidingRule)new ColumnHidingByNameRule(name))),
        summary.Style);

    private static bool PrintChecks(Summary summary, ILogger logger)
    {
        bool clean = true;
        List<string> reasons = FailureReasons(summary.LogFilePath);
        foreach (BenchmarkReport report in summary.Reports.Where(r => !r.Success || r.ResultStatistics is null))
        {
            clean = false;
            logger.WriteLineError($"NO RESULT: {Describe(report)}");
        }

        foreach (string reason in reasons)
        {
            logger.WriteLineError("  reason: " + reason);
        }

        // CachedAes in steady state (a kept instance, or one shared instance) must not allocate per call.
        foreach (BenchmarkReport report in summary.Reports.Where(r => r.Success && IsCachedSteadyState(r)))
        {
            long bytes = report.GcStats.GetBytesAllocatedPerOperation(report.BenchmarkCase) ?? 0;
            if (bytes > 0 && bytes < SmallestObject && BenchmarkSetup.IsWine)
            {
                // BenchmarkDotNet counts every thread's allocations during the measured iteration. Under Wine the
                // runtime allocates a few KB per iteration on its own (the floor rows, which allocate nothing, show
                // 4-5 KB there, and 0-64 B on Linux), which can round to 1 B per operation in a short iteration. Less
                // than one object per call is not a per-call allocation; on Linux and Windows any byte still fails.
                logger.WriteLineInfo($"// Under Wine: {Describe(report)} allocated {bytes} B per operation, less than one object per call: the process's background allocations, not counted.");
                continue;
            }

            if (bytes > 0)
            {
                clean = false;
                logger.WriteLineError($"ALLOCATES: {Describe(report)} allocated {bytes} B per operation; expected 0 B.");
            }
        }

        if (clean)
        {
            logger.WriteLineInfo("// Every case has a result; no CachedAes steady-state case allocated.");
        }

        return clean;
    }

    private static bool IsCachedSteadyState(BenchmarkReport report)
    {
        string type = report.BenchmarkCase.Descriptor.Type.Name;
        string method = report.BenchmarkCase.Descriptor.WorkloadMethod.Name;
        return (type.EndsWith("Steady", StringComparison.Ordinal) || type.EndsWith("Shared", StringComparison.Ordinal))
            && method.Contains("Cached", StringComparison.Ordinal);
    }

    private static string Describe(BenchmarkReport report) =>
        $"{report.BenchmarkCase.Descriptor.Type.Name}.{report.BenchmarkCase.Descriptor.WorkloadMethod.Name} " +
        $"({report.BenchmarkCase.Parameters.DisplayInfo})";

    // The benchmark processes write their failures to the log; the suite's own checks start with a marker.
    private static List<string> FailureReasons(string logFilePath)
    {
        if (string.IsNullOrEmpty(logFilePath) || !File.Exists(logFilePath))
        {
            return [];
        }

        return
        [
            .. File.ReadLines(logFilePath)
                .Select(line => line.IndexOf(BenchmarkCheck.Marker, StringComparison.Ordinal) is int at and >= 0 ? line[at..] : null)
                .OfType<string>()
                .Distinct(),
        ];
    }
}
