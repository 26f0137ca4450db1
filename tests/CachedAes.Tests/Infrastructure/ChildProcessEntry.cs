using System;
using System.Globalization;
using System.IO;
using System.Linq;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// The test assembly's own entry point (the test SDK's generated empty one is turned off in the project file), so a
/// test can re-launch this assembly in a child process with <c>dotnet CachedAes.Tests.dll selection-report</c> and
/// observe what only a fresh process shows: backend selection, which happens once per process.
/// </summary>
internal static class ChildProcessEntry
{
    public const string SelectionReport = "selection-report";
    public const string SetSwitchFirst = "--set-switch-first";

    public static int Main(string[] args)
    {
        if (args.Length != 0 && args[0] == Ownership.RootCauseTests.ChildEntry)
        {
            return Ownership.RootCauseTests.RunInChild();
        }

        if (args.Length == 0 || args[0] != SelectionReport)
        {
            return 0; // what the generated entry point does: the test host never calls it
        }

        if (args.Contains("--time-self-test"))
        {
            TimeSelfTest();
            return 0;
        }

        if (args.Contains(SetSwitchFirst))
        {
            AppContext.SetSwitch(CachedAesDiagnostics.UseStockSwitchName, true);
        }

        using var aes = new CachedAes();
        Console.WriteLine($"Instance={aes.Backend}");
        Console.WriteLine($"Backend={CachedAesDiagnostics.Backend}");
        Console.WriteLine($"Ecb={CachedAesDiagnostics.Ecb}");
        Console.WriteLine($"Cbc={CachedAesDiagnostics.Cbc}");
        Console.WriteLine($"EcbFallbackReason={CachedAesDiagnostics.EcbFallbackReason}");
        Console.WriteLine($"CbcFallbackReason={CachedAesDiagnostics.CbcFallbackReason}");
        Console.WriteLine($"CpuIntrinsicsRefusedReason={CachedAesDiagnostics.CpuIntrinsicsRefusedReason}");
        if (OperatingSystem.IsLinux())
        {
            // Which libcrypto files the process has mapped right after selection, before anything else used crypto.
            string[] mapped = File.ReadAllLines("/proc/self/maps")
                .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries).LastOrDefault() ?? "")
                .Where(path => Path.GetFileName(path).StartsWith("libcrypto.so", StringComparison.Ordinal))
                .Distinct(StringComparer.Ordinal)
                .ToArray();
            Console.WriteLine($"LibcryptoMapped={string.Join(';', mapped)}");
            if (CachedAesDiagnostics.Backend == CachedAesBackend.OpenSsl)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RuntimeOpenSslVersion=0x{System.Security.Cryptography.SafeEvpPKeyHandle.OpenSslVersion:x}"));
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"CachedAesOpenSslVersion=0x{(ulong)CachedCryptography.Backends.OpenSsl.Libcrypto.OpenSSL_version_num():x}"));
                Console.WriteLine($"CachedAesLibcrypto={CachedCryptography.Backends.OpenSsl.Libcrypto.LoadedFile}");
            }
        }

        // A round trip through the selected path, so the report is never about an unusable instance.
        byte[] key = new byte[16];
        byte[] iv = new byte[16];
        byte[] data = new byte[48];
        aes.Key = key;
        bool roundTrip = aes.DecryptCbc(aes.EncryptCbc(data, iv), iv).AsSpan().SequenceEqual(data);
        Console.WriteLine($"RoundTrip={roundTrip}");

        Console.WriteLine("--- Describe()");
        Console.WriteLine(CachedAesDiagnostics.Describe());

        return roundTrip ? 0 : 1;
    }

    // Not a test: prints how long the self-test takes cold (first, with JIT) and warm, for the report.
    private static void TimeSelfTest()
    {
        var sw = System.Diagnostics.Stopwatch.StartNew();
        _ = Selection.ProcessBackend.Selection;
        Console.WriteLine($"selection (probe + self-test, cold): {sw.Elapsed.TotalMilliseconds:0.000} ms; self-test part {Selection.ProcessBackend.Selection.SelfTestTime.TotalMilliseconds:0.000} ms");
        Seam.CipherBackend native = Selection.ProcessBackend.Selection.Native!;
        for (int i = 0; i < 5; i++)
        {
            sw.Restart();
            _ = Selection.SelfTest.Run(native);
            Console.WriteLine($"self-test again: {sw.Elapsed.TotalMilliseconds * 1000:0} us");
        }
    }
}
