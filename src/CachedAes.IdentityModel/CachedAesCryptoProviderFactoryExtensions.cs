using System;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>Switches an IdentityModel <see cref="CryptoProviderFactory"/> to CachedAes in one call.</summary>
public static class CachedAesCryptoProviderFactoryExtensions
{
    /// <summary>
    /// Makes <paramref name="factory"/> use CachedAes for AES key wrap (A128KW, A192KW, A256KW) and AES-CBC-HMAC content
    /// encryption (A128CBC-HS256, A192CBC-HS384, A256CBC-HS512), by setting its
    /// <see cref="CryptoProviderFactory.CustomCryptoProvider"/> to a <see cref="CachedAesCryptoProvider"/>; except where
    /// CachedAes runs on Windows CNG (<see cref="CachedAesDiagnostics.Backend"/> is <see cref="CachedAesBackend.Cng"/>),
    /// where it leaves the factory's own providers in place.
    /// </summary>
    /// <param name="factory">
    /// The factory: usually <see cref="CryptoProviderFactory.Default"/>, which every key and every
    /// <see cref="TokenValidationParameters"/> without a factory of its own uses. For some keys only, give those keys a
    /// factory of their own and set the same factory on <see cref="TokenValidationParameters.CryptoProviderFactory"/>
    /// where tokens are read (the content key IdentityModel unwraps there is a new key on that factory).
    /// </param>
    /// <returns><paramref name="factory"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="InvalidOperationException">
    /// <paramref name="factory"/> already has a custom crypto provider that is not a <see cref="CachedAesCryptoProvider"/>
    /// (it is not replaced silently). Calling this again on a factory that already uses CachedAes changes nothing.
    /// </exception>
    /// <remarks>
    /// On CNG, IdentityModel makes a key-wrap provider and a content provider for every token, each with a key of its own,
    /// so CachedAes makes a CNG key where stock makes one too, and measured no faster than stock there (under Wine; the
    /// package's readme has the figures). There this call sets nothing and IdentityModel's own providers run; it reads
    /// <see cref="CachedAesDiagnostics.Backend"/>, which selects CachedAes's backend if nothing did before. A factory can
    /// still be given a <see cref="CachedAesCryptoProvider"/> directly.
    /// </remarks>
    public static CryptoProviderFactory UseCachedAes(this CryptoProviderFactory factory) =>
        UseCachedAesOrStepAside(factory, stepAside: CachedAesDiagnostics.Backend == CachedAesBackend.Cng);

    /// <summary>
    /// <see cref="UseCachedAes(CryptoProviderFactory)"/>, with whether to leave the factory's own providers in place (as on
    /// CNG) given; the tests pass either value on any OS.
    /// </summary>
    internal static CryptoProviderFactory UseCachedAesOrStepAside(CryptoProviderFactory factory, bool stepAside)
    {
        ArgumentNullException.ThrowIfNull(factory);
        switch (factory.CustomCryptoProvider)
        {
            case null when stepAside:
                break;
            case null:
                factory.CustomCryptoProvider = new CachedAesCryptoProvider();
                break;
            case CachedAesCryptoProvider:
                break;
            case ICryptoProvider other:
                throw new InvalidOperationException(
                    $"This CryptoProviderFactory already has a custom crypto provider ({other.GetType().FullName}); UseCachedAes does not replace it. " +
                    $"Set CustomCryptoProvider to a provider that delegates the AES algorithms to a {nameof(CachedAesCryptoProvider)}, or leave it.");
        }

        return factory;
    }
}
