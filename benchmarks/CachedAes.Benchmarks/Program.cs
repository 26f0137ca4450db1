using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// CachedAes versus stock <c>Aes.Create()</c>, every case on .NET 10 and on .NET 11.0.0 (<see cref="Runtimes"/>).
/// <list type="bullet">
/// <item>no arguments (or <c>--quick</c>, or only options such as <c>--artifacts</c>): the cases marked
/// <see cref="QuickSubsetAttribute"/> with the quick job, in process on .NET 10 and then on .NET 11 in a second process
/// (<see cref="QuickRun"/>), and a table of both (CONTRIBUTING.md has the time measured from a fresh clone). With
/// <c>--job</c>, the same cases in BenchmarkDotNet's own processes, both runtimes in one run.</item>
/// <item><c>--full</c>: every benchmark with BenchmarkDotNet's default job; <c>--full --job short</c> is the report's
/// run (CONTRIBUTING.md and the benchmarks README give the times).</item>
/// <item><c>--job short|medium|long|default|dry</c>: the job every case runs with, once per runtime.</item>
/// <item><c>--no-net11</c>: the .NET 10 job only.</item>
/// <item><c>--cpu-intrinsics</c> (with <c>--job</c>, <c>--full</c> or <c>--filter</c>): each job once more with
/// <c>CACHEDAES_USE_CPU_INTRINSICS=1</c> in the benchmark process (<see cref="Runtimes.CpuIntrinsicsJobs"/>), so that
/// its Cached rows measure the opt-in CPU backend beside the platform backend's, in the same run.</item>
/// <item><c>--inprocess</c> (with any of the above): run in this process (InProcessEmitToolchain) instead of
/// building and launching a separate benchmark process; .NET 10 only.</item>
/// <item>anything else goes to <see cref="BenchmarkSwitcher"/> unchanged, e.g. <c>--filter *Kwp*</c>,
/// <c>--artifacts DIR</c>.</item>
/// </list>
/// Extra arguments combine with <c>--quick</c>/<c>--full</c>, e.g. <c>--quick --filter *Kwp*</c> or
/// <c>--full --job short</c>. BenchmarkDotNet prints one joined table; the short comparison comes last.
/// </summary>
internal static class Program
{
    /// <summary>Every benchmark class; add new ones here (and mark them <see cref="QuickSubsetAttribute"/> to run them in the quick mode).</summary>
    private static readonly Type[] BenchmarkTypes =
    [
        typeof(EcbCbcSteady),
        typeof(EcbCbcSingle),
        typeof(EcbCbcTwice),
        typeof(EcbCbcTwiceDropped),
        typeof(EcbCbcShared),
        typeof(KwpSteady),
        typeof(KwpSingle),
        typeof(Rfc3394Steady),
        typeof(TransformShapes),
        typeof(PerMessage),
        typeof(NewKeyApiFloor),
        typeof(MetricsOverhead),
        typeof(JweRoundTrip),
        typeof(IdentityModelKeyWrap),
        typeof(IdentityModelContentDecryption),
        typeof(JoseJwtToken),
        typeof(JoseJwtKeyWrap),
        typeof(DataProtectionRoundTrip),
        typeof(AesInstructionBound),
    ];

    private static int Main(string[] args)
    {
        BenchmarkSetup.KeepWmiOutUnderWine();
        List<string> rest = [.. args];
        if (rest.Contains(QuickRun.ChildOption))
        {
            return QuickRun.Run(BenchmarkTypes, rest, net11: false);
        }

        bool full = Take(rest, "--full");
        bool inProcess = Take(rest, "--inprocess");
        bool net11 = !Take(rest, "--no-net11") && !inProcess;
        bool cpuIntrinsics = Take(rest, "--cpu-intrinsics");
        string? jobName = TakeValue(rest, "--job") ?? TakeValue(rest, "-j");
        // Quick unless --full or a selection of BenchmarkSwitcher's own (--filter, --list, ...): options such as
        // --artifacts or --job keep the quick subset.
        bool quick = Take(rest, "--quick") || (!full && !rest.Any(IsSelection));
        if (full && quick)
        {
            Console.Error.WriteLine("Use either --quick or --full, not both.");
            return 2;
        }

        // The quick mode (the default) runs in process, once per runtime (QuickRun); an explicit --job keeps
        // BenchmarkDotNet's own processes.
        if (quick && jobName is null)
        {
            if (cpuIntrinsics)
            {
                Console.Error.WriteLine("--cpu-intrinsics needs BenchmarkDotNet's own processes: add --job (e.g. --job short), --full or --filter.");
                return 2;
            }

            return QuickRun.Run(BenchmarkTypes, rest, net11);
        }

        if (BenchmarkSetup.JobTemplate(jobName, quick) is not (Job template, string name))
        {
            Console.Error.WriteLine($"Unknown --job {jobName}: use short, medium, long, default or dry.");
            return 2;
        }

        ManualConfig config = BenchmarkSetup.CreateBaseConfig();
        config.AddJob(BenchmarkSetup.ToolchainMutator(inProcess));
        if (cpuIntrinsics && inProcess)
        {
            Console.Error.WriteLine("--cpu-intrinsics sets an environment variable for the benchmark process: not with --inprocess.");
            return 2;
        }

        Job[] jobs = [.. Runtimes.Jobs(template, name, net11)];
        config.AddJob(jobs);
        if (cpuIntrinsics)
        {
            config.AddJob([.. Runtimes.CpuIntrinsicsJobs(jobs)]);
        }
        config.AddFilter(new SimpleFilter(Net11OnlyAttribute.Includes));
        config.AddFilter(new SimpleFilter(FloorRowAttribute.Includes));
        if (quick)
        {
            config.AddFilter(new SimpleFilter(QuickSubsetAttribute.Includes));
        }

        if ((quick || full) && !rest.Any(a => a is "--filter" or "-f"))
        {
            rest.AddRange(["--filter", "*"]);

            // The bare instructions' bound is not a comparison with stock (and needs AES-NI): only by name.
            config.AddFilter(new SimpleFilter(b => b.Descriptor.Type != typeof(AesInstructionBound)));
        }

        using (CachedAes probe = CachedAes.Create())
        {
            Console.WriteLine(
                $"// CachedAes backend: {probe.Backend}; {RuntimeInformation.FrameworkDescription}; " +
                $"{RuntimeInformation.OSDescription} {RuntimeInformation.ProcessArchitecture}; " +
                $"mode: {(quick ? "quick" : full ? "full" : "custom")}, job {name}{(inProcess ? ", in-process" : string.Empty)}; " +
                (net11 ? $".NET 11 job on {Runtimes.Net11Dotnet}" : "no .NET 11 job") +
                (cpuIntrinsics ? $"; each job also with {Runtimes.CpuIntrinsicsVariable}=1 (ids with {Runtimes.CpuIntrinsicsMarker})" : string.Empty));
        }

        Console.WriteLine(PlatformFloor.Describe());

        IReadOnlyList<Summary> summaries = [.. BenchmarkSwitcher.FromTypes(BenchmarkTypes).Run([.. rest], config)];
        if (rest.Any(a => a is "--list" or "--help" or "--version" or "--info"))
        {
            return 0; // BenchmarkSwitcher answered; nothing ran
        }

        bool clean = ShortComparison.PrintAndSave(summaries);
        foreach (string line in FloorRowAttribute.DescribeLeftOut([.. summaries.SelectMany(s => s.Reports).Select(r => r.BenchmarkCase.Descriptor.Type.Name).Distinct(StringComparer.Ordinal)]))
        {
            Console.WriteLine(line);
        }

        bool failed = summaries.Any(s => s.HasCriticalValidationErrors) || !clean;
        return failed ? 1 : 0;
    }

    private static bool IsSelection(string argument) =>
        argument is "--filter" or "-f" or "--list" or "--help" or "--version" or "--info" or "--allCategories" or "--anyCategories";

    private static bool Take(List<string> args, string option) =>
        args.RemoveAll(a => string.Equals(a, option, StringComparison.OrdinalIgnoreCase)) > 0;

    private static string? TakeValue(List<string> args, string option)
    {
        int at = args.FindIndex(a => string.Equals(a, option, StringComparison.OrdinalIgnoreCase));
        if (at < 0 || at + 1 >= args.Count)
        {
            return null;
        }

        string value = args[at + 1];
        args.RemoveRange(at, 2);
        return value;
    }
}
