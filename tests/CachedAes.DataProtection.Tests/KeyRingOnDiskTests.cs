using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// The package end to end, as applications use it: one key ring in a folder on disk shared by an application with
/// <c>UseCachedAes()</c> and one as stock configures it, each started anew (a restart, or another server) whenever the
/// other has written; either one first; across key rotations. Which key protected a payload is read from the payload
/// itself (its header carries the key id), and whether CachedAes ran from what the <c>CachedAes</c> meter counted on the
/// test's thread (<see cref="CachedAesCalls"/>).
/// </summary>
public sealed class KeyRingOnDiskTests : IDisposable
{
    private const string ApplicationName = "CachedAes.DataProtection.Tests.OnDisk";
    private static readonly string[] s_purpose = ["CachedAes", "on-disk"];
    private static readonly int[] s_lengths = [0, 1, 15, 16, 17, 100, 1000, 5000];

    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("cachedaes-keyring-");
    private readonly List<ServiceProvider> _providers = [];
    private readonly CachedAesCalls _calls = new();

    public void Dispose()
    {
        _calls.Dispose();
        foreach (ServiceProvider provider in _providers)
        {
            provider.Dispose();
        }

        _root.Delete(recursive: true);
    }

    /// <summary>A new Data Protection system over <paramref name="keys"/>, stock or with <c>UseCachedAes()</c>.</summary>
    private ServiceProvider Build(DirectoryInfo keys, bool useCachedAes, Action<IDataProtectionBuilder>? configure = null)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection()
            .SetApplicationName(ApplicationName)
            .PersistKeysToFileSystem(keys);
        configure?.Invoke(builder);
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

    private static List<(byte[] Plaintext, byte[] Payload)> ProtectAll(IDataProtector protector, int seed)
    {
        var rng = new Random(seed);
        var result = new List<(byte[], byte[])>();
        foreach (int length in s_lengths)
        {
            byte[] plaintext = new byte[length];
            rng.NextBytes(plaintext);
            result.Add((plaintext, protector.Protect(plaintext)));
        }

        return result;
    }

    private static void AssertUnprotectsAll(IDataProtector protector, IEnumerable<(byte[] Plaintext, byte[] Payload)> payloads, string what)
    {
        foreach ((byte[] plaintext, byte[] payload) in payloads)
        {
            Assert.True(plaintext.AsSpan().SequenceEqual(protector.Unprotect(payload)), $"{what}: {plaintext.Length} bytes came back different");
        }
    }

    /// <summary>Runs <paramref name="action"/> and asserts whether CachedAes ran for it.</summary>
    private void Ran(bool cachedAes, string what, Action action)
    {
        long handles = _calls.During(action);
        Assert.True(cachedAes ? handles > 0 : handles == 0, $"{what}: CachedAes made {handles} native handles");
    }

    /// <summary>The key id in a payload's header (after the 4-byte magic number).</summary>
    private static Guid KeyIdOf(byte[] payload) => new(payload.AsSpan(4, 16));

    /// <summary>Every key file in the ring: none may name CachedAes, each is stock's default descriptor.</summary>
    private static void AssertStockKeys(DirectoryInfo keys, int count)
    {
        FileInfo[] files = keys.GetFiles("key-*.xml");
        Assert.Equal(count, files.Length);
        foreach (FileInfo file in files)
        {
            string text = File.ReadAllText(file.FullName);
            Assert.DoesNotContain("CachedAes", text, StringComparison.Ordinal);
            XElement descriptor = XDocument.Parse(text).Root!.Element("descriptor")!;
            Assert.StartsWith(typeof(AuthenticatedEncryptorDescriptorDeserializer).FullName + ",", (string)descriptor.Attribute("deserializerType")!, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void A_stock_key_ring_runs_on_CachedAes_from_the_first_payload()
    {
        DirectoryInfo keys = _root.CreateSubdirectory("existing");
        List<(byte[] Plaintext, byte[] Payload)> byStock = [];
        Ran(cachedAes: false, "stock making a ring", () => byStock = ProtectAll(Protector(Build(keys, useCachedAes: false)), seed: 1));
        string keyFileBefore = File.ReadAllText(keys.GetFiles("key-*.xml").Single().FullName);
        Guid stockKey = KeyIdOf(byStock[0].Payload);

        // The application switches to UseCachedAes: its very first unprotect and its first protect run on CachedAes,
        // under the key stock made; the ring is left as it was.
        IDataProtector cached = Protector(Build(keys, useCachedAes: true));
        Ran(cachedAes: true, "the first unprotect after the switch", () => Assert.Equal(byStock[3].Plaintext, cached.Unprotect(byStock[3].Payload)));
        byte[] first = [];
        Ran(cachedAes: true, "the first protect after the switch", () => first = cached.Protect([7]));
        Assert.Equal(stockKey, KeyIdOf(first));
        Ran(cachedAes: true, "the rest of stock's payloads", () => AssertUnprotectsAll(cached, byStock, "UseCachedAes reading stock's ring"));
        Assert.Equal(keyFileBefore, File.ReadAllText(keys.GetFiles("key-*.xml").Single().FullName));
        AssertStockKeys(keys, 1);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Stock_and_UseCachedAes_share_a_ring_either_first_and_across_key_rotations(bool stockFirst)
    {
        DirectoryInfo keys = _root.CreateSubdirectory(stockFirst ? "stock-first" : "cached-first");
        bool a = !stockFirst; // the first application uses CachedAes unless stock goes first
        string Name(bool useCachedAes) => useCachedAes ? "UseCachedAes" : "stock";
        var all = new List<(byte[] Plaintext, byte[] Payload)>();

        // The first application makes the ring; the second reads it and protects under the same key; the first, started
        // anew, reads that.
        IDataProtector first = Protector(Build(keys, a));
        List<(byte[], byte[])> byFirst = [];
        Ran(a, $"{Name(a)} making the ring", () => byFirst = ProtectAll(first, seed: 10));
        IDataProtector second = Protector(Build(keys, !a));
        List<(byte[], byte[])> bySecond = [];
        Ran(!a, $"{Name(!a)} reading {Name(a)}'s ring", () => AssertUnprotectsAll(second, byFirst, $"{Name(!a)} reading {Name(a)}"));
        Ran(!a, $"{Name(!a)} protecting", () => bySecond = ProtectAll(second, seed: 11));
        Assert.All(bySecond, p => Assert.Equal(KeyIdOf(byFirst[0].Item2), KeyIdOf(p.Item2)));
        Ran(a, $"{Name(a)} reading {Name(!a)}'s payloads", () => AssertUnprotectsAll(Protector(Build(keys, a)), bySecond, $"{Name(a)} reading {Name(!a)}"));
        all.AddRange(byFirst);
        all.AddRange(bySecond);
        AssertStockKeys(keys, 1);

        // Rotations: each application in turn makes a new key (as Data Protection does before a key expires; here at
        // once), and then both, started anew, protect under it and read everything written so far.
        int seed = 20;
        foreach (bool rotator in new[] { !a, a })
        {
            IKey newKey = Build(keys, rotator).GetRequiredService<IKeyManager>().CreateNewKey(
                activationDate: DateTimeOffset.UtcNow, expirationDate: DateTimeOffset.UtcNow.AddDays(90));
            foreach (bool useCachedAes in new[] { a, !a })
            {
                IDataProtector protector = Protector(Build(keys, useCachedAes));
                List<(byte[], byte[])> made = [];
                Ran(useCachedAes, $"{Name(useCachedAes)} after {Name(rotator)} rotated", () =>
                {
                    AssertUnprotectsAll(protector, all, $"{Name(useCachedAes)} after {Name(rotator)} rotated");
                    made = ProtectAll(protector, seed++);
                });
                Assert.All(made, p => Assert.Equal(newKey.KeyId, KeyIdOf(p.Item2)));
                all.AddRange(made);
            }
        }

        AssertStockKeys(keys, 3);
        Ran(cachedAes: false, "stock reading everything", () => AssertUnprotectsAll(Protector(Build(keys, useCachedAes: false)), all, "stock, at the end"));
        Ran(cachedAes: true, "UseCachedAes reading everything", () => AssertUnprotectsAll(Protector(Build(keys, useCachedAes: true)), all, "UseCachedAes, at the end"));
    }

    public static TheoryData<string, bool> Configurations() => new()
    {
        { "AES_128_CBC HMACSHA512", true },
        { "AES_192_CBC HMACSHA256", true },
        { "managed Aes 128 HMACSHA384", true },
        { "AES_256_GCM", false },
    };

    private static void Configure(IDataProtectionBuilder builder, string configuration)
    {
        switch (configuration)
        {
            case "AES_128_CBC HMACSHA512":
                builder.UseCryptographicAlgorithms(new AuthenticatedEncryptorConfiguration
                {
                    EncryptionAlgorithm = EncryptionAlgorithm.AES_128_CBC,
                    ValidationAlgorithm = ValidationAlgorithm.HMACSHA512,
                });
                break;
            case "AES_192_CBC HMACSHA256":
                builder.UseCryptographicAlgorithms(new AuthenticatedEncryptorConfiguration { EncryptionAlgorithm = EncryptionAlgorithm.AES_192_CBC });
                break;
            case "managed Aes 128 HMACSHA384":
                builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
                {
                    EncryptionAlgorithmType = typeof(System.Security.Cryptography.Aes),
                    EncryptionAlgorithmKeySize = 128,
                    ValidationAlgorithmType = typeof(System.Security.Cryptography.HMACSHA384),
                });
                break;
            default:
                builder.UseCryptographicAlgorithms(new AuthenticatedEncryptorConfiguration { EncryptionAlgorithm = EncryptionAlgorithm.AES_256_GCM });
                break;
        }
    }

    /// <summary>
    /// Keys of other AES-CBC + HMAC configurations run on CachedAes too, and an AES-GCM key stays on Data Protection's own
    /// encryptor; either way the two applications read each other's payloads.
    /// </summary>
    [Theory]
    [MemberData(nameof(Configurations))]
    public void Other_configurations_AES_CBC_runs_on_CachedAes_and_AES_GCM_stays_stocks(string configuration, bool runsOnCachedAes)
    {
        DirectoryInfo keys = _root.CreateSubdirectory(configuration.Replace(' ', '-'));
        List<(byte[], byte[])> byStock = ProtectAll(Protector(Build(keys, useCachedAes: false, b => Configure(b, configuration))), seed: 30);
        Assert.DoesNotContain("CachedAes", File.ReadAllText(keys.GetFiles("key-*.xml").Single().FullName), StringComparison.Ordinal);

        IDataProtector cached = Protector(Build(keys, useCachedAes: true, b => Configure(b, configuration)));
        List<(byte[], byte[])> byCached = [];
        Ran(runsOnCachedAes, configuration, () =>
        {
            AssertUnprotectsAll(cached, byStock, $"UseCachedAes reading stock's {configuration}");
            byCached = ProtectAll(cached, seed: 31);
        });
        AssertUnprotectsAll(Protector(Build(keys, useCachedAes: false, b => Configure(b, configuration))), byCached, $"stock reading UseCachedAes's {configuration}");
        Assert.DoesNotContain("CachedAes", File.ReadAllText(keys.GetFiles("key-*.xml").Single().FullName), StringComparison.Ordinal);
    }

    [Fact]
    public void UseCachedAes_puts_one_factory_first_however_often_it_is_called()
    {
        ServiceProvider once = Build(_root.CreateSubdirectory("once"), useCachedAes: true);
        ServiceProvider twice = Build(_root.CreateSubdirectory("twice"), useCachedAes: true, b => b.UseCachedAes());
        ServiceProvider stock = Build(_root.CreateSubdirectory("none"), useCachedAes: false);
        IList<IAuthenticatedEncryptorFactory> stockFactories = stock.GetRequiredService<IOptions<KeyManagementOptions>>().Value.AuthenticatedEncryptorFactories;
        foreach (ServiceProvider services in new[] { once, twice })
        {
            IList<IAuthenticatedEncryptorFactory> factories = services.GetRequiredService<IOptions<KeyManagementOptions>>().Value.AuthenticatedEncryptorFactories;
            Assert.Equal("CachedAesAuthenticatedEncryptorFactory", factories[0].GetType().Name);
            Assert.Equal(stockFactories.Select(f => f.GetType()), factories.Skip(1).Select(f => f.GetType()));
        }
    }

    [Fact]
    public void UseCachedAes_rejects_a_null_builder_as_stock_does()
    {
        ArgumentNullException fromStock = Assert.Throws<ArgumentNullException>(() =>
            DataProtectionBuilderExtensions.UseCryptographicAlgorithms(null!, new AuthenticatedEncryptorConfiguration()));
        ArgumentNullException fromPackage = Assert.Throws<ArgumentNullException>(() => CachedAesDataProtectionBuilderExtensions.UseCachedAes(null!));
        Assert.Equal(fromStock.ParamName, fromPackage.ParamName);
    }
}
