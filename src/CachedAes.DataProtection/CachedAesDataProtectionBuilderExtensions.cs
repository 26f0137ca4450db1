using System;
using System.Security.Cryptography;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;

namespace CachedCryptography.DataProtection;

/// <summary>Switches ASP.NET Core Data Protection to CachedAes in one call.</summary>
public static class CachedAesDataProtectionBuilderExtensions
{
    /// <summary>
    /// Makes Data Protection create its new keys for its managed authenticated encryptor with <see cref="CachedAes"/> as
    /// the encryption algorithm: AES-256-CBC with HMACSHA256, Data Protection's default algorithms, by way of
    /// <see cref="DataProtectionBuilderExtensions.UseCustomCryptographicAlgorithms(IDataProtectionBuilder, ManagedAuthenticatedEncryptorConfiguration)"/>
    /// with a <see cref="ManagedAuthenticatedEncryptorConfiguration"/> whose
    /// <see cref="ManagedAuthenticatedEncryptorConfiguration.EncryptionAlgorithmType"/> is <see cref="CachedAes"/>.
    /// </summary>
    /// <param name="builder">The builder from <c>services.AddDataProtection()</c>.</param>
    /// <returns><paramref name="builder"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    /// <remarks>
    /// <para>
    /// Payloads are the same format as stock Data Protection's: what a key made with this setting protects, stock Data
    /// Protection unprotects with the same key ring, and the reverse. The setting applies to keys created after it: each
    /// key records its algorithms, so keys made before keep using what they were made with (stock <see cref="Aes"/>, or on
    /// Windows Data Protection's own CNG encryptor), and keys made with it record CachedAes's assembly-qualified type name.
    /// Such keys can be read only where that CachedAes assembly can be loaded, for as long as they or the data protected
    /// with them must be read. The name carries the assembly version, which is the package's major version only
    /// (<c>0.0.0.0</c> for every 0.x release): any release of the same major version reads the keys, after an upgrade or a
    /// rollback, and a later major release reads an earlier one's; an earlier major release cannot read a later one's.
    /// </para>
    /// <para>
    /// On Windows this also replaces Data Protection's default CNG encryptor (AES-CBC, the HMAC and the key derivation in
    /// <c>bcrypt.dll</c>) with the managed encryptor (the key derivation and the HMAC in .NET, AES on CachedAes, which
    /// uses <c>bcrypt.dll</c> there): docs/integrations.md in the repository says what changes.
    /// </para>
    /// </remarks>
    public static IDataProtectionBuilder UseCachedAes(this IDataProtectionBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
        {
            EncryptionAlgorithmType = typeof(CachedAes),
            EncryptionAlgorithmKeySize = 256,
            ValidationAlgorithmType = typeof(HMACSHA256),
        });
    }
}
