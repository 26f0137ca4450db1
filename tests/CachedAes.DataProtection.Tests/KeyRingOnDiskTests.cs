using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// The package end to end, as an application uses it: key rings in a folder on disk (written by one service provider,
/// read by a new one, as after a restart or on another server), payloads protected under stock Data Protection's default
/// configuration read with <c>UseCachedAes()</c> and the reverse, and what a key ring records. Which key protected a
/// payload is read from the payload itself (its header carries the key id), and that key's XML on disk says which
/// algorithm Data Protection used for it.
/// </summary>
public sealed class KeyRingOnDiskTests : IDisposable
{
    private const string ApplicationName = "CachedAes.DataProtection.Tests.OnDisk";
    private static readonly string[] s_purpose = ["CachedAes", "on-disk"];
    private static readonly int[] s_lengths = [0, 1, 15, 16, 17, 100, 1000, 5000];

    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("cachedaes-keyring-");
    private readonly List<ServiceProvider> _providers = [];

    public void Dispose()
    {
        foreach (ServiceProvider provider in _providers)
        {
            provider.Dispose();
        }

        _root.Delete(recursive: true);
    }

    /// <summary>A new Data Protection system over <paramref name="keys"/>: stock's default configuration, or <c>UseCachedAes()</c>.</summary>
    private ServiceProvider Build(DirectoryInfo keys, bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection()
            .SetApplicationName(ApplicationName)
            .PersistKeysToFileSystem(keys);
        if (useCachedAes)
        {
            Assert.Same(builder, builder.UseCachedAes());
        }

        ServiceProvider provider = services.BuildServiceProvider();
        _providers.Add(provider);
        return provider;
    }

    private static IDataProtector Protector(IServiceProvider services) =>
        services.GetRequiredService<IDataProtectionProvider>().CreateProtector(s_purpose);

    private static Dictionary<int, (byte[] Plaintext, byte[] Payload)> ProtectAll(IDataProtector protector, int seed)
    {
        var rng = new Random(seed);
        var result = new Dictionary<int, (byte[], byte[])>();
        foreach (int length in s_lengths)
        {
            byte[] plaintext = new byte[length];
            rng.NextBytes(plaintext);
            result[length] = (plaintext, protector.Protect(plaintext));
        }

        return result;
    }

    private static void AssertUnprotectsAll(IDataProtector protector, Dictionary<int, (byte[] Plaintext, byte[] Payload)> payloads, string what)
    {
        foreach ((int length, (byte[] plaintext, byte[] payload)) in payloads)
        {
            Assert.True(plaintext.AsSpan().SequenceEqual(protector.Unprotect(payload)), $"{what}: {length} bytes came back different");
        }
    }

    /// <summary>The key id in a payload's header (after the 4-byte magic number).</summary>
    private static Guid KeyIdOf(byte[] payload) => new(payload.AsSpan(4, 16));

    /// <summary>The XML of key <paramref name="keyId"/> in the key ring folder.</summary>
    private static XDocument KeyXml(DirectoryInfo keys, Guid keyId) =>
        XDocument.Load(Path.Combine(keys.FullName, $"key-{keyId:D}.xml"));

    private static string EncryptionAlgorithmOf(XDocument keyXml) =>
        (string)keyXml.Descendants("encryption").Single().Attribute("algorithm")!;

    private static string DeserializerOf(XDocument keyXml) =>
        (string)keyXml.Descendants("descriptor").First().Attribute("deserializerType")!;

    [Fact]
    public void Keys_made_with_UseCachedAes_are_read_back_by_new_providers_with_and_without_it()
    {
        DirectoryInfo keys = _root.CreateSubdirectory("cached-ring");
        Dictionary<int, (byte[] Plaintext, byte[] Payload)> payloads = ProtectAll(Protector(Build(keys, useCachedAes: true)), seed: 1);

        // One key, made by Data Protection itself on first use, naming CachedAes for the managed encryptor.
        Guid keyId = KeyIdOf(payloads[100].Payload);
        Assert.All(payloads.Values, p => Assert.Equal(keyId, KeyIdOf(p.Payload)));
        Assert.Single(keys.GetFiles("key-*.xml"));
        XDocument keyXml = KeyXml(keys, keyId);
        Assert.Equal(typeof(CachedAes).AssemblyQualifiedName, EncryptionAlgorithmOf(keyXml));
        Assert.StartsWith("CachedCryptography.CachedAes, CachedAes, Version=", EncryptionAlgorithmOf(keyXml), StringComparison.Ordinal);
        Assert.Contains("ManagedAuthenticatedEncryptorDescriptorDeserializer", DeserializerOf(keyXml), StringComparison.Ordinal);
        Assert.Equal("256", (string?)keyXml.Descendants("encryption").Single().Attribute("keyLength"));
        Assert.Contains(nameof(HMACSHA256), (string)keyXml.Descendants("validation").Single().Attribute("algorithm")!, StringComparison.Ordinal);

        // A restart, or another server: new providers over the same folder, with UseCachedAes and with stock's default
        // configuration. The key says CachedAes, so both decrypt with it; the CachedAes assembly is loadable here.
        IDataProtector cachedAgain = Protector(Build(keys, useCachedAes: true));
        IDataProtector stockConfigured = Protector(Build(keys, useCachedAes: false));
        AssertUnprotectsAll(cachedAgain, payloads, "a new UseCachedAes provider");
        AssertUnprotectsAll(stockConfigured, payloads, "a new provider with stock's default configuration");

        // The stock-configured one protects under the same key (it is the ring's default key), and the reverse reads it.
        Dictionary<int, (byte[] Plaintext, byte[] Payload)> byStockConfigured = ProtectAll(stockConfigured, seed: 2);
        Assert.All(byStockConfigured.Values, p => Assert.Equal(keyId, KeyIdOf(p.Payload)));
        AssertUnprotectsAll(cachedAgain, byStockConfigured, "UseCachedAes reading what the stock-configured provider protected");
        Assert.Single(keys.GetFiles("key-*.xml"));
    }

    [Fact]
    public void A_stock_key_ring_stays_readable_and_UseCachedAes_applies_from_the_next_key_on()
    {
        DirectoryInfo keys = _root.CreateSubdirectory("stock-ring");
        IServiceProvider stockServices = Build(keys, useCachedAes: false);
        Dictionary<int, (byte[] Plaintext, byte[] Payload)> byStock = ProtectAll(Protector(stockServices), seed: 3);
        Guid stockKeyId = KeyIdOf(byStock[100].Payload);
        XDocument stockKeyXml = KeyXml(keys, stockKeyId);
        string stockAlgorithm = EncryptionAlgorithmOf(stockKeyXml);
        Assert.DoesNotContain("CachedAes", stockKeyXml.ToString(), StringComparison.Ordinal);

        // The application switches to UseCachedAes (a new provider over the same folder): stock's payloads read.
        IServiceProvider cachedServices = Build(keys, useCachedAes: true);
        IDataProtector cached = Protector(cachedServices);
        AssertUnprotectsAll(cached, byStock, "UseCachedAes reading a stock key ring");

        // Until a new key is made, the ring's default key is stock's, and it keeps its own algorithm.
        Dictionary<int, (byte[] Plaintext, byte[] Payload)> beforeNewKey = ProtectAll(cached, seed: 4);
        Assert.All(beforeNewKey.Values, p => Assert.Equal(stockKeyId, KeyIdOf(p.Payload)));
        Assert.Equal(stockAlgorithm, EncryptionAlgorithmOf(KeyXml(keys, stockKeyId)));

        // A new key (Data Protection makes one itself before the current one expires; here at once): it names CachedAes.
        IKey newKey = cachedServices.GetRequiredService<IKeyManager>().CreateNewKey(
            activationDate: DateTimeOffset.UtcNow, expirationDate: DateTimeOffset.UtcNow.AddDays(90));
        Assert.Equal(typeof(CachedAes).AssemblyQualifiedName, EncryptionAlgorithmOf(KeyXml(keys, newKey.KeyId)));
        // Read by a new provider (after a restart): a running one picks the new key up when it refreshes its key ring.
        Dictionary<int, (byte[] Plaintext, byte[] Payload)> byCached = ProtectAll(Protector(Build(keys, useCachedAes: true)), seed: 5);
        Assert.All(byCached.Values, p => Assert.Equal(newKey.KeyId, KeyIdOf(p.Payload)));

        // A new stock-configured provider reads everything: stock's payloads, and CachedAes's under the new key.
        IDataProtector stockAgain = Protector(Build(keys, useCachedAes: false));
        AssertUnprotectsAll(stockAgain, byStock, "stock's default configuration, its own payloads");
        AssertUnprotectsAll(stockAgain, beforeNewKey, "stock's default configuration, UseCachedAes's payloads under the stock key");
        AssertUnprotectsAll(stockAgain, byCached, "stock's default configuration, UseCachedAes's payloads under the CachedAes key");
        AssertUnprotectsAll(cached, byCached, "UseCachedAes, its own payloads");
    }

    [Fact]
    public void UseCachedAes_rejects_a_null_builder_as_stock_does()
    {
        ArgumentNullException fromStock = Assert.Throws<ArgumentNullException>(() =>
            DataProtectionBuilderExtensions.UseCustomCryptographicAlgorithms(null!, new Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel.ManagedAuthenticatedEncryptorConfiguration()));
        ArgumentNullException fromPackage = Assert.Throws<ArgumentNullException>(() => CachedAesDataProtectionBuilderExtensions.UseCachedAes(null!));
        Assert.Equal(fromStock.ParamName, fromPackage.ParamName);
    }
}
