// The stock side of the consumer test's shared Data Protection key ring (scripts/consumer-test.sh): Data Protection as
// stock configures it, in an app without CachedAes. StockDataProtectionCheck RING [rotate] unprotects every payload the
// CachedAes app (tests/lanes/consumers/IntegrationConsumerCheck) left in RING/cached.txt, makes a new key first when the second argument
// is "rotate", protects payloads of its own into RING/stock.txt (making the ring if there is none), and checks that no
// key in the ring names CachedAes and that no CachedAes assembly is loaded. Prints "stock-check: OK" and exits 0, or each
// failure and exits 1.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;

if (args.Length is < 1 or > 2 || (args.Length == 2 && args[1] != "rotate"))
{
    Console.Error.WriteLine("usage: StockDataProtectionCheck RING [rotate]");
    return 2;
}

var keys = new DirectoryInfo(args[0]);
int failures = 0;
void Check(bool ok, string what)
{
    if (!ok)
    {
        failures++;
        Console.WriteLine($"FAIL: {what}");
    }
}

try
{
    keys.Create();
    var services = new ServiceCollection();
    services.AddDataProtection().SetApplicationName("integration-check").PersistKeysToFileSystem(keys);
    using ServiceProvider provider = services.BuildServiceProvider();
    IDataProtector protector = provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");

    string cachedFile = Path.Combine(keys.FullName, "cached.txt");
    int read = 0;
    foreach (string line in File.Exists(cachedFile) ? File.ReadAllLines(cachedFile) : [])
    {
        string[] parts = line.Split(' ');
        byte[] plaintext = Convert.FromHexString(parts[0]);
        try
        {
            Check(protector.Unprotect(Convert.FromBase64String(parts[1])).AsSpan().SequenceEqual(plaintext), $"the CachedAes app's {plaintext.Length}-byte payload came back different");
        }
        catch (CryptographicException e)
        {
            Check(false, $"the CachedAes app's {plaintext.Length}-byte payload: {e.Message} ({e.InnerException?.GetType().Name}: {e.InnerException?.Message})");
        }

        read++;
    }

    if (args.Length == 2)
    {
        IKey key = provider.GetRequiredService<IKeyManager>().CreateNewKey(DateTimeOffset.UtcNow, DateTimeOffset.UtcNow.AddDays(90));
        Console.WriteLine($"new-key: {key.KeyId}");
    }

    var lines = new List<string>();
    foreach (int length in new[] { 0, 1, 16, 100, 3000 })
    {
        byte[] plaintext = RandomNumberGenerator.GetBytes(length);
        lines.Add($"{Convert.ToHexString(plaintext)} {Convert.ToBase64String(protector.Protect(plaintext))}");
    }

    File.AppendAllLines(Path.Combine(keys.FullName, "stock.txt"), lines);
    string[] naming = [.. keys.GetFiles("key-*.xml").Where(f => File.ReadAllText(f.FullName).Contains("CachedAes", StringComparison.Ordinal)).Select(f => f.Name)];
    Check(naming.Length == 0, $"keys naming CachedAes: {string.Join(", ", naming)}");
    string[] loaded = [.. AppDomain.CurrentDomain.GetAssemblies().Select(a => a.GetName().Name ?? "").Where(n => n.StartsWith("CachedAes", StringComparison.Ordinal))];
    Check(loaded.Length == 0, $"CachedAes assemblies loaded: {string.Join(", ", loaded)}");
    Console.WriteLine($"stock: read {read} payloads of the CachedAes app, wrote {lines.Count}, {keys.GetFiles("key-*.xml").Length} keys in the ring");
}
catch (Exception e) when (e is IOException or FormatException or InvalidOperationException or CryptographicException)
{
    Check(false, $"{e.GetType().FullName}: {e.Message}");
}

Console.WriteLine(failures == 0 ? "stock-check: OK" : $"stock-check: FAILED ({failures})");
return failures == 0 ? 0 : 1;
