// One side of the key-ring checks of scripts/dataprotection-upgrade.sh. Built against CachedAes (UseCachedAes()), or with
// -p:CachedAesStockOnly=true without it (stock Data Protection, no CachedAes assembly anywhere: the package removed).
//   write DIR [rotate]  protects payloads of several lengths into the key ring in DIR (making it if there is none; with
//                       "rotate", under a new key made first) and appends them to DIR/payloads.txt, each line
//                       "<writer> <plaintext in hex> <payload in base64>" (the first release's checker wrote the last
//                       two alone: tests/CachedAes.DataProtection.Tests/LegacyKeyRing);
//   read DIR            unprotects every payload in DIR/payloads.txt, with UseCachedAes() (not in the stock-only build)
//                       and with Data Protection's stock configuration.
// Each run prints the CachedAes assembly it carries ("none" in the stock-only build) and what each key in the ring records
// ("key: <id> <encryption algorithm>"); in builds with CachedAes it also checks that CachedAes ran for every payload
// UseCachedAes() protected or unprotected (the CachedAes meter's cachedaes.handles.created, on this thread). Ends with
// "upgrade-check: OK" (exit 0) or each failure and "upgrade-check: FAILED" (exit 1).
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;
#if !STOCK_ONLY
using System.Diagnostics.Metrics;
using CachedCryptography;
using CachedCryptography.DataProtection;
#endif

if (args.Length < 2 || (args[0] != "write" && args[0] != "read") || (args.Length == 3 && args[2] != "rotate") || args.Length > 3)
{
    Console.Error.WriteLine("usage: CachedAes.DataProtection.UpgradeCheck write DIR [rotate] | read DIR");
    return 2;
}

var keys = new DirectoryInfo(args[1]);
string payloadFile = Path.Combine(keys.FullName, "payloads.txt");
#if STOCK_ONLY
const bool HasCachedAes = false;
string writer = "stock-only";
Console.WriteLine("cachedaes-assembly: none");
#else
const bool HasCachedAes = true;
string writer = "cachedaes-" + typeof(CachedAes).Assembly.GetName().Version;
Console.WriteLine($"cachedaes-assembly: {typeof(CachedAes).Assembly.GetName().FullName}");
long handles = 0;
using var listener = new MeterListener();
listener.InstrumentPublished = (instrument, l) =>
{
    if (instrument.Meter.Name == CachedAesMetrics.MeterName && instrument.Name == "cachedaes.handles.created")
    {
        l.EnableMeasurementEvents(instrument);
    }
};
int thread = Environment.CurrentManagedThreadId;
listener.SetMeasurementEventCallback<long>((_, value, _, _) => handles += Environment.CurrentManagedThreadId == thread ? value : 0);
listener.Start();
#endif

int failures = 0;
void Check(bool ok, string what)
{
    Console.WriteLine($"{(ok ? "ok" : "FAIL")}: {what}");
    failures += ok ? 0 : 1;
}

// Runs one protect or unprotect and says whether CachedAes ran for it (always false without CachedAes).
bool RanCachedAes(Action action)
{
#if STOCK_ONLY
    action();
    return false;
#else
    long before = handles;
    action();
    return handles > before;
#endif
}

(IDataProtector Protector, IKeyManager Keys) Open(bool useCachedAes)
{
    var services = new ServiceCollection();
    IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("upgrade-check").PersistKeysToFileSystem(keys);
#if !STOCK_ONLY
    if (useCachedAes)
    {
        builder.UseCachedAes();
    }
#endif
    ServiceProvider provider = services.BuildServiceProvider();
    return (provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("upgrade-check"), provider.GetRequiredService<IKeyManager>());
}

void PrintKeys()
{
    foreach (FileInfo file in keys.GetFiles("key-*.xml").OrderBy(f => f.Name, StringComparer.Ordinal))
    {
        XDocument key = XDocument.Load(file.FullName);
        Console.WriteLine($"key: {(string?)key.Root?.Attribute("id")} {(string?)key.Descendants("encryption").FirstOrDefault()?.Attribute("algorithm")}");
    }
}

try
{
    if (args[0] == "write")
    {
        keys.Create();
        (IDataProtector protector, IKeyManager keyManager) = Open(useCachedAes: HasCachedAes);
        if (args.Length == 3)
        {
            IKey key = keyManager.CreateNewKey(DateTimeOffset.UtcNow, DateTimeOffset.UtcNow.AddDays(90));
            Console.WriteLine($"new-key: {key.KeyId}");
        }

        var lines = new List<string>();
        foreach (int length in new[] { 0, 1, 15, 16, 17, 100, 3000 })
        {
            byte[] plaintext = RandomNumberGenerator.GetBytes(length);
            byte[] payload = [];
            bool ran = RanCachedAes(() => payload = protector.Protect(plaintext));
            Check(ran == HasCachedAes, $"{writer} protected {length} bytes under key {new Guid(payload.AsSpan(4, 16))}{(HasCachedAes ? " on CachedAes" : "")}");
            lines.Add($"{writer} {Convert.ToHexString(plaintext)} {Convert.ToBase64String(payload)}");
        }

        File.AppendAllLines(payloadFile, lines);
        PrintKeys();
        string[] naming = [.. keys.GetFiles("key-*.xml").Where(f => File.ReadAllText(f.FullName).Contains("CachedAes", StringComparison.Ordinal)).Select(f => f.Name)];
        Check(naming.Length == 0, $"no key names CachedAes ({string.Join(", ", naming)})");
    }
    else
    {
        PrintKeys();
        (string Writer, byte[] Plaintext, byte[] Payload)[] payloads = [.. File.ReadAllLines(payloadFile)
            .Select(line => line.Split(' '))
            .Select(parts => parts.Length == 2 ? ["first-release", .. parts] : parts)
            .Select(parts => (parts[0], Convert.FromHexString(parts[1]), Convert.FromBase64String(parts[2])))];
        Check(payloads.Length > 0 && payloads.Length % 7 == 0, $"{payloads.Length} stored payloads");
        foreach (bool useCachedAes in HasCachedAes ? new[] { true, false } : new[] { false })
        {
            IDataProtector protector = Open(useCachedAes).Protector;
            foreach ((string by, byte[] plaintext, byte[] payload) in payloads)
            {
                string what = $"{(useCachedAes ? "UseCachedAes" : "stock configuration")}: {plaintext.Length}-byte payload of {by}";
                try
                {
                    byte[] result = [];
                    bool ran = RanCachedAes(() => result = protector.Unprotect(payload));
                    Check(result.AsSpan().SequenceEqual(plaintext) && (!useCachedAes || ran), what + (useCachedAes ? (ran ? ", on CachedAes" : ", NOT on CachedAes") : ""));
                }
                catch (CryptographicException ex)
                {
                    Check(false, $"{what}: {ex.Message} ({ex.InnerException?.GetType().Name}: {ex.InnerException?.Message})");
                }
            }
        }
    }
}
catch (Exception ex) when (ex is IOException or FormatException or InvalidOperationException or CryptographicException or IndexOutOfRangeException)
{
    Check(false, $"{ex.GetType().FullName}: {ex.Message}");
}

Console.WriteLine(failures == 0 ? "upgrade-check: OK" : $"upgrade-check: FAILED ({failures})");
return failures == 0 ? 0 : 1;
