using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using BenchmarkDotNet.Reports;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// A CSV export of BenchmarkDotNet's (the <c>CsvExporter</c> of <see cref="BenchmarkSetup.CreateBaseConfig"/>) read
/// back: one dictionary per row, from column name to the cell as BenchmarkDotNet wrote it. The quick mode's
/// side-by-side table (<see cref="QuickRun"/>) is made of these cells, so that its means, ratios and allocations are
/// the exports' own.
/// </summary>
internal sealed class CsvExport
{
    private CsvExport(List<Dictionary<string, string>> rows) => Rows = rows;

    /// <summary>The rows, in the export's order.</summary>
    public IReadOnlyList<Dictionary<string, string>> Rows { get; }

    /// <summary>The CSV file BenchmarkDotNet wrote for <paramref name="summary"/>, or null if there is none.</summary>
    public static string? FileOf(Summary summary)
    {
        // BenchmarkDotNet names the files of a summary after its one class (namespace included), or after the summary's
        // title when it has several classes (a joined summary).
        Type[] types = [.. summary.BenchmarksCases.Select(c => c.Descriptor.Type).Distinct()];
        string name = types.Length == 1 ? types[0].FullName ?? types[0].Name : summary.Title;
        string path = Path.Combine(summary.ResultsDirectoryPath, name + "-report.csv");
        if (File.Exists(path))
        {
            return path;
        }

        // Should a BenchmarkDotNet version name it otherwise (a nested or generic class), the newest CSV export of the
        // summary's results folder, if written during this summary's run.
        DirectoryInfo results = new(summary.ResultsDirectoryPath);
        DateTime started = DateTime.Now - summary.TotalTime;
        return results.Exists
            ? results.GetFiles("*-report.csv").Where(f => f.LastWriteTime >= started).OrderByDescending(f => f.LastWriteTime).FirstOrDefault()?.FullName
            : null;
    }

    /// <summary>Reads an export.</summary>
    public static CsvExport Read(string path)
    {
        List<List<string>> lines = [.. File.ReadLines(path).Where(line => line.Length > 0).Select(Split)];
        List<string> header = lines.Count > 0 ? lines[0] : [];
        return new CsvExport([.. lines.Skip(1).Select(cells => header
            .Select((name, i) => (name, cell: i < cells.Count ? cells[i] : string.Empty))
            .GroupBy(c => c.name, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.First().cell, StringComparer.Ordinal))]);
    }

    // RFC 4180 as BenchmarkDotNet writes it: a cell holding the separator or a quote is quoted, its quotes doubled.
    private static List<string> Split(string line)
    {
        List<string> cells = [];
        StringBuilder cell = new();
        bool quoted = false;
        for (int i = 0; i < line.Length; i++)
        {
            char c = line[i];
            if (quoted && c == '"' && i + 1 < line.Length && line[i + 1] == '"')
            {
                cell.Append('"');
                i++;
            }
            else if (c == '"')
            {
                quoted = !quoted;
            }
            else if (c == ',' && !quoted)
            {
                cells.Add(cell.ToString());
                cell.Clear();
            }
            else
            {
                cell.Append(c);
            }
        }

        cells.Add(cell.ToString());
        return cells;
    }
}
