using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Diagnostics;
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
/// Each process prints BenchmarkDotNet's table and writes its exports; this one then prints both side by side, made
/// of the two CSV exports' cells (<see cref="CsvExport"/>): per case the mean on each runtime, BenchmarkDotNet's ratio
/// to stock on the same runtime, and the bytes allocated.
/// </summary>
internal static class QuickRun
{
    /// <summary>The option that makes a process the .NET 11 half: it writes the path of its CSV export to the file named after it.</summary>
    public const string ChildOption = "--quick-child";

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
        string? export = summaries.Select(CsvExport.FileOf).FirstOrDefault(path => path is not null);
        if (isChild)
        {
            File.WriteAllText(childOutput!, export ?? string.Empty);
            return clean ? 0 : 1;
        }

        string? net11Export = null;
        if (net11)
        {
            string file = Path.Combine(artifacts, "net11-export.txt");
            int status = RunNet11Half(rest, artifacts, file);
            net11Export = File.Exists(file) && File.ReadAllText(file).Trim() is { Length: > 0 } path ? path : null;
            clean &= status == 0;
        }

        string[] parameters = [.. summaries.SelectMany(s => s.BenchmarksCases).SelectMany(c => c.Parameters.Items).Select(p => p.Name).Distinct(StringComparer.Ordinal)];
        string[] classes = [.. summaries.SelectMany(s => s.BenchmarksCases).Select(c => c.Descriptor.Type.Name).Distinct(StringComparer.Ordinal)];
        PrintSideBySide(parameters, classes.Length == 1 ? classes[0] : "-", export, net11 ? net11Export ?? string.Empty : null);
        foreach (string line in FloorRowAttribute.DescribeLeftOut(classes))
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

    // Both halves' CSV exports, row by row (matched on class, method and parameters). An export of one class has no
    // Type column: onlyClass names it. net11Export: null when there is no .NET 11 half, empty when it wrote no export.
    private static void PrintSideBySide(string[] parameters, string onlyClass, string? net10Export, string? net11Export)
    {
        if (net10Export is null)
        {
            Console.WriteLine("// No CSV export of the .NET 10 half: no side-by-side table.");
            return;
        }

        Dictionary<string, Dictionary<string, string>> eleven = net11Export is { Length: > 0 }
            ? CsvExport.Read(net11Export).Rows.GroupBy(r => Key(r, parameters), StringComparer.Ordinal).ToDictionary(g => g.Key, g => g.First(), StringComparer.Ordinal)
            : [];
        Console.WriteLine();
        Console.WriteLine("// * Quick comparison, both runtimes: BenchmarkDotNet's mean per operation, ratio to stock on the same runtime and bytes allocated, from each half's CSV export *");
        Console.WriteLine("// .NET 10: " + net10Export);
        Console.WriteLine("// .NET 11: " + (net11Export is null ? "not run (--no-net11)" : net11Export.Length == 0 ? "no export (see above)" : net11Export));
        Console.WriteLine("| Case | Method | .NET 10 ns | vs stock | .NET 11 ns | vs stock | Allocated B (10 / 11) |");
        Console.WriteLine("|:---|:---|---:|---:|---:|---:|---:|");
        foreach (Dictionary<string, string> row in CsvExport.Read(net10Export).Rows)
        {
            Dictionary<string, string>? other = eleven.GetValueOrDefault(Key(row, parameters));
            Console.WriteLine(
                $"| {(Cell(row, "Type") is "-" ? onlyClass : row["Type"])} {ParameterText(row, parameters)} | {Cell(row, "Method")} | {Cell(row, "Mean [ns]")} | {Cell(row, "Ratio")} " +
                $"| {Cell(other, "Mean [ns]")} | {Cell(other, "Ratio")} | {Cell(row, "Allocated [B]")} / {Cell(other, "Allocated [B]")} |");
        }
    }

    private static string Key(Dictionary<string, string> row, string[] parameters) =>
        Cell(row, "Type") + "|" + Cell(row, "Method") + "|" + ParameterText(row, parameters);

    // The case's parameters as BenchmarkDotNet exported them; a joined export shows "?" for another class's parameter.
    private static string ParameterText(Dictionary<string, string> row, string[] parameters) =>
        string.Join(", ", parameters.Where(p => row.TryGetValue(p, out string? value) && value is not ("?" or "")).Select(p => $"{p}={row[p]}"));

    private static string Cell(Dictionary<string, string>? row, string column) =>
        row is not null && row.TryGetValue(column, out string? value) && value.Length > 0 ? value : "-";

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
