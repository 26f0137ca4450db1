using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// CachedAes versus stock <c>Aes.Create()</c>.
/// <list type="bullet">
/// <item>no arguments (or <c>--quick</c>): the quick subset with a short job; a few minutes on 2 cores.</item>
/// <item><c>--full</c>: every benchmark with BenchmarkDotNet's default job (roughly an hour or more on 2 cores).</item>
/// <item>anything else goes to <see cref="BenchmarkSwitcher"/> unchanged, e.g. <c>--filter *Kwp*</c>.</item>
/// <item><c>--inprocess</c> (with any of the above): run in this process (InProcessEmitToolchain) instead of
/// building and launching a separate benchmark process.</item>
/// </list>
/// Extra arguments combine with <c>--quick</c>/<c>--full</c>, e.g. <c>--quick --filter *Kwp*</c> or
/// <c>--full --job short</c>.
/// </summary>
internal static class Program
{
    private static readonly Type[] BenchmarkTypes =
    [
        typeof(EcbCbcSteady), typeof(EcbCbcSingle), typeof(EcbCbcTwice), typeof(KwpSteady), typeof(KwpSingle), typeof(Rfc3394Steady),
    ];

    private static int Main(string[] args)
    {
        List<string> rest = [.. args];
        bool full = Take(rest, "--full");
        bool quick = Take(rest, "--quick") || (!full && rest.All(a => string.Equals(a, "--inprocess", StringComparison.OrdinalIgnoreCase)));
        bool inProcess = Take(rest, "--inprocess");
        if (full && quick)
        {
            Console.Error.WriteLine("Use either --quick or --full, not both.");
            return 2;
        }

        ManualConfig config = BenchmarkSetup.CreateBaseConfig();
        config.AddJob(BenchmarkSetup.ToolchainMutator(inProcess));
        if (quick)
        {
            config.AddJob(BenchmarkSetup.QuickJob());
            config.AddFilter(new SimpleFilter(BenchmarkSetup.IsInQuickSubset));
        }

        if ((quick || full) && !rest.Any(a => a is "--filter" or "-f"))
        {
            rest.AddRange(["--filter", "*"]);
        }

        using (CachedAes probe = CachedAes.Create())
        {
            Console.WriteLine(
                $"// CachedAes backend: {probe.Backend}; {RuntimeInformation.FrameworkDescription}; " +
                $"{RuntimeInformation.OSDescription} {RuntimeInformation.ProcessArchitecture}; " +
                $"mode: {(quick ? "quick" : full ? "full" : "custom")}{(inProcess ? ", in-process" : string.Empty)}");
        }

        IReadOnlyList<Summary> summaries = [.. BenchmarkSwitcher.FromTypes(BenchmarkTypes).Run([.. rest], config)];
        CompactSummary.PrintAndSave(summaries);
        bool failed = summaries.Any(s => s.HasCriticalValidationErrors || s.Reports.Any(r => !r.Success));
        return failed ? 1 : 0;
    }

    private static bool Take(List<string> args, string option)
    {
        int removed = args.RemoveAll(a => string.Equals(a, option, StringComparison.OrdinalIgnoreCase));
        return removed > 0;
    }
}
