// Data Protection's stock configuration and UseCachedAes() sharing one key ring on the platform it runs on
// (scripts/wine-dataprotection.sh runs it under Wine as Windows): which encryptor each application gets for the same
// key, that the key ring names no CachedAes, whether CachedAes ran (the CachedAes meter), and that payloads cross both
// ways, with either application making the ring. Two configurations: Data Protection's default (AES-256-CBC with
// HMACSHA256), whose keys Data Protection runs on its CNG encryptor on Windows, where UseCachedAes() leaves them to it,
// and on its managed encryptor elsewhere, where UseCachedAes() runs them over CachedAes; and a managed configuration
// naming Aes, which UseCachedAes() runs over CachedAes everywhere. Prints the encryptor of each application per key,
// then "dataprotection-check: OK" or each failure.
using System;
using System.Diagnostics.Metrics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Xml.Linq;
using CachedCryptography;
using CachedCryptography.DataProtection;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
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

    (IDataProtector Protector, ServiceProvider Services) Open(DirectoryInfo keys, bool managedAes, bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("dp-check").PersistKeysToFileSystem(keys);
        if (managedAes)
        {
            builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = typeof(Aes),
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
        }

        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        ServiceProvider provider = services.BuildServiceProvider();
        IDataProtector protector = provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");
        protector.Protect([0]);
        return (protector, provider);
    }

    foreach (bool managedAes in new[] { false, true })
    {
        foreach (bool stockFirst in new[] { true, false })
        {
            string order = $"{(managedAes ? "managed Aes" : "default")} configuration, {(stockFirst ? "stock first" : "UseCachedAes first")}";
            DirectoryInfo keys = root.CreateSubdirectory($"{(managedAes ? "managed" : "default")}-{(stockFirst ? "stock-first" : "cached-first")}");
            (IDataProtector first, ServiceProvider firstServices) = Open(keys, managedAes, useCachedAes: !stockFirst);
            (IDataProtector second, ServiceProvider secondServices) = Open(keys, managedAes, useCachedAes: stockFirst);
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

            // Where Data Protection runs the key on its CNG encryptor (the default configuration on Windows), UseCachedAes()
            // leaves it there; where it runs it on its managed encryptor, UseCachedAes() runs that encryptor over CachedAes.
            bool onCng = !managedAes && OperatingSystem.IsWindows();
            Check(onCng ? stockEncryptor.Contains("Cng", StringComparison.Ordinal) : stockEncryptor.EndsWith("ManagedAuthenticatedEncryptor", StringComparison.Ordinal),
                $"{order}: stock runs the key on {(onCng ? "a CNG encryptor" : "the managed encryptor")}");
            Check(onCng ? cachedEncryptor == stockEncryptor : cachedEncryptor.EndsWith("ManagedAuthenticatedEncryptor", StringComparison.Ordinal),
                $"{order}: UseCachedAes runs the key on {(onCng ? "stock's CNG encryptor" : "the managed encryptor")}");

            byte[] byStock = stock.Protect(plaintext);
            byte[] byCached = [];
            long ran = During(() => byCached = cached.Protect(plaintext));
            ran += During(() => Check(cached.Unprotect(byStock).AsSpan().SequenceEqual(plaintext), $"{order}: UseCachedAes unprotects stock's payload"));
            Check(onCng ? ran == 0 : ran > 0, $"{order}: CachedAes {(onCng ? "did not run" : "ran")} for UseCachedAes ({ran} native handles)");
            Check(During(() => Check(stock.Unprotect(byCached).AsSpan().SequenceEqual(plaintext), $"{order}: stock unprotects UseCachedAes's payload")) == 0,
                $"{order}: CachedAes did not run for stock");
            firstServices.Dispose();
            secondServices.Dispose();
        }
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
