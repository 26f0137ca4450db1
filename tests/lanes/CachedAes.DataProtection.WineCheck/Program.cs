// Data Protection's default configuration and UseCachedAes() sharing one key ring on the platform it runs on
// (scripts/wine-dataprotection.sh runs it under Wine as Windows, where the default configuration's keys run on Data
// Protection's CNG encryptor): which encryptor each application gets for the same key, that the key ring names no
// CachedAes, that UseCachedAes() runs CachedAes for that key (the CachedAes meter), and that payloads cross both ways,
// with either application making the ring. Prints "dataprotection-check: OK" or each failure, and the facts it found.
using System;
using System.Diagnostics.Metrics;
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

long handles = 0;
using var listener = new MeterListener();
listener.InstrumentPublished = (instrument, l) =>
{
    if (instrument.Meter.Name == CachedAesMetrics.MeterName && instrument.Name == "cachedaes.handles.created")
    {
        l.EnableMeasurementEvents(instrument);
    }
};
listener.SetMeasurementEventCallback<long>((_, value, _, _) => System.Threading.Interlocked.Add(ref handles, value));
listener.Start();
long During(Action action)
{
    long before = System.Threading.Interlocked.Read(ref handles);
    action();
    return System.Threading.Interlocked.Read(ref handles) - before;
}

DirectoryInfo root = Directory.CreateTempSubdirectory("cachedaes-dp-check-");
try
{
    Console.WriteLine($"os: {RuntimeInformation.OSDescription}; windows: {OperatingSystem.IsWindows()}; runtime: {Environment.Version}");
    Console.WriteLine($"cachedaes: {CachedAes.Create().Backend}; cbc: {CachedAesDiagnostics.Cbc}");
    byte[] plaintext = new byte[1000];
    new Random(25).NextBytes(plaintext);

    (IDataProtector Protector, IKey Key, ServiceProvider Services) Open(DirectoryInfo keys, bool useCachedAes)
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
        return (protector, provider.GetRequiredService<IKeyManager>().GetAllKeys().Single(), provider);
    }

    foreach (bool stockFirst in new[] { true, false })
    {
        string order = stockFirst ? "stock first" : "UseCachedAes first";
        DirectoryInfo keys = root.CreateSubdirectory(stockFirst ? "stock-first" : "cached-first");
        (IDataProtector first, _, ServiceProvider firstServices) = Open(keys, useCachedAes: !stockFirst);
        (IDataProtector second, _, ServiceProvider secondServices) = Open(keys, useCachedAes: stockFirst);
        (IDataProtector stock, IDataProtector cached) = stockFirst ? (first, second) : (second, first);
        IKey stockKey = (stockFirst ? firstServices : secondServices).GetRequiredService<IKeyManager>().GetAllKeys().Single();
        IKey cachedKey = (stockFirst ? secondServices : firstServices).GetRequiredService<IKeyManager>().GetAllKeys().Single();
        string stockEncryptor = stockKey.CreateEncryptor()?.GetType().FullName ?? "(none)";
        string cachedEncryptor = cachedKey.CreateEncryptor()?.GetType().FullName ?? "(none)";
        FileInfo keyFile = keys.GetFiles("key-*.xml").Single();
        XElement descriptor = XDocument.Load(keyFile.FullName).Root!.Element("descriptor")!;
        Console.WriteLine($"{order}: one key, descriptor {descriptor.Attribute("deserializerType")!.Value.Split(',')[0]}, " +
            $"encryption {descriptor.Descendants("encryption").Single().Attribute("algorithm")!.Value}; " +
            $"stock's encryptor {stockEncryptor}; UseCachedAes's encryptor {cachedEncryptor}");
        Check(stockKey.KeyId == cachedKey.KeyId, $"{order}: both use the one key");
        Check(!File.ReadAllText(keyFile.FullName).Contains("CachedAes", StringComparison.Ordinal), $"{order}: the key ring names no CachedAes");
        Check(cachedEncryptor.EndsWith("ManagedAuthenticatedEncryptor", StringComparison.Ordinal), $"{order}: UseCachedAes runs the key on the managed encryptor");
        Check(!OperatingSystem.IsWindows() || stockEncryptor.Contains("Cng", StringComparison.Ordinal), $"{order}: on Windows stock runs the key on a CNG encryptor");

        byte[] byStock = stock.Protect(plaintext);
        byte[] byCached = [];
        long ran = During(() => byCached = cached.Protect(plaintext));
        ran += During(() => Check(cached.Unprotect(byStock).AsSpan().SequenceEqual(plaintext), $"{order}: UseCachedAes unprotects stock's payload"));
        Check(ran > 0, $"{order}: CachedAes ran for UseCachedAes ({ran} native handles)");
        Check(During(() => Check(stock.Unprotect(byCached).AsSpan().SequenceEqual(plaintext), $"{order}: stock unprotects UseCachedAes's payload")) == 0,
            $"{order}: CachedAes did not run for stock");
        firstServices.Dispose();
        secondServices.Dispose();
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
