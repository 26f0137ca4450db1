using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Text.Json.Nodes;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>Runs this test assembly's <see cref="ChildProcessEntry"/> in a fresh <c>dotnet</c> process and parses its report.</summary>
internal static class ChildProcess
{
    /// <summary>Variables that would change selection; removed from the child's environment unless a test sets them.</summary>
    private static readonly string[] s_selectionVariables = [CachedAesDiagnostics.UseStockEnvironmentVariable, CachedAesDiagnostics.UseCpuIntrinsicsEnvironmentVariable, "CLR_OPENSSL_VERSION_OVERRIDE"];

    /// <summary>The child's exit code, its <c>Name=value</c> lines, and its whole output (for failure messages).</summary>
    internal sealed record Report(int ExitCode, IReadOnlyDictionary<string, string> Values, string Output)
    {
        public string this[string name] => Values.TryGetValue(name, out string? value)
            ? value
            : throw new KeyNotFoundException($"The child printed no '{name}=' line. Output:{Environment.NewLine}{Output}");
    }

    /// <summary>
    /// Runs <c>dotnet exec [--runtimeconfig ...] CachedAes.Tests.dll selection-report [args]</c> with
    /// <paramref name="environment"/> added to (or, for null values, removed from) the inherited environment, and with
    /// <paramref name="configProperties"/> added to a copy of the assembly's runtimeconfig.json.
    /// </summary>
    public static Report RunSelectionReport(
        IReadOnlyDictionary<string, string?>? environment = null,
        IReadOnlyDictionary<string, bool>? configProperties = null,
        params string[] args) => Run(ChildProcessEntry.SelectionReport, environment, configProperties, args);

    /// <summary>Runs another mode of <see cref="ChildProcessEntry"/> (its first argument) with <paramref name="environment"/>.</summary>
    public static Report RunEntry(string entry, IReadOnlyDictionary<string, string?>? environment = null) =>
        Run(entry, environment, null, []);

    private static Report Run(
        string entry,
        IReadOnlyDictionary<string, string?>? environment,
        IReadOnlyDictionary<string, bool>? configProperties,
        string[] args)
    {
        string assembly = typeof(ChildProcess).Assembly.Location;
        var start = new ProcessStartInfo(DotnetHost())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add("exec");

        string? tempDir = null;
        if (configProperties is not null)
        {
            JsonNode config = JsonNode.Parse(File.ReadAllText(Path.ChangeExtension(assembly, ".runtimeconfig.json")))!;
            JsonObject options = config["runtimeOptions"]!.AsObject();
            if (options["configProperties"] is not JsonObject properties)
            {
                options["configProperties"] = properties = [];
            }

            foreach ((string name, bool value) in configProperties)
            {
                properties[name] = value;
            }

            tempDir = Directory.CreateTempSubdirectory("cachedaes-child-").FullName;
            string runtimeConfig = Path.Combine(tempDir, "child.runtimeconfig.json");
            File.WriteAllText(runtimeConfig, config.ToJsonString());
            start.ArgumentList.Add("--runtimeconfig");
            start.ArgumentList.Add(runtimeConfig);
            start.ArgumentList.Add("--depsfile");
            start.ArgumentList.Add(Path.ChangeExtension(assembly, ".deps.json"));
        }

        start.ArgumentList.Add(assembly);
        start.ArgumentList.Add(entry);
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        foreach (string name in s_selectionVariables)
        {
            start.Environment.Remove(name);
        }

        foreach ((string name, string? value) in environment ?? new Dictionary<string, string?>())
        {
            if (value is null)
            {
                start.Environment.Remove(name);
            }
            else
            {
                start.Environment[name] = value;
            }
        }

        try
        {
            using Process process = Process.Start(start)!;
            System.Threading.Tasks.Task<string> stderr = process.StandardError.ReadToEndAsync();
            string stdout = process.StandardOutput.ReadToEnd();
            if (!process.WaitForExit(120_000))
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException("The child process did not finish within 120 s.");
            }

            string output = stdout + stderr.Result;
            var values = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (string line in stdout.Split('\n'))
            {
                if (line.StartsWith("---", StringComparison.Ordinal))
                {
                    break; // the free-text report follows
                }

                int eq = line.IndexOf('=', StringComparison.Ordinal);
                if (eq > 0)
                {
                    values[line[..eq]] = line[(eq + 1)..].TrimEnd('\r');
                }
            }

            return new Report(process.ExitCode, values, output);
        }
        finally
        {
            if (tempDir is not null)
            {
                Directory.Delete(tempDir, recursive: true);
            }
        }
    }

    // The muxer that runs this framework-dependent test host: the process itself when it is dotnet, else the one
    // three levels above the shared runtime folder (<root>/shared/Microsoft.NETCore.App/<version>/).
    private static string DotnetHost()
    {
        string exe = OperatingSystem.IsWindows() ? "dotnet.exe" : "dotnet";
        if (Environment.ProcessPath is string path && Path.GetFileName(path).Equals(exe, StringComparison.OrdinalIgnoreCase))
        {
            return path;
        }

        string fromRuntime = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "..", "..", "..", exe));
        return File.Exists(fromRuntime) ? fromRuntime : exe;
    }
}
