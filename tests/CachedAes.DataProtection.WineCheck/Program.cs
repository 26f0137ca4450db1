// Data Protection's default configuration against UseCachedAes() on the platform it runs on (scripts/wine-dataprotection.sh
// runs it under Wine as Windows): which authenticated encryptor each key gets, what each key records, and whether a payload
// made by one encryptor unprotects under the other with the same master key. Prints "dataprotection-check: OK" or each
// failure, and the facts it found.
using System;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Xml.Linq;
using CachedCryptography;
using CachedCryptography.DataProtection;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;

int failures = 0;
void Check(bool ok, string what)
{
    Console.WriteLine($"{(ok ? "ok" : "FAIL")}: {what}");
    failures += ok ? 0 : 1;
}

DirectoryInfo root = Directory.CreateTempSubdirectory("cachedaes-dp-check-");
try
{
    Console.WriteLine($"os: {RuntimeInformation.OSDescription}; windows: {OperatingSystem.IsWindows()}; runtime: {Environment.Version}");
    Console.WriteLine($"cachedaes: {CachedAes.Create().Backend}; cbc: {CachedAesDiagnostics.Cbc}");

    (IDataProtector Protector, IKey Key, ServiceProvider Services) Make(DirectoryInfo keys, bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("dp-check").PersistKeysToFileSystem(keys);
        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        ServiceProvider provider = services.BuildServiceProvider();
        IDataProtector protector = provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");
        protector.Protect([0]);
        IKey key = provider.GetRequiredService<IKeyManager>().GetAllKeys().Single();
        return (protector, key, provider);
    }

    DirectoryInfo stockDir = root.CreateSubdirectory("stock");
    DirectoryInfo cachedDir = root.CreateSubdirectory("cached");
    (IDataProtector stock, IKey stockKey, ServiceProvider stockServices) = Make(stockDir, useCachedAes: false);
    (IDataProtector cached, IKey cachedKey, ServiceProvider cachedServices) = Make(cachedDir, useCachedAes: true);
    string stockEncryptor = stockKey.CreateEncryptor()?.GetType().FullName ?? "(none)";
    string cachedEncryptor = cachedKey.CreateEncryptor()?.GetType().FullName ?? "(none)";
    XDocument stockXml = XDocument.Load(Path.Combine(stockDir.FullName, $"key-{stockKey.KeyId:D}.xml"));
    XDocument cachedXml = XDocument.Load(Path.Combine(cachedDir.FullName, $"key-{cachedKey.KeyId:D}.xml"));
    XElement Descriptor(XDocument key) => key.Root!.Element("descriptor")!;
    Console.WriteLine($"default configuration: encryptor {stockEncryptor}; key descriptor {Descriptor(stockXml).Attribute("deserializerType")!.Value.Split(',')[0]}; " +
        $"encryption {Descriptor(stockXml).Descendants("encryption").Single().Attribute("algorithm")!.Value}");
    Console.WriteLine($"UseCachedAes: encryptor {cachedEncryptor}; key descriptor {Descriptor(cachedXml).Attribute("deserializerType")!.Value.Split(',')[0]}; " +
        $"encryption {Descriptor(cachedXml).Descendants("encryption").Single().Attribute("algorithm")!.Value}");
    Check(cachedEncryptor.EndsWith("ManagedAuthenticatedEncryptor", StringComparison.Ordinal), "UseCachedAes keys get the managed encryptor");
    Check(!OperatingSystem.IsWindows() || stockEncryptor.Contains("Cng", StringComparison.Ordinal), "on Windows the default configuration's keys get a CNG encryptor");

    byte[] plaintext = new byte[1000];
    new Random(25).NextBytes(plaintext);
    byte[] byStock = stock.Protect(plaintext);
    byte[] byCached = cached.Protect(plaintext);
    Check(stock.Unprotect(byStock).AsSpan().SequenceEqual(plaintext) && cached.Unprotect(byCached).AsSpan().SequenceEqual(plaintext), "each unprotects its own payloads");

    // The same key (id, dates, master key) with the other configuration's descriptor: each encryptor's payloads under the
    // other encryptor.
    void Swap(XDocument key, XDocument descriptorFrom, DirectoryInfo into)
    {
        var copy = new XDocument(key);
        XElement master = new(Descriptor(copy).Descendants("masterKey").Single());
        XElement replaced = new(Descriptor(descriptorFrom));
        replaced.Descendants("masterKey").Single().ReplaceWith(master);
        Descriptor(copy).ReplaceWith(replaced);
        copy.Save(Path.Combine(into.FullName, $"key-{(string)key.Root!.Attribute("id")!}.xml"));
    }

    DirectoryInfo stockKeyAsCached = root.CreateSubdirectory("stock-key-as-cached");
    Swap(stockXml, cachedXml, stockKeyAsCached);
    (IDataProtector readsStockAsCached, _, ServiceProvider s1) = (Make2(stockKeyAsCached));
    Check(readsStockAsCached.Unprotect(byStock).AsSpan().SequenceEqual(plaintext), "a payload of the default configuration's encryptor unprotects with the managed encryptor over CachedAes (same master key)");
    DirectoryInfo cachedKeyAsStock = root.CreateSubdirectory("cached-key-as-stock");
    Swap(cachedXml, stockXml, cachedKeyAsStock);
    (IDataProtector readsCachedAsStock, _, ServiceProvider s2) = (Make2(cachedKeyAsStock));
    Check(readsCachedAsStock.Unprotect(byCached).AsSpan().SequenceEqual(plaintext), "a payload of the managed encryptor over CachedAes unprotects with the default configuration's encryptor (same master key)");

    (IDataProtector, IKey, ServiceProvider) Make2(DirectoryInfo keys)
    {
        var services = new ServiceCollection();
        services.AddDataProtection().SetApplicationName("dp-check").PersistKeysToFileSystem(keys).DisableAutomaticKeyGeneration();
        ServiceProvider provider = services.BuildServiceProvider();
        return (provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("check"), provider.GetRequiredService<IKeyManager>().GetAllKeys().Single(), provider);
    }

    foreach (ServiceProvider p in new[] { stockServices, cachedServices, s1, s2 })
    {
        p.Dispose();
    }
}
catch (Exception e)
{
    Console.WriteLine($"dataprotection-check: FAILED ({e})");
    return 2;
}
finally
{
    root.Delete(recursive: true);
}

Console.WriteLine(failures == 0 ? "dataprotection-check: OK" : $"dataprotection-check: FAILED ({failures})");
return failures == 0 ? 0 : 1;
