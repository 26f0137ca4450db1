using System;
using System.IO;
using System.Linq;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// One key ring folder holding one key made by Data Protection's default configuration (AES-256-CBC with HMACSHA256), and
/// two Data Protection systems over it: one with the package's <c>UseCachedAes()</c> and one as stock configures it. Both
/// use that same key as stock wrote it, so whatever differs between them is CachedAes against stock <c>Aes</c>.
/// Automatic key generation is off in both, so neither can quietly make a key of its own.
/// </summary>
public sealed class KeyRings : IDisposable
{
    public const string ApplicationName = "CachedAes.DataProtection.Tests";

    private static readonly string[] s_purpose = ["CachedAes", "integration"];

    private readonly DirectoryInfo _root;
    private readonly ServiceProvider _cachedServices;
    private readonly ServiceProvider _stockServices;

    public KeyRings()
    {
        _root = Directory.CreateTempSubdirectory("cachedaes-dataprotection-");
        DirectoryInfo ring = _root.CreateSubdirectory("ring");

        _stockServices = Build(ring, cachedAes: false);
        IKey key = _stockServices.GetRequiredService<IKeyManager>().CreateNewKey(
            activationDate: DateTimeOffset.UtcNow.AddMinutes(-1),
            expirationDate: DateTimeOffset.UtcNow.AddDays(30));
        KeyId = key.KeyId;
        KeyFileName = $"key-{KeyId:D}.xml";
        KeyXml = XDocument.Load(Path.Combine(ring.FullName, KeyFileName));
        _cachedServices = Build(ring, cachedAes: true);

        Cached = _cachedServices.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);
        Stock = _stockServices.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);
    }

    public Guid KeyId { get; }

    public string KeyFileName { get; }

    /// <summary>The key as Data Protection's default configuration wrote it.</summary>
    public XDocument KeyXml { get; }

    /// <summary>Protects and unprotects with <c>UseCachedAes()</c>.</summary>
    public IDataProtector Cached { get; }

    /// <summary>Protects and unprotects as stock Data Protection does, on the same key.</summary>
    public IDataProtector Stock { get; }

    public static XElement EncryptionElement(XDocument keyXml) =>
        keyXml.Descendants("encryption").Single();

    /// <summary>Data Protection over <paramref name="keys"/>, with or without the package's <c>UseCachedAes()</c>.</summary>
    private static ServiceProvider Build(DirectoryInfo keys, bool cachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection()
            .SetApplicationName(ApplicationName)
            .PersistKeysToFileSystem(keys)
            .DisableAutomaticKeyGeneration();
        if (cachedAes)
        {
            builder.UseCachedAes();
        }

        return services.BuildServiceProvider();
    }

    public void Dispose()
    {
        _cachedServices.Dispose();
        _stockServices.Dispose();
        _root.Delete(recursive: true);
    }
}
