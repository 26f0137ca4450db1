using System;
using System.Linq;
using System.Security.Cryptography;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace CachedCryptography.DataProtection;

/// <summary>Switches ASP.NET Core Data Protection to CachedAes in one call.</summary>
public static class CachedAesDataProtectionBuilderExtensions
{
    /// <summary>
    /// Makes Data Protection run its AES on <see cref="CachedAes"/> for every key whose algorithms are AES-CBC with an
    /// HMAC and that it runs on its managed encryptor (on Windows, the keys of its default configuration stay on its CNG
    /// encryptor), existing keys included, from the first payload, without writing anything that names CachedAes into the
    /// key ring.
    /// </summary>
    /// <param name="builder">The builder from <c>services.AddDataProtection()</c>.</param>
    /// <returns><paramref name="builder"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is null.</exception>
    /// <remarks>
    /// <para>
    /// It puts an authenticated-encryptor factory first in <see cref="KeyManagementOptions.AuthenticatedEncryptorFactories"/>.
    /// For a key of a managed configuration naming <see cref="Aes"/>, and, on every OS but Windows, for a key of Data
    /// Protection's default algorithms (AES-256-CBC with HMACSHA256, or another AES-CBC key size and HMACSHA256 or
    /// HMACSHA512 set with <c>UseCryptographicAlgorithms</c>), that factory builds Data Protection's own managed encryptor
    /// with CachedAes as its AES, in memory. Other keys (AES-GCM, CNG configurations of one's own, and on Windows the
    /// default algorithms' keys) keep Data Protection's encryptors. Calling it twice changes nothing.
    /// </para>
    /// <para>
    /// The key ring is stock's: new keys are made by Data Protection's configuration as if this call were not there, so an
    /// application without CachedAes reads the ring, and removing the package changes nothing but the speed. Payloads are
    /// Data Protection's own format, and cross both ways with stock Data Protection over the same ring.
    /// </para>
    /// <para>
    /// Keys that the package's first releases wrote (their <c>encryption</c> element names
    /// <c>CachedCryptography.CachedAes, CachedAes, ...</c>) keep working here, and need the CachedAes assembly wherever
    /// they are read: docs/integrations.md in the repository says how to move off them.
    /// </para>
    /// <para>
    /// On Windows, Data Protection runs its default algorithms' keys on its CNG encryptor (key derivation, HMAC and
    /// AES-CBC in direct <c>bcrypt.dll</c> calls), and this call leaves them there: the managed encryptor over CachedAes
    /// did not beat it (measured under Wine; docs/integrations.md in the repository has the figures). There it changes
    /// only keys of a managed configuration naming <see cref="Aes"/>.
    /// </para>
    /// </remarks>
    public static IDataProtectionBuilder UseCachedAes(this IDataProtectionBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<KeyManagementOptions>, CachedAesKeyManagementSetup>());
        return builder;
    }

    /// <summary>Puts the CachedAes factory first in the list Data Protection's own setup filled.</summary>
    private sealed class CachedAesKeyManagementSetup(IServiceProvider services) : IConfigureOptions<KeyManagementOptions>
    {
        public void Configure(KeyManagementOptions options)
        {
            if (!options.AuthenticatedEncryptorFactories.Any(f => f is CachedAesAuthenticatedEncryptorFactory))
            {
                ILoggerFactory loggerFactory = services.GetService<ILoggerFactory>() ?? NullLoggerFactory.Instance;
                options.AuthenticatedEncryptorFactories.Insert(0, new CachedAesAuthenticatedEncryptorFactory(loggerFactory));
            }
        }
    }
}
