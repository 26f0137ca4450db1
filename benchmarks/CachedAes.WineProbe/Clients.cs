using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.DataProtection;
using CachedCryptography.IdentityModel;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.AuthenticatedEncryption.ConfigurationModel;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.WineProbe;

/// <summary>
/// The client cases (<c>clients</c>): the two integrations' calls, stock against CachedAes, as the main job's
/// <c>JweRoundTrip</c> and <c>DataProtectionRoundTrip</c> rows make them, and their parts. Every output is checked: a
/// token must validate, a payload must come back, a content ciphertext must decrypt.
/// </summary>
internal sealed class Clients : IDisposable
{
    private const string Issuer = "https://issuer.cachedaes.probe";
    private const string Audience = "cachedaes-probe";

    private static readonly SymmetricSecurityKey s_signingKey = new(Fill(32, 0x53));
    private static readonly byte[] s_kek = Fill(32, 0x4B);
    private static readonly byte[][] s_contentKeys = [.. Enumerable.Range(0, 64).Select(k => Fill(32, 0x100 + k))];
    private static readonly byte[] s_content = Fill(400, 0x43);
    private static readonly byte[] s_aad = Fill(64, 0x41);
    private static readonly byte[] s_payload = Fill(32, 0x50);

    private readonly List<ServiceProvider> _services = [];
    private readonly DirectoryInfo _keys = Directory.CreateTempSubdirectory("cachedaes-wine-probe-");
    private readonly JsonWebTokenHandler _handler = new();
    private int _next;

    /// <summary>Stock IdentityModel's providers.</summary>
    private static CryptoProviderFactory StockFactory() => new();

    /// <summary>The package's providers, set directly (what <c>UseCachedAes()</c> sets where it takes over).</summary>
    private static CryptoProviderFactory CachedFactory() => new() { CustomCryptoProvider = new CachedAesCryptoProvider() };

    /// <summary>Whether <paramref name="name"/> is one of these cases (they start with "JWE" or "DP").</summary>
    public static bool IsClientCase(string name) => name.StartsWith("JWE ", StringComparison.Ordinal) || name.StartsWith("DP ", StringComparison.Ordinal);

    /// <summary>The cases <paramref name="wanted"/> names, built now: key rings made and JWE sides set up.</summary>
    public IEnumerable<Program.Case> Cases(Func<string, bool> wanted)
    {
        (string Name, Func<Func<bool>> Make, int Divisor)[] all =
        [
            ("JWE A256KW+A128CBC-HS256: stock", () => Jwe(StockFactory()), 100),
            ("JWE A256KW+A128CBC-HS256: UseCachedAes()", () => Jwe(new CryptoProviderFactory().UseCachedAes()), 100),
            ("JWE A256KW+A128CBC-HS256: the package's providers", () => Jwe(CachedFactory()), 100),
            ("JWE key wrap A256KW per token: stock", () => () => KeyWrap(StockFactory()), 20),
            ("JWE key wrap A256KW per token: the package's providers", () => () => KeyWrap(CachedFactory()), 20),
            ("JWE content A128CBC-HS256 per token: stock", () => () => Content(StockFactory()), 20),
            ("JWE content A128CBC-HS256 per token: the package's providers", () => () => Content(CachedFactory()), 20),
            ("DP default: stock", () => DataProtection("default-stock", Configuration.Default, useCachedAes: false), 10),
            ("DP default: UseCachedAes()", () => DataProtection("default-cached", Configuration.Default, useCachedAes: true), 10),
            ("DP default: the managed encryptor over CachedAes", () => DataProtection("managed-over-cachedaes", Configuration.ManagedCachedAes, useCachedAes: false), 10),
            ("DP managed Aes: stock", () => DataProtection("managed-stock", Configuration.ManagedAes, useCachedAes: false), 10),
            ("DP managed Aes: UseCachedAes()", () => DataProtection("managed-cached", Configuration.ManagedAes, useCachedAes: true), 10),
        ];
        return [.. all.Where(c => wanted(c.Name)).Select(c => new Program.Case(c.Name, c.Make(), c.Divisor))];
    }

    public void Dispose()
    {
        foreach (ServiceProvider services in _services)
        {
            services.Dispose();
        }

        _keys.Delete(recursive: true);
    }

    // A token made and validated (A256KW key wrap, A128CBC-HS256 content, HS256 signature), as the benchmark's JweRoundTrip.
    private Func<bool> Jwe(CryptoProviderFactory factory)
    {
        var kek = new SymmetricSecurityKey(s_kek) { CryptoProviderFactory = factory };
        var descriptor = new SecurityTokenDescriptor
        {
            Issuer = Issuer,
            Audience = Audience,
            Claims = new Dictionary<string, object> { ["sub"] = "probe-user", ["scope"] = "read write" },
            Expires = DateTime.UtcNow.AddHours(2),
            SigningCredentials = new SigningCredentials(s_signingKey, SecurityAlgorithms.HmacSha256),
            EncryptingCredentials = new EncryptingCredentials(kek, SecurityAlgorithms.Aes256KW, SecurityAlgorithms.Aes128CbcHmacSha256),
        };
        var parameters = new TokenValidationParameters
        {
            ValidIssuer = Issuer,
            ValidAudience = Audience,
            IssuerSigningKey = s_signingKey,
            TokenDecryptionKey = kek,
            CryptoProviderFactory = factory,
        };
        return () =>
        {
            string token = _handler.CreateToken(descriptor);
            TokenValidationResult result = _handler.ValidateTokenAsync(token, parameters).GetAwaiter().GetResult();
            return result.IsValid && (string)result.Claims["sub"] == "probe-user";
        };
    }

    // A content key wrapped and unwrapped with providers made per token and never released, as IdentityModel 8.x does.
    private bool KeyWrap(CryptoProviderFactory factory)
    {
        var kek = new SymmetricSecurityKey(s_kek) { CryptoProviderFactory = factory };
        byte[] contentKey = s_contentKeys[_next++ & 63];
        byte[] wrapped = factory.CreateKeyWrapProvider(kek, SecurityAlgorithms.Aes256KW).WrapKey(contentKey);
        return factory.CreateKeyWrapProviderForUnwrap(kek, SecurityAlgorithms.Aes256KW).UnwrapKey(wrapped).AsSpan().SequenceEqual(contentKey);
    }

    // 400 bytes encrypted and decrypted under a new content key, each with a provider of its own, as a token's two sides.
    private bool Content(CryptoProviderFactory factory)
    {
        var key = new SymmetricSecurityKey(s_contentKeys[_next++ & 63]) { CryptoProviderFactory = factory };
        AuthenticatedEncryptionResult result;
        using (AuthenticatedEncryptionProvider encryptor = factory.CreateAuthenticatedEncryptionProvider(key, SecurityAlgorithms.Aes128CbcHmacSha256))
        {
            result = encryptor.Encrypt(s_content, s_aad);
        }

        using AuthenticatedEncryptionProvider decryptor = factory.CreateAuthenticatedEncryptionProvider(key, SecurityAlgorithms.Aes128CbcHmacSha256);
        return decryptor.Decrypt(result.Ciphertext, s_aad, result.IV, result.AuthenticationTag).AsSpan().SequenceEqual(s_content);
    }

    // A 32-byte payload protected and unprotected over a key ring of its own.
    private Func<bool> DataProtection(string ring, Configuration configuration, bool useCachedAes)
    {
        var services = new ServiceCollection();
        IDataProtectionBuilder builder = services.AddDataProtection()
            .SetApplicationName("CachedAes.WineProbe")
            .PersistKeysToFileSystem(_keys.CreateSubdirectory(ring));
        if (configuration != Configuration.Default)
        {
            builder.UseCustomCryptographicAlgorithms(new ManagedAuthenticatedEncryptorConfiguration
            {
                EncryptionAlgorithmType = configuration == Configuration.ManagedAes ? typeof(Aes) : typeof(CachedAes),
                EncryptionAlgorithmKeySize = 256,
                ValidationAlgorithmType = typeof(HMACSHA256),
            });
        }

        if (useCachedAes)
        {
            builder.UseCachedAes();
        }

        ServiceProvider provider = services.BuildServiceProvider();
        _services.Add(provider);
        IDataProtector protector = provider.GetRequiredService<IDataProtectionProvider>().CreateProtector("probe");
        return () => protector.Unprotect(protector.Protect(s_payload)).AsSpan().SequenceEqual(s_payload);
    }

    private static byte[] Fill(int length, int seed)
    {
        var random = new Random(seed);
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    private enum Configuration
    {
        // Data Protection's default: AES-256-CBC with HMACSHA256 (its CNG encryptor on Windows).
        Default,

        // A managed configuration naming Aes (its managed encryptor over stock Aes).
        ManagedAes,

        // A managed configuration naming CachedAes: the managed encryptor over CachedAes for the default's algorithms.
        ManagedCachedAes,
    }
}
