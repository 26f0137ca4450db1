using System;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>
/// An IdentityModel <see cref="ICryptoProvider"/> that hands out CachedAes-backed providers for AES key wrap
/// (A128KW, A192KW, A256KW: <see cref="CachedAesKeyWrapProvider"/>) and AES-CBC-HMAC content encryption
/// (A128CBC-HS256, A192CBC-HS384, A256CBC-HS512: <see cref="CachedAesCbcHmacProvider"/>), for symmetric keys
/// (<see cref="SymmetricSecurityKey"/>, or a <see cref="JsonWebKey"/> of key type <c>oct</c>). For every other
/// algorithm and key it says "not supported", so IdentityModel uses its own providers.
/// </summary>
/// <remarks>
/// <para>
/// Set it as a <see cref="CryptoProviderFactory"/>'s <see cref="CryptoProviderFactory.CustomCryptoProvider"/>, most
/// simply with <see cref="CachedAesCryptoProviderFactoryExtensions.UseCachedAes(CryptoProviderFactory)"/>.
/// </para>
/// <para>
/// How IdentityModel 8.x asks (its <see cref="CryptoProviderFactory"/>): with <c>(key, bool)</c> for a key-wrap provider
/// (the bool says whether it will unwrap) and also for a signature provider, with <c>(key)</c> for an authenticated
/// encryption provider and in <see cref="CryptoProviderFactory.IsSupportedAlgorithm(string, SecurityKey)"/>, and with
/// nothing when it releases a provider. The argument shapes overlap, so the algorithm name decides: HMAC signature
/// algorithms are never claimed, not even the HMAC that IdentityModel's own content provider asks for under the
/// content-encryption algorithm's name with <c>(key, bool)</c>.
/// </para>
/// <para>The provider holds no state besides how it makes AES instances; one instance may serve any number of factories
/// and threads.</para>
/// </remarks>
public sealed class CachedAesCryptoProvider : ICryptoProvider
{
    private readonly Func<CachedAes> _createAes;

    /// <summary>Creates the provider; the providers it makes use <see cref="CachedAes.Create"/>.</summary>
    public CachedAesCryptoProvider()
        : this(CachedAes.Create)
    {
    }

    /// <summary>Creates the provider with another maker of AES instances (the tests count them).</summary>
    internal CachedAesCryptoProvider(Func<CachedAes> createAes) => _createAes = createAes;

    /// <summary>
    /// Whether this provider handles <paramref name="algorithm"/> for the arguments IdentityModel passes.
    /// </summary>
    /// <param name="algorithm">The algorithm IdentityModel asks for.</param>
    /// <param name="args">
    /// <c>(key, willUnwrap)</c>: true for A128KW/A192KW/A256KW and a symmetric key; <c>(key)</c>: true for
    /// A128CBC-HS256/A192CBC-HS384/A256CBC-HS512 and a symmetric key; no arguments (a release): true for the key-wrap
    /// algorithms, whose providers this one made. Anything else: false.
    /// </param>
    /// <returns>Whether <see cref="Create"/> makes a provider for these arguments.</returns>
    public bool IsSupportedAlgorithm(string algorithm, params object[] args) => args switch
    {
        [SecurityKey key, bool] => Algorithms.IsKeyWrap(algorithm) && Algorithms.IsSymmetric(key),
        [SecurityKey key] => Algorithms.IsCbcHmac(algorithm) && Algorithms.IsSymmetric(key),
        [] => Algorithms.IsKeyWrap(algorithm),
        _ => false,
    };

    /// <summary>
    /// Makes a <see cref="CachedAesKeyWrapProvider"/> for <c>(key, willUnwrap)</c> with a key-wrap algorithm, or a
    /// <see cref="CachedAesCbcHmacProvider"/> for <c>(key)</c> with an AES-CBC-HMAC algorithm.
    /// </summary>
    /// <param name="algorithm">The algorithm, one <see cref="IsSupportedAlgorithm"/> accepted.</param>
    /// <param name="args">The arguments IdentityModel passed to <see cref="IsSupportedAlgorithm"/>.</param>
    /// <returns>The new provider; the caller owns it.</returns>
    /// <exception cref="NotSupportedException">The algorithm and arguments are not ones this provider handles.</exception>
    public object Create(string algorithm, params object[] args) => args switch
    {
        [SecurityKey key, bool] when Algorithms.IsKeyWrap(algorithm) => new CachedAesKeyWrapProvider(key, algorithm, _createAes),
        [SecurityKey key] when Algorithms.IsCbcHmac(algorithm) => new CachedAesCbcHmacProvider(key, algorithm, _createAes),
        _ => throw new NotSupportedException(
            $"{nameof(CachedAesCryptoProvider)} makes providers for AES key wrap (A128KW, A192KW, A256KW) with (key, bool) and AES-CBC-HMAC " +
            $"(A128CBC-HS256, A192CBC-HS384, A256CBC-HS512) with (key), not for '{algorithm}' with {args?.Length ?? 0} argument(s)."),
    };

    /// <summary>Disposes a provider this one made (IdentityModel calls it from <c>ReleaseKeyWrapProvider</c>).</summary>
    /// <param name="cryptoInstance">The provider to release; anything that is not <see cref="IDisposable"/> is left alone.</param>
    public void Release(object cryptoInstance) => (cryptoInstance as IDisposable)?.Dispose();
}

/// <summary>The algorithm names and key types the providers take.</summary>
internal static class Algorithms
{
    public static bool IsKeyWrap(string? algorithm) =>
        algorithm is SecurityAlgorithms.Aes128KW or SecurityAlgorithms.Aes192KW or SecurityAlgorithms.Aes256KW;

    public static bool IsCbcHmac(string? algorithm) =>
        algorithm is SecurityAlgorithms.Aes128CbcHmacSha256 or SecurityAlgorithms.Aes192CbcHmacSha384 or SecurityAlgorithms.Aes256CbcHmacSha512;

    /// <summary>The key types IdentityModel's own AES providers take: symmetric keys and octet JSON Web Keys.</summary>
    public static bool IsSymmetric(SecurityKey key) =>
        key is SymmetricSecurityKey || (key is JsonWebKey { Kty: "oct", K: not null });
}
