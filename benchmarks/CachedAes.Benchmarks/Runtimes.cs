using System;
using System.Collections.Generic;
using System.IO;
using BenchmarkDotNet.Environments;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Toolchains;
using BenchmarkDotNet.Toolchains.CsProj;
using BenchmarkDotNet.Toolchains.DotNetCli;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// The two runtimes every case is measured on, in one BenchmarkDotNet run: a job on .NET 10 (the host's runtime, the
/// SDK's own toolchain) and the same job on .NET 11.0.0.
/// <para>
/// BenchmarkDotNet 0.14.0 knows no .NET 11, and the repository builds with the .NET 10 SDK alone, so the .NET 11 job gets
/// a toolchain of its own (<see cref="Net11Toolchain"/>): the generated benchmark program targets net11.0 (the .NET 10 SDK builds it
/// through build/Net11WithSdk10.props, which the repository's Directory.Build.props applies to the generated project
/// too, since it is generated under this project's bin folder) and references CachedAes.Benchmarks.Net11 (these
/// sources, built for net11.0 against CachedAes's lib/net11.0); the .NET 10 SDK's dotnet builds it, and the dotnet
/// root in artifacts/dotnet11 (the 11.0.0 runtime packs laid out by build/Dotnet11Runtime) runs it.
/// <c>CsProjCoreToolchain.From(new NetCoreAppSettings(..., customDotNetCliPath))</c> cannot do this: its one CLI path
/// both builds and runs, and the .NET 11 root has no SDK.
/// </para>
/// </summary>
internal static class Runtimes
{
    /// <summary>The suffix of a job's id that says which runtime it runs on (the report reads it).</summary>
    public const string Net10Suffix = "-net10";

    /// <inheritdoc cref="Net10Suffix"/>
    public const string Net11Suffix = "-net11";

    /// <summary>What a job id made by <see cref="CpuIntrinsicsJobs"/> contains before its runtime suffix.</summary>
    public const string CpuIntrinsicsMarker = "-cpu";

    /// <summary>The environment variable that opts CachedAes into its CPU intrinsics backend.</summary>
    public const string CpuIntrinsicsVariable = "CACHEDAES_USE_CPU_INTRINSICS";

    /// <summary>.NET 11 as BenchmarkDotNet 0.14.0 can describe it (it has no moniker for it).</summary>
    public static CoreRuntime Net11Runtime { get; } = CoreRuntime.CreateForNewVersion("net11.0", ".NET 11.0");

    /// <summary>True for a job made by <see cref="Jobs"/> for .NET 11.</summary>
    public static bool IsNet11(Job job) => job.Id.EndsWith(Net11Suffix, StringComparison.Ordinal);

    /// <summary>
    /// <paramref name="template"/> once per runtime: on the host's .NET 10 and, unless <paramref name="net11"/> is
    /// false, on .NET 11.0.0 with <see cref="Net11Toolchain"/>.
    /// </summary>
    public static IEnumerable<Job> Jobs(Job template, string name, bool net11)
    {
        yield return template.WithId(name + Net10Suffix);
        if (net11)
        {
            yield return template.WithRuntime(Net11Runtime).WithToolchain(Net11Toolchain()).WithId(name + Net11Suffix);
        }
    }

    /// <summary>
    /// Each of <paramref name="jobs"/> again with <see cref="CpuIntrinsicsVariable"/>=1 in the benchmark process and
    /// <see cref="CpuIntrinsicsMarker"/> before the runtime suffix of its id: in those jobs every CachedAes instance
    /// uses the CPU intrinsics backend (where the instructions exist; the benchmark process prints the backend), and
    /// the stock, floor and BouncyCastle rows measure the same work as in the platform job.
    /// </summary>
    public static IEnumerable<Job> CpuIntrinsicsJobs(IEnumerable<Job> jobs)
    {
        foreach (Job job in jobs)
        {
            string suffix = IsNet11(job) ? Net11Suffix : Net10Suffix;
            string id = job.Id[..^suffix.Length] + CpuIntrinsicsMarker + suffix;
            yield return job.WithEnvironmentVariables(new EnvironmentVariable(CpuIntrinsicsVariable, "1")).WithId(id);
        }
    }

    private static readonly string? s_repositoryRoot = FindRepositoryRoot();

    /// <summary>
    /// True when this build runs from inside the repository (<c>dotnet run</c>, or a copy published under its folders);
    /// false for a copy published outside it, which has no .NET 11 job.
    /// </summary>
    public static bool InRepository => s_repositoryRoot is not null;

    /// <summary>The repository root, found from this assembly's folder (benchmarks/CachedAes.Benchmarks/bin/...).</summary>
    public static string RepositoryRoot => s_repositoryRoot
        ?? throw new InvalidOperationException($"No repository root above {AppContext.BaseDirectory} (looked for build/Dotnet11Runtime).");

    /// <summary>The .NET 11 dotnet root's muxer that runs the .NET 11 job's processes.</summary>
    public static string Net11Dotnet => Path.Combine(RepositoryRoot, "artifacts", "dotnet11", OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet");

    private static Toolchain Net11Toolchain() => new(
        "net11.0 on artifacts/dotnet11",
        new Net11ProjectGenerator(Path.Combine(RepositoryRoot, "benchmarks", "CachedAes.Benchmarks.Net11", "CachedAes.Benchmarks.Net11.csproj")),
        new DotNetCliBuilder("net11.0", customDotNetCliPath: null, logOutput: false),
        new DotNetCliExecutor(Net11Dotnet));

    private static string? FindRepositoryRoot()
    {
        for (DirectoryInfo? folder = new(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "build", "Dotnet11Runtime", "Dotnet11Runtime.csproj")))
            {
                return folder.FullName;
            }
        }

        return null;
    }

    /// <summary>BenchmarkDotNet's project generator, with the project it references replaced by the net11.0 build of these sources.</summary>
    private sealed class Net11ProjectGenerator(string projectFile)
        : CsProjGenerator("net11.0", cliPath: null!, packagesPath: null!, runtimeFrameworkVersion: null!, isNetCore: true)
    {
        protected override FileInfo GetProjectFilePath(Type benchmarkTarget, ILogger logger) => new(projectFile);
    }
}
