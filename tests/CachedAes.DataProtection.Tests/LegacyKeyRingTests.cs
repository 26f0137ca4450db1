using System;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Extensions.DependencyInjection;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// A key ring written by the package's first <c>UseCachedAes()</c> (which set <c>UseCustomCryptographicAlgorithms</c> with
/// CachedAes's type, so its key names <c>CachedCryptography.CachedAes, CachedAes, Version=0.0.0.0, ...</c>): the folder
/// LegacyKeyRing, one key and seven payloads that tests/lanes/CachedAes.DataProtection.UpgradeCheck wrote with that release
/// (application and purpose "upgrade-check"; <c>payloads.txt</c> holds each plaintext in hex and its payload in base64).
/// It keeps working with today's package, and docs/integrations.md's way off it (the key's algorithm rewritten to
/// <c>Aes</c>) gives a ring that stock Data Protection reads.
/// </summary>
public sealed class LegacyKeyRingTests : IDisposable
{
    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("cachedaes-legacy-");

    public void Dispose() => _root.Delete(recursive: true);

    /// <summary>A copy of the legacy ring, with <paramref name="edit"/> applied to its key.</summary>
    private DirectoryInfo Ring(string name, Func<XDocument, XDocument>? edit = null)
    {
        DirectoryInfo ring = _root.CreateSubdirectory(name);
        foreach (string file in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "LegacyKeyRing")))
        {
            string target = Path.Combine(ring.FullName, Path.GetFileName(file));
            if (edit is not null && Path.GetFileName(file).StartsWith("key-", StringComparison.Ordinal))
            {
                edit(XDocument.Load(file)).Save(target);
            }
            else
            {
                File.Copy(file, target);
            }
        }

        return ring;
    }

    private static (byte[] Plaintext, byte[] Payload)[] Payloads(DirectoryInfo ring) =>
        [.. File.ReadAllLines(Path.Combine(ring.FullName, "payloads.txt")).Select(line => line.Split(' '))
            .Select(p => (Convert.FromHexString(p[0]), Convert.FromBase64String(p[1])))];

    private static IDataProtector Protector(DirectoryInfo ring, bool useCachedAes, out ServiceProvider provider)
    {
        var services = new ServiceCollection();
        // Automatic key generation stays on: once the legacy key has expired (February 2027), Data Protection adds a key of
        // its own to the copy, and the payloads still unprotect under the expired key.
        IDataProtectionBuilder builder = services.AddDataProtection().SetApplicationName("upgrade-check").PersistKeysToFileSystem(ring);
        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        provider = services.BuildServiceProvider();
        return provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("upgrade-check");
    }

    /// <summary>The docs' way off a key naming CachedAes: its encryption algorithm rewritten to stock's <c>Aes</c>.</summary>
    private static XDocument ToStockAes(XDocument key)
    {
        XElement encryption = key.Descendants("encryption").Single();
        Assert.StartsWith("CachedCryptography.CachedAes, CachedAes, Version=0.0.0.0,", (string)encryption.Attribute("algorithm")!, StringComparison.Ordinal);
        encryption.SetAttributeValue("algorithm", "Aes");
        return key;
    }

    [Fact]
    public void Keys_naming_CachedAes_keep_working_with_and_without_UseCachedAes_while_the_assembly_is_there()
    {
        DirectoryInfo ring = Ring("as-written");
        (byte[] Plaintext, byte[] Payload)[] payloads = Payloads(ring);
        Assert.Equal(7, payloads.Length);
        using var calls = new CachedAesCalls();
        foreach (bool useCachedAes in new[] { true, false })
        {
            IDataProtector protector = Protector(ring, useCachedAes, out ServiceProvider provider);
            using (provider)
            {
                // The key names CachedAes, so Data Protection's own managed factory runs it on CachedAes too.
                long handles = calls.During(() =>
                {
                    foreach ((byte[] plaintext, byte[] payload) in payloads)
                    {
                        Assert.Equal(plaintext, protector.Unprotect(payload));
                    }
                });
                Assert.True(handles > 0, $"useCachedAes {useCachedAes}: CachedAes did not run");
            }
        }
    }

    [Fact]
    public void A_key_naming_a_CachedAes_assembly_that_cannot_be_loaded_unprotects_nothing()
    {
        // What an application without the CachedAes assembly meets with such a key: the reason to move off it.
        DirectoryInfo ring = Ring("unloadable", key =>
        {
            key.Descendants("encryption").Single().SetAttributeValue("algorithm", "CachedCryptography.CachedAes, CachedAes.AssemblyThatDoesNotExist");
            return key;
        });
        IDataProtector protector = Protector(ring, useCachedAes: true, out ServiceProvider provider);
        using (provider)
        {
            Assert.All(Payloads(ring), p => Assert.Throws<CryptographicException>(() => protector.Unprotect(p.Payload)));
        }
    }

    [Fact]
    public void Rewriting_the_keys_algorithm_to_Aes_moves_a_ring_off_CachedAes_and_keeps_every_payload()
    {
        DirectoryInfo ring = Ring("moved", ToStockAes);
        Assert.All(ring.GetFiles("key-*.xml"), f => Assert.DoesNotContain("CachedAes", File.ReadAllText(f.FullName), StringComparison.Ordinal));
        using var calls = new CachedAesCalls();
        foreach (bool useCachedAes in new[] { true, false })
        {
            IDataProtector protector = Protector(ring, useCachedAes, out ServiceProvider provider);
            using (provider)
            {
                long handles = calls.During(() => Assert.All(Payloads(ring), p => Assert.Equal(p.Plaintext, protector.Unprotect(p.Payload))));
                Assert.True(useCachedAes ? handles > 0 : handles == 0, $"useCachedAes {useCachedAes}: CachedAes made {handles} handles");
            }
        }
    }
}
