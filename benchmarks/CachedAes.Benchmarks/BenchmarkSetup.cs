using System.Linq;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Perfolizer.Horology;

namespace CachedCryptography.Benchmarks;

/// <summary>The configurations and the quick subset.</summary>
internal static class BenchmarkSetup
{
    /// <summary>
    /// Columns, console logger, GitHub markdown + CSV exporters (to ./BenchmarkDotNet.Artifacts/results), and
    /// BenchmarkDotNet's default analysers and validators. Ratio and Alloc Ratio columns come from the
    /// <c>Baseline = true</c> Stock methods plus <c>[MemoryDiagnoser]</c> on every class.
    /// </summary>
    public static ManualConfig CreateBaseConfig()
    {
        ManualConfig config = ManualConfig.CreateEmpty()
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddLogger(ConsoleLogger.Default)
            .AddExporter(MarkdownExporter.GitHub, CsvExporter.Default)
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray());

        // Each ratio is relative to the Stock row with the same parameters.
        config.AddLogicalGroupRules(BenchmarkLogicalGroupRule.ByParams);
        return config;
    }

    /// <summary>
    /// A mutator applied to every job (the quick job, or the jobs BenchmarkDotNet builds from the arguments).
    /// Out of process: BenchmarkDotNet restores and builds a generated project that references this one. The
    /// repository sets <c>MSBuildTreatWarningsAsErrors</c>, and in that restore MSBuild turns NuGet's NU1603
    /// warnings (this machine's package source lacks some exact dependency versions of BenchmarkDotNet 0.14.0)
    /// into errors, ignoring <c>WarningsNotAsErrors</c>, so the generated project fails to build. Turning the
    /// MSBuild-level switch off for that internal build only fixes it; the normal build still treats every warning
    /// as an error. Analyzers are off in that internal build too (they do not change the compiled code and cost
    /// about half of its time). In process: the InProcessEmitToolchain (which rejects MSBuild arguments).
    /// </summary>
    public static Job ToolchainMutator(bool inProcess) => inProcess
        ? Job.Default.WithToolchain(InProcessEmitToolchain.Instance).AsMutator()
        : Job.Default.WithArguments(
        [
            new MsBuildArgument("/p:MSBuildTreatWarningsAsErrors=false"),
            new MsBuildArgument("/p:RunAnalyzers=false"),
        ]).AsMutator();

    /// <summary>
    /// A short job for the quick mode: one process, 3 warmup and 8 measured iterations of about 100 ms each.
    /// Good enough to read ratios of 1.2x or more; use the full mode for publishable numbers.
    /// </summary>
    public static Job QuickJob() => Job.Default
        .WithId("Quick")
        .WithLaunchCount(1)
        .WithWarmupCount(3)
        .WithIterationCount(8)
        .WithIterationTime(TimeInterval.FromMilliseconds(100));

    /// <summary>
    /// The quick subset (44 cases): for EncryptEcb, EncryptCbc and DecryptCbc, Steady at 16 B, 1 KiB and 16 KiB,
    /// Twice at 16 B and 1 KiB, Single at 16 B; and KWP Steady wrap/unwrap at 32 B and 4 KiB.
    /// </summary>
    public static bool IsInQuickSubset(BenchmarkCase benchmarkCase)
    {
        System.Type type = benchmarkCase.Descriptor.Type;
        object? operation = benchmarkCase.Parameters["Operation"];
        if (type == typeof(KwpSteady))
        {
            return benchmarkCase.Parameters["Length"] is 32 or 4096;
        }

        if (operation is not (CipherOperation.EncryptEcb or CipherOperation.EncryptCbc or CipherOperation.DecryptCbc))
        {
            return false;
        }

        object? size = benchmarkCase.Parameters["Size"];
        if (type == typeof(EcbCbcSteady))
        {
            return size is 16 or 1024 or 16384;
        }

        if (type == typeof(EcbCbcTwice))
        {
            return size is 16 or 1024;
        }

        return type == typeof(EcbCbcSingle) && size is 16;
    }
}
