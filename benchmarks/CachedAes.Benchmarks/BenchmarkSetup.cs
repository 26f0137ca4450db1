using System;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Environments;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Exporters.Json;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Portability;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Perfolizer.Horology;
using Perfolizer.Metrology;

namespace CachedCryptography.Benchmarks;

/// <summary>The configurations and the quick mode.</summary>
internal static class BenchmarkSetup
{
    /// <summary>
    /// BenchmarkDotNet's default columns (Mean, Error, StdDev, Median where it differs, Ratio, RatioSD, Gen0,
    /// Allocated, Alloc Ratio), its <c>Exceptions</c> column (exceptions thrown per operation, from its exception
    /// diagnoser), the setup check's counts (<see cref="SetupCheckColumn"/>), one joined summary table for every class
    /// (<see cref="ConfigOptions.JoinSummary"/>), ratios shown as a trend ("3.10x faster"), the console logger, and
    /// three exports to <c>./BenchmarkDotNet.Artifacts/results</c> (or <c>--artifacts</c>): GitHub markdown, CSV with
    /// fixed units (ns, B; what <c>scripts/benchmark-report.sh</c> and the quick mode's side-by-side table read) and
    /// brief JSON. Every column reaches the markdown and CSV exports; the brief JSON has the statistics and
    /// allocations only. Ratio and Alloc Ratio come from the <c>Baseline = true</c> method of each class and
    /// <c>[MemoryDiagnoser]</c> on every class; every ratio is relative to the baseline row with the same parameters.
    /// </summary>
    public static ManualConfig CreateBaseConfig()
    {
        SummaryStyle fixedUnits = new(
            CultureInfo.InvariantCulture,
            printUnitsInHeader: true,
            SizeUnit.B,
            TimeUnit.Nanosecond,
            printUnitsInContent: false,
            printZeroValuesInContent: true,
            maxParameterColumnWidth: 40,
            RatioStyle.Value);

        ManualConfig config = ManualConfig.CreateEmpty()
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddColumn(SetupCheckColumn.Threw, SetupCheckColumn.Wrong)
            .AddDiagnoser(ExceptionDiagnoser.Default)
            .AddLogger(ConsoleLogger.Default)
            .AddExporter(MarkdownExporter.GitHub, new CsvExporter(CsvSeparator.Comma, fixedUnits), JsonExporter.Brief)
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray())
            .WithOption(ConfigOptions.JoinSummary, true)
            .WithSummaryStyle(SummaryStyle.Default.WithRatioStyle(RatioStyle.Trend).WithMaxParameterColumnWidth(40))
            .WithCategoryDiscoverer(new ClassCategoryDiscoverer())
            .HideColumns(Column.Categories)

            // BenchmarkDotNet gives a generated project 2 minutes to build; on a loaded 2-core machine a build of it (the
            // library and its integration packages included) has taken longer, and every case then failed unmeasured.
            .WithBuildTimeout(TimeSpan.FromMinutes(10));

        // One logical group per class and parameter set: in the joined table several classes share parameter
        // values (Steady and Single both have Operation and Size), and each must be compared with its own baseline.
        config.AddLogicalGroupRules(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams);
        return config;
    }

    /// <summary>
    /// Gives every benchmark its class name as a category (plus any <c>[BenchmarkCategory]</c>), so that
    /// <see cref="BenchmarkLogicalGroupRule.ByCategory"/> keeps classes apart in the joined summary. The
    /// category column is hidden: the joined table already has a Type column.
    /// </summary>
    private sealed class ClassCategoryDiscoverer : ICategoryDiscoverer
    {
        public string[] GetCategories(MethodInfo method) =>
        [
            method.ReflectedType?.Name ?? method.DeclaringType?.Name ?? string.Empty,
            .. DefaultCategoryDiscoverer.Instance.GetCategories(method),
        ];
    }

    /// <summary>
    /// A mutator applied to every job (the quick job, or the jobs BenchmarkDotNet builds from the arguments).
    /// Out of process: BenchmarkDotNet restores and builds a generated project that references this one. The
    /// repository sets <c>MSBuildTreatWarningsAsErrors</c>, and in that restore MSBuild turns NuGet's NU1603
    /// warnings (given when the package source lacks an exact dependency version of BenchmarkDotNet 0.14.0, as the
    /// development machines' source does; CONTRIBUTING.md, "Build and test") into errors, ignoring
    /// <c>WarningsNotAsErrors</c>, so the generated project fails to build. Turning the
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
    /// The job every case runs with (once per runtime, see <see cref="Runtimes.Jobs"/>) and its name: <c>--job
    /// short|medium|long|default|dry</c> picks BenchmarkDotNet's preset; without it, the quick job in the quick mode and
    /// BenchmarkDotNet's default job otherwise. Null for an unknown name.
    /// </summary>
    public static (Job Template, string Name)? JobTemplate(string? name, bool quick) => name?.ToUpperInvariant() switch
    {
        null => quick ? (QuickJob(), "Quick") : (Job.Default, "Default"),
        "SHORT" or "SHORTRUN" => (Job.ShortRun, "ShortRun"),
        "MEDIUM" or "MEDIUMRUN" => (Job.MediumRun, "MediumRun"),
        "LONG" or "LONGRUN" => (Job.LongRun, "LongRun"),
        "DEFAULT" => (Job.Default, "Default"),
        "DRY" => (Job.Dry, "Dry"),
        _ => null,
    };

    /// <summary>
    /// A short job for the quick mode: 3 warmup and 6 measured iterations of about 60 ms each (with the pilot stage,
    /// every case runs for well over the 100 ms after which tiered compilation has optimized it). Good enough to read
    /// ratios of 1.2x or more; use the full mode for publishable numbers.
    /// </summary>
    public static Job QuickJob() => Job.Default
        .WithId("Quick")
        .WithLaunchCount(1)
        .WithWarmupCount(3)
        .WithIterationCount(6)
        .WithIterationTime(TimeInterval.FromMilliseconds(60));

    /// <summary>
    /// Under Wine, keeps BenchmarkDotNet from asking WMI whether it runs in a virtual machine, which it does for the
    /// summary's header (<see cref="HostEnvironmentInfo.VirtualMachineHypervisor"/>); elsewhere, on Windows included,
    /// nothing changes. Under Wine 8.0 System.Management cannot work (it needs the .NET Framework's native WMI helper) and
    /// throws; after that the process crashed on its next exception (an access violation in an exception handler that
    /// Wine found in the thread's TEB exception list, then a stack overflow), every time in the main job, which stopped at
    /// "// * Export *" with no table. That is the Wine 8.0 behaviour tests/lanes/CachedAes.WineTests/TebExceptionList.cs works
    /// around: an exception that leaves through native frames can leave an entry there that points into dead stack. Told
    /// that there is no hypervisor, BenchmarkDotNet never loads System.Management. (BenchmarkDotNet 0.14 has no setting
    /// for this; the property's setter is protected, hence reflection. If a later version drops the property, this does
    /// nothing and says so.)
    /// </summary>
    public static void KeepWmiOutUnderWine()
    {
        if (!IsWine)
        {
            return;
        }

        PropertyInfo? property = typeof(HostEnvironmentInfo).GetProperty(nameof(HostEnvironmentInfo.VirtualMachineHypervisor));
        if (property?.SetMethod is null || property.PropertyType != typeof(Lazy<VirtualMachineHypervisor>))
        {
            Console.WriteLine("// Under Wine, but BenchmarkDotNet's VirtualMachineHypervisor cannot be set: its WMI query may crash the run.");
            return;
        }

        property.SetValue(HostEnvironmentInfo.GetCurrent(), new Lazy<VirtualMachineHypervisor>(() => null!));
    }

    /// <summary>True under Wine, whose ntdll.dll exports <c>wine_get_version</c> (Windows's does not).</summary>
    public static bool IsWine { get; } =
        OperatingSystem.IsWindows()
        && NativeLibrary.TryLoad("ntdll.dll", out IntPtr ntdll)
        && NativeLibrary.TryGetExport(ntdll, "wine_get_version", out _);

    /// <summary>
    /// In a job made by <see cref="Runtimes.CpuIntrinsicsJobs"/>: throws unless new <see cref="CachedAes"/> instances use
    /// the CPU intrinsics backend, so that a row labelled with that job never measures another backend.
    /// </summary>
    public static void CheckCachedBackend()
    {
        if (Environment.GetEnvironmentVariable(Runtimes.CpuIntrinsicsVariable) != "1")
        {
            return;
        }

        using CachedAes probe = CachedAes.Create();
        if (probe.Backend != CachedAesBackend.CpuIntrinsics)
        {
            throw new InvalidOperationException(
                $"{Runtimes.CpuIntrinsicsVariable}=1 but CachedAes uses {probe.Backend}: {CachedAesDiagnostics.Describe()}");
        }
    }
}
