using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// The quick mode, the main job's default: the cases of <see cref="QuickSubsetAttribute"/> with the quick job, measured in
/// process (no generated project is built) on .NET 10 here and on .NET 11.0.0 in a second process that runs the net11.0
/// build of these sources (CachedAes.Benchmarks.Net11, built with this project) on artifacts/dotnet11, in process too.
/// Each process prints BenchmarkDotNet's table; this one then prints both side by side: per case the mean on each
/// runtime, the ratio to stock on the same runtime, and the bytes allocated.
/// </summary>
internal static class QuickRun
{
    /// <summary>The option that makes a process the .NET 11 half: it writes its rows to the file named after it.</summary>
    public const string ChildOption = "--quick-child";

    /// <summary>One measured case: its class, method and parameters, mean time and allocation.</summary>
    private sealed record Row(string Type, string Method, string Parameters, double MeanNs, long AllocatedBytes, bool Baseline);

    /// <summary>Runs the quick mode; <paramref name="rest"/> goes to BenchmarkSwitcher (for example <c>--artifacts</c>).</summary>
    public static int Run(Type[] types, List<string> rest, bool net11)
    {
        string? childOutput = TakeValue(rest, ChildOption);
        string artifacts = TakeValue(rest, "--artifacts") ?? Path.Combine(Environment.CurrentDirectory, "BenchmarkDotNet.Artifacts");
        bool isChild = childOutput is not null;
        string label = isChild ? ".NET 11" : ".NET 10";
        if (!isChild && net11 && !BuildNet11Half())
        {
            net11 = false;
        }

        Console.WriteLine($"// Quick run on {RuntimeInformation.FrameworkDescription} ({label} half), in process, quick job.");
        Console.WriteLine(PlatformFloor.Describe());

        ManualConfig config = BenchmarkSetup.CreateBaseConfig()
            .WithArtifactsPath(Path.Combine(artifacts, isChild ? "net11" : "net10"));
        config.AddJob(BenchmarkSetup.QuickJob().WithToolchain(BenchmarkDotNet.Toolchains.InProcess.Emit.InProcessEmitToolchain.Instance).WithId(isChild ? "Quick-net11" : "Quick-net10"));
        config.AddFilter(new SimpleFilter(QuickSubsetAttribute.Includes));
        config.AddFilter(new SimpleFilter(Net11OnlyAttribute.Includes));
        config.AddFilter(new SimpleFilter(FloorRowAttribute.Includes));
        if (!rest.Any(a => a is "--filter" or "-f"))
        {
            rest.AddRange(["--filter", "*"]);
        }

        IReadOnlyList<Summary> summaries = [.. BenchmarkSwitcher.FromTypes(types).Run([.. rest], config)];
        bool clean = ShortComparison.PrintAndSave(summaries);
        List<Row> rows = [.. summaries.SelectMany(s => s.Reports).Where(r => r.ResultStatistics is not null).Select(ToRow)];
        if (isChild)
        {
            File.WriteAllLines(childOutput!, rows.Select(Format));
            return clean ? 0 : 1;
        }

        List<Row>? net11Rows = null;
        if (net11)
        {
            string file = Path.Combine(artifacts, "net11-rows.tsv");
            int status = RunNet11Half(rest, artifacts, file);
            net11Rows = status == 0 || File.Exists(file) ? [.. File.ReadAllLines(file).Select(Parse)] : null;
            clean &= status == 0;
        }

        PrintSideBySide(rows, net11Rows);
        foreach (string line in FloorRowAttribute.DescribeLeftOut([.. rows.Select(r => r.Type).Distinct(StringComparer.Ordinal)]))
        {
            Console.WriteLine(line);
        }

        return clean ? 0 : 1;
    }

    private static string Net11Project => Path.Combine(Runtimes.RepositoryRoot, "benchmarks", "CachedAes.Benchmarks.Net11");

    // Before anything is measured, so that the build does not run beside a measurement: the net11.0 build of these
    // sources, with the SDK that runs this process (an incremental build when nothing changed). Without the repository
    // (a copy published elsewhere) or without a dotnet to build with (a self-contained copy, as under Wine), the run is
    // the .NET 10 half alone, and says so.
    private static bool BuildNet11Half()
    {
        if (!Runtimes.InRepository)
        {
            Console.WriteLine($"// No .NET 11 half: {AppContext.BaseDirectory} is not inside the repository (benchmarks/CachedAes.Benchmarks.Net11 is needed): .NET 10 only.");
            return false;
        }

        Console.WriteLine("// Building the .NET 11 half (benchmarks/CachedAes.Benchmarks.Net11)...");
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in new[] { "build", Net11Project, "-c", "Release", "-nologo", "-v", "quiet" })
        {
            start.ArgumentList.Add(argument);
        }

        using Process? build = TryStart(start);
        if (build is null)
        {
            return false;
        }

        string output = build.StandardOutput.ReadToEnd() + build.StandardError.ReadToEnd();
        build.WaitForExit();
        if (build.ExitCode != 0)
        {
            Console.WriteLine(output);
            Console.WriteLine("// The .NET 11 half did not build: .NET 10 only.");
        }

        return build.ExitCode == 0;
    }

    // Null, after saying so, when there is no dotnet to start (a self-contained copy, as under Wine).
    private static Process? TryStart(ProcessStartInfo start)
    {
        try
        {
            return Process.Start(start);
        }
        catch (Win32Exception e)
        {
            Console.WriteLine($"// No .NET 11 half: '{start.FileName}' could not be started to build it ({e.Message}): .NET 10 only.");
            return null;
        }
    }

    private static int RunNet11Half(List<string> rest, string artifacts, string file)
    {
        string net11Build = Path.Combine(Net11Project, "bin", "Release", "net11.0", "CachedAes.Benchmarks.dll");
        if (!File.Exists(net11Build) || !File.Exists(Runtimes.Net11Dotnet))
        {
            Console.WriteLine($"// No .NET 11 half: {net11Build} or {Runtimes.Net11Dotnet} is missing (build the project with -c Release).");
            return 1;
        }

        File.Delete(file);
        var start = new ProcessStartInfo(Runtimes.Net11Dotnet) { UseShellExecute = false };
        foreach (string argument in new[] { net11Build, ChildOption, file, "--artifacts", artifacts }.Concat(rest))
        {
            start.ArgumentList.Add(argument);
        }

        using Process child = Process.Start(start)!;
        child.WaitForExit();
        return child.ExitCode;
    }

    private static void PrintSideBySide(List<Row> net10, List<Row>? net11)
    {
        Console.WriteLine();
        Console.WriteLine("// * Quick comparison, both runtimes: mean per operation (ns), ratio to stock on the same runtime, bytes allocated *");
        Console.WriteLine("| Case | Method | .NET 10 ns | vs stock | .NET 11 ns | vs stock | Allocated (10 / 11) |");
        Console.WriteLine("|:---|:---|---:|---:|---:|---:|---:|");
        Dictionary<string, Row> eleven = (net11 ?? []).ToDictionary(Key);
        Dictionary<string, Row> stock10 = net10.Where(r => r.Baseline).ToDictionary(r => r.Type + "|" + r.Parameters);
        Dictionary<string, Row> stock11 = (net11 ?? []).Where(r => r.Baseline).ToDictionary(r => r.Type + "|" + r.Parameters);
        foreach (Row row in net10.OrderBy(r => r.Type, StringComparer.Ordinal).ThenBy(r => r.Parameters, StringComparer.Ordinal))
        {
            eleven.TryGetValue(Key(row), out Row? other);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {row.Type} {row.Parameters} | {row.Method} | {row.MeanNs:N1} | {Ratio(row, stock10)} | {(other is null ? "-" : other.MeanNs.ToString("N1", CultureInfo.InvariantCulture))} | {(other is null ? "-" : Ratio(other, stock11))} | {row.AllocatedBytes} B / {(other is null ? "-" : other.AllocatedBytes + " B")} |"));
        }
    }

    private static string Ratio(Row row, Dictionary<string, Row> stock) =>
        row.Baseline ? "baseline"
        : stock.TryGetValue(row.Type + "|" + row.Parameters, out Row? baseline) && row.MeanNs > 0
            ? baseline.MeanNs >= row.MeanNs
                ? string.Create(CultureInfo.InvariantCulture, $"{baseline.MeanNs / row.MeanNs:0.00}x faster")
                : string.Create(CultureInfo.InvariantCulture, $"{row.MeanNs / baseline.MeanNs:0.00}x slower")
            : "-";

    private static string Key(Row row) => row.Type + "|" + row.Method + "|" + row.Parameters;

    private static Row ToRow(BenchmarkReport report) => new(
        report.BenchmarkCase.Descriptor.Type.Name,
        report.BenchmarkCase.Descriptor.WorkloadMethod.Name,
        report.BenchmarkCase.Parameters.DisplayInfo,
        report.ResultStatistics!.Mean,
        report.GcStats.GetBytesAllocatedPerOperation(report.BenchmarkCase) ?? 0,
        report.BenchmarkCase.Descriptor.Baseline);

    private static string Format(Row row) => string.Join('\t', row.Type, row.Method, row.Parameters,
        row.MeanNs.ToString("R", CultureInfo.InvariantCulture), row.AllocatedBytes.ToString(CultureInfo.InvariantCulture), row.Baseline ? "baseline" : "");

    private static Row Parse(string line)
    {
        string[] f = line.Split('\t');
        return new Row(f[0], f[1], f[2], double.Parse(f[3], CultureInfo.InvariantCulture), long.Parse(f[4], CultureInfo.InvariantCulture), f[5] == "baseline");
    }

    private static string? TakeValue(List<string> args, string option)
    {
        int at = args.IndexOf(option);
        if (at < 0 || at + 1 >= args.Count)
        {
            return null;
        }

        string value = args[at + 1];
        args.RemoveRange(at, 2);
        return value;
    }
}
