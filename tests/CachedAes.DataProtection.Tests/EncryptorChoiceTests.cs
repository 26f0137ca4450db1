using System;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;

namespace CachedCryptography.DataProtection.Tests;

/// <summary>
/// Which keys <c>UseCachedAes()</c>'s factory takes over, on Windows and elsewhere. Data Protection runs the keys of its
/// default configuration on its CNG encryptor on Windows and on its managed encryptor everywhere else; the factory takes
/// over only the keys Data Protection runs on its managed encryptor. The choice is the factory's constructor argument, so
/// both OSes' choices run here; under Wine, tests/lanes/CachedAes.DataProtection.WineCheck shows the real one on Windows.
/// </summary>
public sealed class EncryptorChoiceTests : IDisposable
{
    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("cachedaes-encryptor-choice-");

    [Fact]
    public void Where_default_keys_run_on_cng_the_factory_leaves_them_and_takes_over_managed_keys()
    {
        var windows = new CachedAesAuthenticatedEncryptorFactory(NullLoggerFactory.Instance, defaultKeysRunOnCng: true);

        Assert.Null(windows.CreateEncryptorInstance(NewKey("default", managedAes: false)));
        IKey managed = NewKey("managed", managedAes: true);
        AssertRunsOnCachedAes(windows.CreateEncryptorInstance(managed), managed);
    }

    [Fact]
    public void Elsewhere_the_factory_takes_over_default_and_managed_keys()
    {
        var elsewhere = new CachedAesAuthenticatedEncryptorFactory(NullLoggerFactory.Instance, defaultKeysRunOnCng: false);

        IKey defaultKey = NewKey("default", managedAes: false);
        AssertRunsOnCachedAes(elsewhere.CreateEncryptorInstance(defaultKey), defaultKey);
        IKey managed = NewKey("managed", managedAes: true);
        AssertRunsOnCachedAes(elsewhere.CreateEncryptorInstance(managed), managed);
    }

    [Fact]
    public void UseCachedAes_chooses_as_data_protection_does_on_this_os()
    {
        // The factory UseCachedAes() installs says what this OS does: on Windows, Data Protection's own factory makes its
        // CNG encryptor for a default key.
        var installed = new CachedAesAuthenticatedEncryptorFactory(NullLoggerFactory.Instance);
        IKey defaultKey = NewKey("default", managedAes: false);
        IAuthenticatedEncryptor? encryptor = installed.CreateEncryptorInstance(defaultKey);
        if (OperatingSystem.IsWindows())
        {
            Assert.Null(encryptor);
        }
        else
        {
            AssertRunsOnCachedAes(encryptor, defaultKey);
        }
    }

    public void Dispose() => _root.Delete(recursive: true);

    // The managed encryptor over CachedAes: CachedAes runs for its calls, and what it protects, stock's encryptor for the
    // same key reads, and the other way round.
    private static void AssertRunsOnCachedAes(IAuthenticatedEncryptor? encryptor, IKey key)
    {
        Assert.NotNull(encryptor);
        Assert.Equal("ManagedAuthenticatedEncryptor", encryptor.GetType().Name);
        IAuthenticatedEncryptor stock = key.CreateEncryptor()!;
        byte[] plaintext = [.. Enumerable.Range(0, 100).Select(i => (byte)i)];
        byte[] aad = [1, 2, 3];
        using var calls = new CachedAesCalls();
        byte[] protectedByCached = [];
        Assert.True(calls.During(() => protectedByCached = encryptor.Encrypt(new ArraySegment<byte>(plaintext), new ArraySegment<byte>(aad))) > 0);
        Assert.Equal(plaintext, stock.Decrypt(new ArraySegment<byte>(protectedByCached), new ArraySegment<byte>(aad)));
        byte[] protectedByStock = stock.Encrypt(new ArraySegment<byte>(plaintext), new ArraySegment<byte>(aad));
        Assert.Equal(plaintext, encryptor.Decrypt(new ArraySegment<byte>(protectedByStock), new ArraySegment<byte>(aad)));
    }

    // A key made by stock Data Protection: of its default configuration, or of a managed configuration naming Aes.
    private IKey NewKey(string ring, bool managedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection()
            .SetApplicationName(KeyRings.ApplicationName)
            .PersistKeysToFileSystem(_root.CreateSubdirectory(ring))
            .DisableAutomaticKeyGeneration();
        if (managedAes)
        {
            builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = typeof(Aes),
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
        }

        using ServiceProvider provider = services.BuildServiceProvider();
        IKey key = provider.GetRequiredService<IKeyManager>().CreateNewKey(DateTimeOffset.UtcNow.AddMinutes(-1), DateTimeOffset.UtcNow.AddDays(1));
        Assert.Equal(managedAes ? typeof(ManagedAuthenticatedEncryptorDescriptor) : typeof(AuthenticatedEncryptorDescriptor), key.Descriptor.GetType());
        return key;
    }
}
