// One half of the key-ring upgrade check (scripts/dataprotection-upgrade.sh):
//   write DIR   makes a key ring in DIR with UseCachedAes(), protects payloads of several lengths, stores them in DIR;
//   read DIR    opens that key ring with UseCachedAes() and with Data Protection's stock configuration, and unprotects
//               every stored payload under the key the writer made (no new key may appear).
// Each run prints the CachedAes assembly it loaded; "read" prints the name the key records. Ends with
// "upgrade-check: OK" (exit 0) or each failure and "upgrade-check: FAILED" (exit 1).
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using CachedCryptography;
using CachedCryptography.DataProtection;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Extensions.DependencyInjection;

if (args.Length != 2 || (args[0] != "write" && args[0] != "read"))
{
    Console.Error.WriteLine("usage: CachedAes.DataProtection.UpgradeCheck write|read DIR");
    return 2;
}

var keys = new DirectoryInfo(args[1]);
string payloadFile = Path.Combine(keys.FullName, "payloads.txt");
Console.WriteLine($"cachedaes-assembly: {typeof(CachedAes).Assembly.GetName().FullName}");

int failures = 0;
void Check(bool ok, string what)
{
    Console.WriteLine($"{(ok ? "ok" : "FAIL")}: {what}");
    failures += ok ? 0 : 1;
}

IDataProtector Protector(bool useCachedAes)
{
    var services = new ServiceCollection();
    IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("upgrade-check").PersistKeysToFileSystem(keys);
    if (useCachedAes)
    {
        builder.UseCachedAes();
    }

    return services.BuildServiceProvider().GetRequiredService<IDataProtectionProvider>().CreateProtector("upgrade-check");
}

string[] KeyFiles() => keys.GetFiles("key-*.xml").Select(f => f.Name).Order(StringComparer.Ordinal).ToArray();

try
{
    if (args[0] == "write")
    {
        keys.Create();
        IDataProtector protector = Protector(useCachedAes: true);
        var lines = new List<string>();
        foreach (int length in new[] { 0, 1, 15, 16, 17, 100, 3000 })
        {
            byte[] plaintext = RandomNumberGenerator.GetBytes(length);
            lines.Add($"{Convert.ToHexString(plaintext)} {Convert.ToBase64String(protector.Protect(plaintext))}");
        }

        File.WriteAllLines(payloadFile, lines);
        Check(KeyFiles().Length == 1, $"one key written ({KeyFiles().Length})");
    }
    else
    {
        string[] before = KeyFiles();
        Check(before.Length == 1, $"one key in the ring ({before.Length})");
        string? algorithm = before.Length == 1
            ? (string?)XDocument.Load(Path.Combine(keys.FullName, before[0])).Descendants("encryption").Single().Attribute("algorithm")
            : null;
        Console.WriteLine($"key-records: {algorithm}");
        Check(algorithm?.StartsWith(typeof(CachedAes).FullName + ", CachedAes, Version=", StringComparison.Ordinal) == true, "the key names CachedAes");

        (byte[] Plaintext, byte[] Payload)[] payloads = File.ReadAllLines(payloadFile)
            .Select(line => line.Split(' '))
            .Select(parts => (Convert.FromHexString(parts[0]), Convert.FromBase64String(parts[1])))
            .ToArray();
        Check(payloads.Length == 7, $"seven stored payloads ({payloads.Length})");
        foreach (bool useCachedAes in new[] { true, false })
        {
            IDataProtector protector = Protector(useCachedAes);
            foreach ((byte[] plaintext, byte[] payload) in payloads)
            {
                string what = $"{(useCachedAes ? "UseCachedAes" : "stock configuration")}: {plaintext.Length}-byte payload";
                try
                {
                    Check(protector.Unprotect(payload).AsSpan().SequenceEqual(plaintext), what);
                }
                catch (CryptographicException ex)
                {
                    Check(false, $"{what}: {ex.Message} ({ex.InnerException?.GetType().Name}: {ex.InnerException?.Message})");
                }
            }
        }

        Check(KeyFiles().SequenceEqual(before), "no new key was made (the writer's key was usable)");
    }
}
catch (Exception ex) when (ex is IOException or FormatException or InvalidOperationException or CryptographicException)
{
    Check(false, $"{ex.GetType().FullName}: {ex.Message}");
}

Console.WriteLine(failures == 0 ? "upgrade-check: OK" : $"upgrade-check: FAILED ({failures})");
return failures == 0 ? 0 : 1;
