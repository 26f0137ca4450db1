using System;
using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;
using System.Xml.Linq;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.Logging;

namespace CachedCryptography.DataProtection;

/// <summary>
/// The authenticated-encryptor factory <c>UseCachedAes()</c> puts first in Data Protection's list: for a key whose
/// algorithms are AES-CBC with an HMAC and that Data Protection would run on its managed encryptor, it builds that managed
/// encryptor with <see cref="CachedAes"/> as its AES, in memory; for any other key it returns null and Data Protection's
/// own factories decide. The key, and what Data Protection writes for new keys, stay as stock's.
/// </summary>
/// <remarks>
/// <para>
/// Which keys: a key of Data Protection's default configuration (<see cref="AuthenticatedEncryptorDescriptor"/> with
/// <c>AES_128_CBC</c>, <c>AES_192_CBC</c> or <c>AES_256_CBC</c> and <c>HMACSHA256</c> or <c>HMACSHA512</c>) where Data
/// Protection runs such keys on its managed encryptor over <see cref="Aes"/>, which is everywhere but Windows; and a key
/// of a managed configuration (<see cref="ManagedAuthenticatedEncryptorDescriptor"/>) whose encryption algorithm is
/// <c>Aes</c>, or CachedAes itself (keys written by the package's first releases), with a key length of 128, 192 or 256
/// bits and <c>HMACSHA1</c>, <c>HMACSHA256</c>, <c>HMACSHA384</c> or <c>HMACSHA512</c>, on every OS. On Windows, Data
/// Protection runs its default configuration's keys on its CNG encryptor (key derivation, HMAC and AES-CBC in direct
/// <c>bcrypt.dll</c> calls), which the managed encryptor over CachedAes does not beat (measured under Wine:
/// docs/integrations.md, "Windows"), so those keys are left to it. AES-GCM, CNG configurations of one's own and
/// anything else are left to Data Protection.
/// </para>
/// <para>
/// How: the descriptor's public <see cref="IAuthenticatedEncryptorDescriptor.ExportToXml"/> gives the algorithms and the
/// master key (its configuration and master key are not public), and Data Protection's public
/// <see cref="ManagedAuthenticatedEncryptorFactory"/> builds the encryptor from a
/// <see cref="ManagedAuthenticatedEncryptorDescriptor"/> naming <see cref="CachedAes"/>, which exists only in memory. The
/// payloads are those of Data Protection's managed encryptor, which every Data Protection encryptor for these algorithms
/// reads and writes. Data Protection asks once per key for each key ring it loads, not per payload.
/// </para>
/// </remarks>
internal sealed class CachedAesAuthenticatedEncryptorFactory : IAuthenticatedEncryptorFactory
{
    private readonly ManagedAuthenticatedEncryptorFactory _managed;
    private readonly bool _defaultKeysRunOnCng;

    /// <summary>Creates the factory; <paramref name="loggerFactory"/> is handed to Data Protection's managed factory.</summary>
    /// <remarks>On Windows it leaves the default configuration's keys to Data Protection's CNG encryptor.</remarks>
    public CachedAesAuthenticatedEncryptorFactory(ILoggerFactory loggerFactory)
        : this(loggerFactory, defaultKeysRunOnCng: OperatingSystem.IsWindows())
    {
    }

    /// <summary>
    /// Creates the factory, saying whether Data Protection runs its default configuration's keys on its CNG encryptor here
    /// (it does on Windows, where its own factory finds <c>bcrypt.dll</c>); then such keys are left to it. The tests pass
    /// either value on any OS.
    /// </summary>
    internal CachedAesAuthenticatedEncryptorFactory(ILoggerFactory loggerFactory, bool defaultKeysRunOnCng)
    {
        _managed = new ManagedAuthenticatedEncryptorFactory(loggerFactory);
        _defaultKeysRunOnCng = defaultKeysRunOnCng;
    }

    /// <summary>
    /// The managed encryptor over CachedAes for an AES-CBC + HMAC key that Data Protection runs on its managed encryptor;
    /// null for any other key (on Windows, the default configuration's keys included).
    /// </summary>
    /// <param name="key">The key Data Protection asks about.</param>
    /// <returns>The encryptor, or null to let the next factory decide.</returns>
    public IAuthenticatedEncryptor? CreateEncryptorInstance(IKey key)
    {
        ArgumentNullException.ThrowIfNull(key);
        IAuthenticatedEncryptorDescriptor descriptor = key.Descriptor;
        if (descriptor is not (AuthenticatedEncryptorDescriptor or ManagedAuthenticatedEncryptorDescriptor)
            || (descriptor is AuthenticatedEncryptorDescriptor && _defaultKeysRunOnCng))
        {
            return null;
        }

        XElement xml = descriptor.ExportToXml().SerializedDescriptorElement;
        ManagedAuthenticatedEncryptorConfiguration? configuration = descriptor is AuthenticatedEncryptorDescriptor
            ? FromDefaultDescriptor(xml)
            : FromManagedDescriptor(xml);
        string? masterKeyText = (string?)xml.Element("masterKey")?.Element("value");
        if (configuration is null || masterKeyText is null)
        {
            return null;
        }

        byte[] masterKey = Convert.FromBase64String(masterKeyText);
        try
        {
            using var secret = new Secret(masterKey);
            return _managed.CreateEncryptorInstance(new KeyWithDescriptor(key, new ManagedAuthenticatedEncryptorDescriptor(configuration, secret)));
        }
        finally
        {
            CryptographicOperations.ZeroMemory(masterKey);
        }
    }

    /// <summary><c>&lt;encryption algorithm="AES_256_CBC" /&gt;&lt;validation algorithm="HMACSHA256" /&gt;</c> and the like.</summary>
    private static ManagedAuthenticatedEncryptorConfiguration? FromDefaultDescriptor(XElement xml)
    {
        int keySize = (string?)xml.Element("encryption")?.Attribute("algorithm") switch
        {
            nameof(EncryptionAlgorithm.AES_128_CBC) => 128,
            nameof(EncryptionAlgorithm.AES_192_CBC) => 192,
            nameof(EncryptionAlgorithm.AES_256_CBC) => 256,
            _ => 0,
        };
        Type? validation = (string?)xml.Element("validation")?.Attribute("algorithm") switch
        {
            nameof(ValidationAlgorithm.HMACSHA256) => typeof(HMACSHA256),
            nameof(ValidationAlgorithm.HMACSHA512) => typeof(HMACSHA512),
            _ => null,
        };
        return Configuration(keySize, validation);
    }

    /// <summary><c>&lt;encryption algorithm="Aes" keyLength="256" /&gt;&lt;validation algorithm="HMACSHA256" /&gt;</c> and the like.</summary>
    private static ManagedAuthenticatedEncryptorConfiguration? FromManagedDescriptor(XElement xml)
    {
        XElement? encryption = xml.Element("encryption");
        string? algorithm = (string?)encryption?.Attribute("algorithm");
        bool aes = algorithm == "Aes" || algorithm?.StartsWith(typeof(CachedAes).FullName + ", CachedAes,", StringComparison.Ordinal) == true;
        int keySize = aes && int.TryParse((string?)encryption!.Attribute("keyLength"), out int bits) ? bits : 0;
        Type? validation = (string?)xml.Element("validation")?.Attribute("algorithm") switch
        {
            nameof(HMACSHA1) => typeof(HMACSHA1),
            nameof(HMACSHA256) => typeof(HMACSHA256),
            nameof(HMACSHA384) => typeof(HMACSHA384),
            nameof(HMACSHA512) => typeof(HMACSHA512),
            _ => null,
        };
        return Configuration(keySize, validation);
    }

    private static ManagedAuthenticatedEncryptorConfiguration? Configuration(
        int keySize, [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicParameterlessConstructor)] Type? validation) =>
        keySize is 128 or 192 or 256 && validation is not null
            ? new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = typeof(CachedAes),
                EncryptionAlgorithmKeySize = keySize,
                ValidationAlgorithmType = validation,
            }
            : null;

    /// <summary>The key as Data Protection's managed factory sees it: the key's dates and id, the in-memory descriptor.</summary>
    private sealed class KeyWithDescriptor(IKey key, IAuthenticatedEncryptorDescriptor descriptor) : IKey
    {
        public DateTimeOffset ActivationDate => key.ActivationDate;

        public DateTimeOffset CreationDate => key.CreationDate;

        public DateTimeOffset ExpirationDate => key.ExpirationDate;

        public bool IsRevoked => key.IsRevoked;

        public Guid KeyId => key.KeyId;

        public IAuthenticatedEncryptorDescriptor Descriptor => descriptor;

        // Only the factory above sees this object; the encryptor Data Protection uses comes from that factory.
        public IAuthenticatedEncryptor? CreateEncryptor() => throw new NotSupportedException();
    }
}
