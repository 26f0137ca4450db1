// The packed-package check of the integration packages (scripts/consumer-test.sh), not a usage example: an app that
// switches IdentityModel JWE and ASP.NET Core Data Protection to CachedAes with one line each, as the packages' readmes
// show, and checks against the same libraries left stock that the work went through CachedAes and that data moves both
// ways. Prints "integration-check: OK" and exits 0, or each mismatch and exits 1.
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Xml.Linq;
using CachedCryptography;
using CachedCryptography.DataProtection;
using CachedCryptography.IdentityModel;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

int checks = 0;
int failures = 0;

void Check(bool ok, string what)
{
    checks++;
    if (!ok)
    {
        failures++;
        Console.WriteLine($"MISMATCH: {what}");
    }
}

DirectoryInfo keys = Directory.CreateTempSubdirectory("cachedaes-integration-check-");
try
{
    Console.WriteLine($"backend: {CachedAes.Create().Backend}");
    Console.WriteLine($"runtime: {Environment.Version}");
    Console.WriteLine($"library: {typeof(CachedAes).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"identitymodel-package: {typeof(CachedAesCryptoProvider).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"dataprotection-package: {typeof(CachedAesDataProtectionBuilderExtensions).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");

    // ---- IdentityModel JWE: a stock factory on one side, the one line on the default factory on the other.
    byte[] kekBytes = RandomNumberGenerator.GetBytes(32);
    var signingKey = new SymmetricSecurityKey(RandomNumberGenerator.GetBytes(32));
    var stockFactory = new CryptoProviderFactory();
    var stockKek = new SymmetricSecurityKey(kekBytes) { CryptoProviderFactory = stockFactory };

    CryptoProviderFactory.Default.UseCachedAes();

    var kek = new SymmetricSecurityKey(kekBytes);
    Check(CryptoProviderFactory.Default.CreateKeyWrapProvider(kek, SecurityAlgorithms.Aes256KW) is CachedAesKeyWrapProvider, "the default factory makes CachedAes key-wrap providers");
    Check(stockFactory.CreateKeyWrapProvider(stockKek, SecurityAlgorithms.Aes256KW) is not CachedAesKeyWrapProvider, "a factory of its own stays stock");
    var handler = new JsonWebTokenHandler();
    foreach (string enc in new[] { SecurityAlgorithms.Aes128CbcHmacSha256, SecurityAlgorithms.Aes192CbcHmacSha384, SecurityAlgorithms.Aes256CbcHmacSha512 })
    {
        Check(CryptoProviderFactory.Default.CreateAuthenticatedEncryptionProvider(new SymmetricSecurityKey(new byte[64]), enc) is CachedAesCbcHmacProvider, $"CachedAes content provider for {enc}");
        foreach ((string maker, SymmetricSecurityKey makeWith, SymmetricSecurityKey readWith, CryptoProviderFactory? readFactory) in new[]
        {
            ("CachedAes -> stock", kek, stockKek, stockFactory),
            ("stock -> CachedAes", stockKek, kek, (CryptoProviderFactory?)null),
            ("CachedAes -> CachedAes", kek, kek, null),
        })
        {
            string subject = Convert.ToHexString(RandomNumberGenerator.GetBytes(12));
            string token = handler.CreateToken(new SecurityTokenDescriptor
            {
                Issuer = "https://issuer.integration-check",
                Audience = "integration-check",
                Claims = new Dictionary<string, object> { ["sub"] = subject },
                SigningCredentials = new SigningCredentials(signingKey, SecurityAlgorithms.HmacSha256),
                EncryptingCredentials = new EncryptingCredentials(makeWith, SecurityAlgorithms.Aes256KW, enc),
            });
            TokenValidationResult result = handler.ValidateTokenAsync(token, new TokenValidationParameters
            {
                ValidIssuer = "https://issuer.integration-check",
                ValidAudience = "integration-check",
                IssuerSigningKey = signingKey,
                TokenDecryptionKey = readWith,
                CryptoProviderFactory = readFactory,
            }).GetAwaiter().GetResult();
            Check(result.IsValid && (string)result.Claims["sub"] == subject, $"JWE {enc} {maker}: {result.Exception?.Message}");
        }
    }

    // ---- Data Protection: the one line, a key ring on disk, and a new provider with stock's default configuration.
    ServiceProvider Build(bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("integration-check").PersistKeysToFileSystem(keys);
        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        return services.BuildServiceProvider();
    }

    var payloads = new List<(byte[] Plaintext, byte[] Payload)>();
    using (ServiceProvider cachedServices = Build(useCachedAes: true))
    {
        IDataProtector cached = cachedServices.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");
        foreach (int length in new[] { 0, 1, 16, 100, 3000 })
        {
            byte[] plaintext = RandomNumberGenerator.GetBytes(length);
            payloads.Add((plaintext, cached.Protect(plaintext)));
        }
    }

    FileInfo[] keyFiles = keys.GetFiles("key-*.xml");
    Check(keyFiles.Length == 1, $"one key in the ring ({keyFiles.Length})");
    string? algorithm = keyFiles.Length == 1 ? (string?)XDocument.Load(keyFiles[0].FullName).Root?.Element("descriptor")?.Element("descriptor")?.Element("encryption")?.Attribute("algorithm") : null;
    Check(algorithm == typeof(CachedAes).AssemblyQualifiedName, $"the key names CachedAes ({algorithm})");

    // A new provider without UseCachedAes over the same ring: the key names CachedAes, and Data Protection uses what the
    // key says, so this provider unprotects, and protects, with CachedAes too. It checks that an app reads the ring
    // without the one line (as long as the CachedAes assembly is there), not that stock AES reads CachedAes's payloads.
    using (ServiceProvider withoutLine = Build(useCachedAes: false))
    {
        IDataProtector reader = withoutLine.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");
        foreach ((byte[] plaintext, byte[] payload) in payloads)
        {
            Check(reader.Unprotect(payload).AsSpan().SequenceEqual(plaintext), $"Data Protection {plaintext.Length} bytes, UseCachedAes -> a new provider without UseCachedAes (the key says CachedAes)");
        }

        byte[] byReader = reader.Protect([1, 2, 3]);
        using ServiceProvider cachedAgain = Build(useCachedAes: true);
        Check(cachedAgain.GetRequiredService<IDataProtectionProvider>().CreateProtector("check").Unprotect(byReader).AsSpan().SequenceEqual(new byte[] { 1, 2, 3 }),
            "Data Protection, a provider without UseCachedAes (CachedAes, as the key says) -> a new UseCachedAes provider");
    }

    // Stock AES on the same master key: a second ring holding a copy of the key whose encryption algorithm is Aes (stock),
    // so payloads really cross between CachedAes and stock AES, both ways.
    DirectoryInfo stockKeys = Directory.CreateTempSubdirectory("cachedaes-integration-check-stock-");
    try
    {
        if (keyFiles.Length == 1)
        {
            XDocument stockKey = XDocument.Load(keyFiles[0].FullName);
            foreach (XElement encryption in stockKey.Descendants("encryption"))
            {
                encryption.SetAttributeValue("algorithm", "Aes");
            }

            stockKey.Save(Path.Combine(stockKeys.FullName, keyFiles[0].Name));
        }

        var stockServiceCollection = new ServiceCollection();
        stockServiceCollection.AddDataProtection().SetApplicationName("integration-check").PersistKeysToFileSystem(stockKeys).DisableAutomaticKeyGeneration();
        using ServiceProvider stockServices = stockServiceCollection.BuildServiceProvider();
        IDataProtector stock = stockServices.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");
        foreach ((byte[] plaintext, byte[] payload) in payloads)
        {
            Check(stock.Unprotect(payload).AsSpan().SequenceEqual(plaintext), $"Data Protection {plaintext.Length} bytes, CachedAes -> stock AES (the same key, its algorithm set to Aes)");
        }

        byte[] byStock = stock.Protect([4, 5, 6]);
        using ServiceProvider cachedReader = Build(useCachedAes: true);
        Check(cachedReader.GetRequiredService<IDataProtectionProvider>().CreateProtector("check").Unprotect(byStock).AsSpan().SequenceEqual(new byte[] { 4, 5, 6 }),
            "Data Protection, stock AES -> CachedAes (the key ring naming CachedAes)");
    }
    finally
    {
        stockKeys.Delete(recursive: true);
    }
}
catch (Exception ex)
{
    Console.WriteLine($"integration-check: FAILED ({ex.GetType().FullName}: {ex.Message})");
    return 2;
}
finally
{
    keys.Delete(recursive: true);
}

Console.WriteLine($"checks: {checks}, mismatches: {failures}");
Console.WriteLine(failures == 0 ? "integration-check: OK" : $"integration-check: FAILED ({failures} mismatches)");
return failures == 0 ? 0 : 1;
