using System;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using CachedCryptography.Tests.Infrastructure;

[assembly: SupportedOSPlatform("windows")]

namespace CachedCryptography.WineTests;

/// <summary>
/// <c>CachedAes.WineTests.exe [--expect pseudo-handles|providers|auto] [--label wine] [--filter text] [--verbose] [--unverified-backend]</c>:
/// runs the contract suite and the CNG checks over the real bcrypt.dll (the vectors are published with the app, in
/// <c>vectors/</c>) and ends with one line
/// <c>&lt;label&gt;: N passed, N failed, N skipped</c>; exits 0 only if nothing failed and something passed.
/// </summary>
internal static class Program
{
    public static int Main(string[] args)
    {
        string label = "wine";
        string? filter = null;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--expect" when i + 1 < args.Length:
                    RunSettings.ExpectPseudoHandles = args[++i] switch
                    {
                        "pseudo-handles" => true,
                        "providers" => false,
                        "auto" => null,
                        string other => throw new ArgumentException($"--expect takes pseudo-handles, providers or auto, not '{other}'."),
                    };
                    break;
                case "--label" when i + 1 < args.Length:
                    label = args[++i];
                    break;
                case "--unverified-backend":
                    RunSettings.UnverifiedBackend = true;
                    label += " (unverified backend)";
                    break;
                case "--verbose":
                    Runner.Verbose = true;
                    break;
                case "--filter" when i + 1 < args.Length:
                    filter = args[++i];
                    break;
                default:
                    Console.WriteLine($"unknown argument '{args[i]}'; usage: CachedAes.WineTests [--expect pseudo-handles|providers|auto] [--label name] [--filter text] [--verbose] [--unverified-backend]");
                    Console.WriteLine($"{label}: 0 passed, 1 failed, 0 skipped");
                    return 2;
            }
        }

        RunSettings.WineVersion = WineVersion();
        Console.WriteLine($"Wine: {RunSettings.WineVersion ?? "(not Wine)"}; {RuntimeInformation.OSDescription}; Windows 10 or later: {OperatingSystem.IsWindowsVersionAtLeast(10)}");
        Console.WriteLine($"Expected CNG algorithm handles: {RunSettings.ExpectPseudoHandles switch { true => "pseudo-handles", false => "opened providers", null => "by Windows version" }}");
        Console.WriteLine($"Vectors: {Vectors.Root}");
        Console.WriteLine(CachedAesDiagnostics.Describe());
        Console.WriteLine();

        if (RunSettings.WineVersion is not null)
        {
            Runner.PlatformSkip = WineSkips.Reason;
        }

        var clock = System.Diagnostics.Stopwatch.StartNew();
        // On a thread of its own with room to spare (16 MB): Wine's exception dispatch is stack-hungry.
        Runner.Totals totals = new(0, 1, 0);
        var worker = new System.Threading.Thread(() => totals = Runner.RunAll(typeof(Program).Assembly, filter), 16 * 1024 * 1024);
        worker.Start();
        worker.Join();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"({clock.Elapsed.TotalSeconds:0.0} s)"));
        Console.WriteLine($"{label}: {totals.Passed} passed, {totals.Failed} failed, {totals.Skipped} skipped");
        return totals.Failed == 0 && totals.Passed > 0 ? 0 : 1;
    }

    /// <summary>Wine's version from <c>ntdll!wine_get_version</c>, or null on real Windows (no such export).</summary>
    private static unsafe string? WineVersion()
    {
        if (NativeLibrary.TryLoad("ntdll.dll", out IntPtr ntdll) && NativeLibrary.TryGetExport(ntdll, "wine_get_version", out IntPtr export))
        {
            return Marshal.PtrToStringUTF8((IntPtr)((delegate* unmanaged<byte*>)export)());
        }

        return null;
    }
}

/// <summary>What the command line and the platform say the checks should expect.</summary>
internal static class RunSettings
{
    /// <summary>True: pseudo-handles; false: opened providers; null: whatever the Windows version implies.</summary>
    public static bool? ExpectPseudoHandles { get; set; }

    /// <summary>
    /// Run the contract suite over the raw CNG backend, bypassing the self-test's fallback: a check that the suite
    /// notices a broken CBC handle (under Wine 8.0 it must fail). Never used by CI.
    /// </summary>
    public static bool UnverifiedBackend { get; set; }

    /// <summary>The Wine version (for example <c>8.0</c>), or null on real Windows.</summary>
    public static string? WineVersion { get; set; }
}
