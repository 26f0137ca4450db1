using System;
using Jose;

namespace CachedCryptography.JoseJwt;

/// <summary>Switches a jose-jwt <see cref="JwtSettings"/> to CachedAes in one call.</summary>
public static class CachedAesJwtSettingsExtensions
{
    private static readonly (JweAlgorithm Algorithm, int KekLengthBits)[] s_keyWraps =
        [(JweAlgorithm.A128KW, 128), (JweAlgorithm.A192KW, 192), (JweAlgorithm.A256KW, 256)];

    private static readonly (JweEncryption Encryption, int KeyLengthBits)[] s_contentEncryptions =
        [(JweEncryption.A128CBC_HS256, 256), (JweEncryption.A192CBC_HS384, 384), (JweEncryption.A256CBC_HS512, 512)];

    /// <summary>
    /// Makes <paramref name="settings"/> run AES key wrap (A128KW, A192KW, A256KW) and AES-CBC-HMAC content encryption
    /// (A128CBC-HS256, A192CBC-HS384, A256CBC-HS512) on CachedAes: it registers a <see cref="CachedAesKeyWrapManagement"/>
    /// and a <see cref="CachedAesCbcHmacEncryption"/> for each (<see cref="JwtSettings.RegisterJwa(JweAlgorithm, IKeyManagement)"/>,
    /// <see cref="JwtSettings.RegisterJwe(JweEncryption, IJweAlgorithm)"/>) in place of jose-jwt's own. Every other algorithm
    /// stays jose-jwt's, and so do the AES key wraps inside ECDH-ES+A*KW and PBES2-HS*+A*KW, which jose-jwt runs on its own.
    /// </summary>
    /// <param name="settings">
    /// The settings: usually <see cref="JWT.DefaultSettings"/>, which every <c>JWT</c> and <c>JWE</c> call without settings
    /// of its own uses (<c>JWT.DefaultSettings.UseCachedAes()</c>, once at startup); or settings passed to the calls.
    /// </param>
    /// <returns><paramref name="settings"/>, for chaining.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="settings"/> is null.</exception>
    /// <exception cref="InvalidOperationException">
    /// One of the six algorithms has an implementation registered that is neither jose-jwt's own nor CachedAes's: it is not
    /// replaced silently, and nothing is changed. Calling this again on settings that already use CachedAes changes nothing;
    /// an algorithm that was deregistered stays deregistered.
    /// </exception>
    /// <remarks>
    /// Tokens do not depend on it: the headers, wrapped keys, ciphertexts and tags are those jose-jwt makes, so tokens
    /// made with it read with stock jose-jwt and the reverse. Like <see cref="JwtSettings"/>'s own registration methods,
    /// it is not safe to call while other threads use the same settings: call it before the settings are used.
    /// </remarks>
    public static JwtSettings UseCachedAes(this JwtSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);

        // Check all six first, so that a refusal leaves the settings as they were.
        foreach ((JweAlgorithm algorithm, _) in s_keyWraps)
        {
            CheckReplaceable(settings.Jwa(Headers.Jwa(algorithm)), typeof(AesKeyWrapManagement), typeof(CachedAesKeyWrapManagement), Headers.Jwa(algorithm));
        }

        foreach ((JweEncryption encryption, _) in s_contentEncryptions)
        {
            CheckReplaceable(settings.Jwe(Headers.Jwe(encryption)), typeof(AesCbcHmacEncryption), typeof(CachedAesCbcHmacEncryption), Headers.Jwe(encryption));
        }

        foreach ((JweAlgorithm algorithm, int kekLengthBits) in s_keyWraps)
        {
            if (settings.Jwa(Headers.Jwa(algorithm))?.GetType() == typeof(AesKeyWrapManagement))
            {
                _ = settings.RegisterJwa(algorithm, new CachedAesKeyWrapManagement(kekLengthBits));
            }
        }

        foreach ((JweEncryption encryption, int keyLengthBits) in s_contentEncryptions)
        {
            if (settings.Jwe(Headers.Jwe(encryption))?.GetType() == typeof(AesCbcHmacEncryption))
            {
                _ = settings.RegisterJwe(encryption, new CachedAesCbcHmacEncryption(keyLengthBits));
            }
        }

        return settings;
    }

    /// <summary>Throws unless <paramref name="registered"/> is absent, jose-jwt's own type, or CachedAes's.</summary>
    private static void CheckReplaceable(object? registered, Type stock, Type cached, string name)
    {
        if (registered is not null && registered.GetType() != stock && registered.GetType() != cached)
        {
            throw new InvalidOperationException(
                $"These JwtSettings have a custom implementation registered for {name} ({registered.GetType().FullName}); UseCachedAes does not replace it. " +
                $"Register {cached.Name} for it yourself, or leave it.");
        }
    }
}
