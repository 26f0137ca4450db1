using System;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// Two Data Protection systems over one master key: one configured with the package's <c>UseCachedAes()</c>, whose key
/// says "encrypt with CachedAes", one whose copy of the same key (same id, same master key) says "encrypt with stock Aes".
/// </summary>
/// <remarks>
/// Data Protection writes the configured algorithm into each key's XML and uses that, not the current
/// configuration, whenever the key is read. Two systems configured differently over one shared key ring
/// would therefore both use whichever algorithm created the key. To compare CachedAes with stock
/// <see cref="Aes"/> inside Data Protection, the key is created under the CachedAes configuration and
/// its XML copied into a second key ring with only the encryption algorithm changed to <c>Aes</c>.
/// Automatic key generation is off in both, so neither can quietly make a key of its own.
/// </remarks>
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
        DirectoryInfo cachedDir = _root.CreateSubdirectory("cached");
        DirectoryInfo stockDir = _root.CreateSubdirectory("stock");

        _cachedServices = Build(cachedDir, cachedAes: true);
        IKey key = _cachedServices.GetRequiredService<IKeyManager>().CreateNewKey(
            activationDate: DateTimeOffset.UtcNow.AddMinutes(-1),
            expirationDate: DateTimeOffset.UtcNow.AddDays(30));
        KeyId = key.KeyId;

        KeyFileName = $"key-{KeyId:D}.xml";
        CachedKeyXml = XDocument.Load(Path.Combine(cachedDir.FullName, KeyFileName));
        StockKeyXml = WithEncryptionAlgorithm(CachedKeyXml, "Aes");
        StockKeyXml.Save(Path.Combine(stockDir.FullName, KeyFileName));
        _stockServices = Build(stockDir, cachedAes: false);

        Cached = _cachedServices.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);
        Stock = _stockServices.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);
    }

    public Guid KeyId { get; }

    public string KeyFileName { get; }

    /// <summary>The key as Data Protection wrote it under the CachedAes configuration.</summary>
    public XDocument CachedKeyXml { get; }

    /// <summary>The same key with its encryption algorithm set to stock <c>Aes</c>.</summary>
    public XDocument StockKeyXml { get; }

    /// <summary>Protects and unprotects with CachedAes.</summary>
    public IDataProtector Cached { get; }

    /// <summary>Protects and unprotects with stock <see cref="Aes"/>, on the same master key.</summary>
    public IDataProtector Stock { get; }

    /// <summary>A protector over a key ring holding only <paramref name="keyXml"/>; dispose the result after use.</summary>
    public ServiceProvider BuildWithKey(XDocument keyXml, string folderName, out IDataProtector protector)
    {
        DirectoryInfo dir = _root.CreateSubdirectory(folderName);
        keyXml.Save(Path.Combine(dir.FullName, KeyFileName));
        ServiceProvider services = Build(dir, cachedAes: false);
        protector = services.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);
        return services;
    }

    /// <summary>A copy of <paramref name="keyXml"/> whose <c>encryption</c> element names another algorithm.</summary>
    public static XDocument WithEncryptionAlgorithm(XDocument keyXml, string algorithm)
    {
        var copy = new XDocument(keyXml);
        EncryptionElement(copy).SetAttributeValue("algorithm", algorithm);
        return copy;
    }

    public static XElement EncryptionElement(XDocument keyXml) =>
        keyXml.Descendants("encryption").Single();

    public static XElement MasterKeyElement(XDocument keyXml) =>
        keyXml.Descendants("masterKey").Single();

    /// <summary>
    /// Data Protection over <paramref name="keys"/>: with the package's <c>UseCachedAes()</c>, or with the same managed
    /// encryptor configured by hand with stock <see cref="Aes"/>.
    /// </summary>
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
        else
        {
            builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = typeof(Aes),
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
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
