// The packed-package check of the integration packages (scripts/consumer-test.sh), not a usage example. README.md's
// one-liners are compiled in as they are written there: the script extracts them, with their using lines, into
// a generated C# file (static class ReadmeLines) beside this file. With them, this app:
//  - makes and reads JWE tokens between IdentityModel switched to CachedAes and a stock factory, both ways;
//  - the same with jose-jwt: the default settings switched to CachedAes against stock jose-jwt settings;
//  - shares the Data Protection key ring in folder RING (the first argument) with an app without CachedAes
//    (tests/lanes/consumers/StockDataProtectionCheck): it unprotects every payload that app left in RING/stock.txt, each on CachedAes
//    (counted with the CachedAes meter, so an existing ring runs on CachedAes from the first payload), makes a new key
//    first when the second argument is "rotate", protects payloads of its own into RING/cached.txt, and checks that no
//    key in the ring names CachedAes.
// Prints "integration-check: OK" and exits 0, or each mismatch and exits 1.
using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography;
using CachedCryptography.DataProtection;
using CachedCryptography.IdentityModel;
using CachedCryptography.JoseJwt;
using Jose;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

if (args.Length is < 1 or > 2 || (args.Length == 2 && args[1] != "rotate"))
{
    Console.Error.WriteLine("usage: IntegrationConsumerCheck RING [rotate]");
    return 2;
}

var keys = new DirectoryInfo(args[0]);
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

try
{
    Console.WriteLine($"backend: {CachedAes.Create().Backend}");
    Console.WriteLine($"runtime: {Environment.Version}");
    Console.WriteLine($"library: {typeof(CachedAes).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"identitymodel-package: {typeof(CachedAesCryptoProvider).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"dataprotection-package: {typeof(CachedAesDataProtectionBuilderExtensions).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"josejwt-package: {typeof(CachedAesJwtSettingsExtensions).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");

    // ---- jose-jwt JWE: README's line on the default settings, against settings of jose-jwt's own.
    ReadmeLines.JoseJwt();   // README.md: JWT.DefaultSettings.UseCachedAes();
    var stockJose = new JwtSettings();
    Check(JWT.DefaultSettings.Jwa("A256KW") is CachedAesKeyWrapManagement && JWT.DefaultSettings.Jwe("A128CBC-HS256") is CachedAesCbcHmacEncryption, "jose-jwt's default settings use CachedAes");
    Check(stockJose.Jwa("A256KW") is AesKeyWrapManagement, "new jose-jwt settings stay stock");
    foreach ((JweAlgorithm alg, int kekLength) in new[] { (JweAlgorithm.A128KW, 16), (JweAlgorithm.A192KW, 24), (JweAlgorithm.A256KW, 32) })
    {
        foreach (JweEncryption enc in new[] { JweEncryption.A128CBC_HS256, JweEncryption.A192CBC_HS384, JweEncryption.A256CBC_HS512 })
        {
            byte[] joseKek = RandomNumberGenerator.GetBytes(kekLength);
            string claims = $"{{\"sub\":\"{Convert.ToHexString(RandomNumberGenerator.GetBytes(12))}\"}}";
            string byCached = JWT.Encode(claims, joseKek, alg, enc);
            string byStock = JWT.Encode(claims, joseKek, alg, enc, settings: stockJose);
            Check(JWT.Decode(byCached, joseKek, alg, enc, stockJose) == claims, $"jose-jwt {alg}+{enc}: CachedAes -> stock");
            Check(JWT.Decode(byStock, joseKek, alg, enc) == claims, $"jose-jwt {alg}+{enc}: stock -> CachedAes");
            Check(byCached.Split('.')[0] == byStock.Split('.')[0], $"jose-jwt {alg}+{enc}: the same header with and without CachedAes");
        }
    }

    // ---- IdentityModel JWE: a stock factory on one side, the one line on the default factory on the other.
    byte[] kekBytes = RandomNumberGenerator.GetBytes(32);
    var signingKey = new SymmetricSecurityKey(RandomNumberGenerator.GetBytes(32));
    var stockFactory = new CryptoProviderFactory();
    var stockKek = new SymmetricSecurityKey(kekBytes) { CryptoProviderFactory = stockFactory };

    ReadmeLines.IdentityModel();   // README.md: CryptoProviderFactory.Default.UseCachedAes();

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

    // ---- Data Protection: README's line, over the key ring shared with the stock app.
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
    bool RanCachedAes(Action action)
    {
        long before = System.Threading.Interlocked.Read(ref handles);
        action();
        return System.Threading.Interlocked.Read(ref handles) > before;
    }

    keys.Create();
    var services = new ServiceCollection();
    services.AddDataProtection().SetApplicationName("integration-check").PersistKeysToFileSystem(keys);
    ReadmeLines.DataProtection(services);   // README.md: services.AddDataProtection().UseCachedAes();
    using ServiceProvider provider = services.BuildServiceProvider();
    IDataProtector protector = provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("check");

    string stockFile = Path.Combine(keys.FullName, "stock.txt");
    string[] stockLines = File.Exists(stockFile) ? File.ReadAllLines(stockFile) : [];
    int read = 0;
    foreach (string line in stockLines)
    {
        string[] parts = line.Split(' ');
        byte[] plaintext = Convert.FromHexString(parts[0]);
        byte[] result = [];
        bool ran = RanCachedAes(() => result = protector.Unprotect(Convert.FromBase64String(parts[1])));
        Check(result.AsSpan().SequenceEqual(plaintext) && ran, $"Data Protection: the stock app's {plaintext.Length}-byte payload (line {read + 1}), unprotected on CachedAes: {ran}");
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
        byte[] payload = [];
        Check(RanCachedAes(() => payload = protector.Protect(plaintext)), $"Data Protection: {length}-byte payload protected on CachedAes");
        lines.Add($"{Convert.ToHexString(plaintext)} {Convert.ToBase64String(payload)}");
    }

    File.AppendAllLines(Path.Combine(keys.FullName, "cached.txt"), lines);
    string[] naming = [.. keys.GetFiles("key-*.xml").Where(f => File.ReadAllText(f.FullName).Contains("CachedAes", StringComparison.Ordinal)).Select(f => f.Name)];
    Check(keys.GetFiles("key-*.xml").Length > 0 && naming.Length == 0, $"the key ring names no CachedAes ({string.Join(", ", naming)})");
    Console.WriteLine($"dataprotection: read {read} payloads of the stock app, wrote {lines.Count}, {keys.GetFiles("key-*.xml").Length} keys in the ring");
}
catch (Exception ex)
{
    Console.WriteLine($"integration-check: FAILED ({ex.GetType().FullName}: {ex.Message})");
    return 2;
}

Console.WriteLine($"checks: {checks}, mismatches: {failures}");
Console.WriteLine(failures == 0 ? "integration-check: OK" : $"integration-check: FAILED ({failures} mismatches)");
return failures == 0 ? 0 : 1;
