using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using BenchmarkDotNet.Reports;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// A one-table digest of every Stock/Cached pair, easy to paste into notes: times, speed-up (stock time divided
/// by cached time), and bytes allocated per operation.
/// </summary>
internal static class CompactSummary
{
    public static string Build(IEnumerable<Summary> summaries)
    {
        StringBuilder text = new();
        text.AppendLine("| Benchmark | Parameters | Stock | Cached | Cached/Stock | Speed-up | Stock alloc | Cached alloc |");
        text.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|");
        List<string> warnings = [];
        foreach (Summary summary in summaries)
        {
            foreach (IGrouping<string, BenchmarkReport> pair in summary.Reports.GroupBy(
                r => r.BenchmarkCase.Descriptor.Type.Name + "|" + r.BenchmarkCase.Parameters.DisplayInfo + "|" + r.BenchmarkCase.Job.DisplayInfo))
            {
                BenchmarkReport? stock = pair.FirstOrDefault(r => r.BenchmarkCase.Descriptor.WorkloadMethod.Name == "Stock");
                BenchmarkReport? cached = pair.FirstOrDefault(r => r.BenchmarkCase.Descriptor.WorkloadMethod.Name == "Cached");
                BenchmarkReport any = pair.First();
                string name = any.BenchmarkCase.Descriptor.Type.Name;
                string parameters = string.Join(", ", any.BenchmarkCase.Parameters.Items.Select(p => p.Value?.ToString()));
                double? stockNs = stock?.ResultStatistics?.Mean;
                double? cachedNs = cached?.ResultStatistics?.Mean;
                long? stockBytes = Allocated(stock);
                long? cachedBytes = Allocated(cached);
                string ratio = stockNs is > 0 && cachedNs is not null ? Format(cachedNs.Value / stockNs.Value, "0.000") : "n/a";
                string speedUp = stockNs is not null && cachedNs is > 0 ? Format(stockNs.Value / cachedNs.Value, "0.00") + "x" : "n/a";
                text.Append(CultureInfo.InvariantCulture,
                    $"| {name} | {parameters} | {Time(stockNs)} | {Time(cachedNs)} | {ratio} | {speedUp} | {Bytes(stockBytes)} | {Bytes(cachedBytes)} |");
                text.AppendLine();
                if (name.EndsWith("Steady", StringComparison.Ordinal) && cachedBytes is > 0)
                {
                    warnings.Add($"WARNING: {name} ({parameters}) Cached allocated {cachedBytes} B per operation; expected 0 B.");
                }

                if (stockNs is null || cachedNs is null)
                {
                    warnings.Add($"WARNING: {name} ({parameters}) has no result for " +
                        (stockNs is null ? cachedNs is null ? "Stock or Cached" : "Stock" : "Cached") + " (see the log above).");
                }
            }
        }

        foreach (string warning in warnings)
        {
            text.AppendLine(warning);
        }

        return text.ToString();
    }

    /// <summary>Prints the digest and saves it next to BenchmarkDotNet's own exports.</summary>
    public static void PrintAndSave(IReadOnlyList<Summary> summaries)
    {
        if (summaries.Count == 0 || summaries.All(s => s.Reports.IsEmpty))
        {
            Console.WriteLine("// No benchmark ran.");
            return;
        }

        string table = Build(summaries);
        Console.WriteLine();
        Console.WriteLine("// * CachedAes vs stock Aes.Create() (Speed-up = stock time / cached time) *");
        Console.WriteLine(table);
        string directory = summaries[0].ResultsDirectoryPath;
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, "CachedAes-compact-summary.md");
        File.WriteAllText(path, table);
        Console.WriteLine("Saved: " + path);
    }

    private static long? Allocated(BenchmarkReport? report) =>
        report is { Success: true } ? report.GcStats.GetBytesAllocatedPerOperation(report.BenchmarkCase) : null;

    private static string Format(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);

    private static string Bytes(long? bytes) => bytes is null ? "n/a" : bytes.Value.ToString(CultureInfo.InvariantCulture) + " B";

    private static string Time(double? nanoseconds) => nanoseconds switch
    {
        null => "n/a",
        < 1_000 => Format(nanoseconds.Value, "0.0") + " ns",
        < 1_000_000 => Format(nanoseconds.Value / 1_000, "0.00") + " us",
        _ => Format(nanoseconds.Value / 1_000_000, "0.00") + " ms",
    };
}
