using System;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>
/// <c>UseCachedAes()</c> where CachedAes runs on Windows CNG: it sets nothing, so IdentityModel's own providers run (per
/// token both make a CNG key, and CachedAes measured no faster there). The choice is the internal overload's argument, so
/// both choices run on any OS; the public call makes it from <see cref="CachedAesDiagnostics.Backend"/>.
/// </summary>
public sealed class CngStepAsideTests
{
    [Fact]
    public void On_cng_UseCachedAes_leaves_the_factorys_own_providers()
    {
        var factory = new CryptoProviderFactory();
        Assert.Same(factory, CachedAesCryptoProviderFactoryExtensions.UseCachedAesOrStepAside(factory, stepAside: true));
        Assert.Null(factory.CustomCryptoProvider);

        var kek = new SymmetricSecurityKey(new byte[32]) { CryptoProviderFactory = factory };
        Assert.IsType<SymmetricKeyWrapProvider>(factory.CreateKeyWrapProvider(kek, SecurityAlgorithms.Aes256KW));
        Assert.IsType<AuthenticatedEncryptionProvider>(factory.CreateAuthenticatedEncryptionProvider(new SymmetricSecurityKey(new byte[32]), SecurityAlgorithms.Aes128CbcHmacSha256));
    }

    [Fact]
    public void On_cng_UseCachedAes_still_refuses_another_custom_provider_and_keeps_one_set_directly()
    {
        // The same checks as elsewhere: the behaviour differs only in what an untouched factory gets.
        var other = new CryptoProviderFactory { CustomCryptoProvider = new CachedAesCryptoProvider() };
        ICryptoProvider set = other.CustomCryptoProvider;
        Assert.Same(other, CachedAesCryptoProviderFactoryExtensions.UseCachedAesOrStepAside(other, stepAside: true));
        Assert.Same(set, other.CustomCryptoProvider);

        var foreign = new CryptoProviderFactory { CustomCryptoProvider = new ForeignProvider() };
        Assert.Throws<InvalidOperationException>(() => CachedAesCryptoProviderFactoryExtensions.UseCachedAesOrStepAside(foreign, stepAside: true));
        Assert.Throws<ArgumentNullException>(() => CachedAesCryptoProviderFactoryExtensions.UseCachedAesOrStepAside(null!, stepAside: true));
    }

    [Fact]
    public void Elsewhere_UseCachedAes_sets_the_package_provider_and_the_public_call_follows_the_backend()
    {
        var factory = new CryptoProviderFactory();
        CachedAesCryptoProviderFactoryExtensions.UseCachedAesOrStepAside(factory, stepAside: false);
        Assert.IsType<CachedAesCryptoProvider>(factory.CustomCryptoProvider);

        var byBackend = new CryptoProviderFactory().UseCachedAes();
        if (CachedAesDiagnostics.Backend == CachedAesBackend.Cng)
        {
            Assert.Null(byBackend.CustomCryptoProvider);
        }
        else
        {
            Assert.IsType<CachedAesCryptoProvider>(byBackend.CustomCryptoProvider);
        }
    }

    private sealed class ForeignProvider : ICryptoProvider
    {
        public object Create(string algorithm, params object[] args) => throw new NotSupportedException();

        public bool IsSupportedAlgorithm(string algorithm, params object[] args) => false;

        public void Release(object cryptoInstance)
        {
        }
    }
}
