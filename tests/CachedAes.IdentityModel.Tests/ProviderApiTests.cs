using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.IdentityModel.Abstractions;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Logging;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>
/// The package's public surface beyond the token round trips of <see cref="JweTests"/>: the one-line switch-on
/// (<see cref="CachedAesCryptoProviderFactoryExtensions.UseCachedAes"/>), the public constructors, what the crypto
/// provider claims and refuses, and the content provider's edge cases (disposal, short keys, IV lengths, JSON Web Keys),
/// each against stock IdentityModel's own provider.
/// </summary>
public sealed class ProviderApiTests
{
    private static readonly byte[] s_aad = Encoding.ASCII.GetBytes("eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4Q0JDLUhTMjU2In0");

    private static byte[] Bytes(int length, int seed)
    {
        byte[] bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    [Fact]
    public void UseCachedAes_sets_a_CachedAes_provider_once_and_returns_the_factory()
    {
        var factory = new CryptoProviderFactory();
        Assert.Null(factory.CustomCryptoProvider);
        Assert.Same(factory, factory.UseCachedAes());
        ICryptoProvider provider = Assert.IsType<CachedAesCryptoProvider>(factory.CustomCryptoProvider);

        // Again: nothing changes.
        Assert.Same(factory, factory.UseCachedAes());
        Assert.Same(provider, factory.CustomCryptoProvider);

        var kek = new SymmetricSecurityKey(Bytes(32, 1)) { CryptoProviderFactory = factory };
        Assert.IsType<CachedAesKeyWrapProvider>(factory.CreateKeyWrapProvider(kek, SecurityAlgorithms.Aes256KW));
        Assert.IsType<CachedAesCbcHmacProvider>(factory.CreateAuthenticatedEncryptionProvider(new SymmetricSecurityKey(Bytes(32, 2)), SecurityAlgorithms.Aes128CbcHmacSha256));
    }

    [Fact]
    public void UseCachedAes_refuses_to_replace_another_custom_provider_and_a_null_factory()
    {
        var other = new OtherProvider();
        var factory = new CryptoProviderFactory { CustomCryptoProvider = other };
        Assert.Throws<InvalidOperationException>(() => factory.UseCachedAes());
        Assert.Same(other, factory.CustomCryptoProvider);

        ArgumentNullException e = Assert.Throws<ArgumentNullException>(() => CachedAesCryptoProviderFactoryExtensions.UseCachedAes(null!));
        Assert.Equal("factory", e.ParamName);
    }

    /// <summary>
    /// The README's one line, <c>CryptoProviderFactory.Default.UseCachedAes()</c>: keys and validation parameters that name
    /// no factory get CachedAes's providers, and tokens made before it still read.
    /// </summary>
    [Fact]
    public async Task The_one_line_on_the_default_factory()
    {
        var handler = new JsonWebTokenHandler();
        byte[] kekBytes = Bytes(32, 3);
        var signingKey = new SymmetricSecurityKey(Bytes(32, 4));
        SecurityTokenDescriptor Descriptor(SecurityKey kek) => new()
        {
            Issuer = "https://issuer.cachedaes.test",
            Audience = "one-line",
            Claims = new Dictionary<string, object> { ["sub"] = "one-line-user" },
            SigningCredentials = new SigningCredentials(signingKey, SecurityAlgorithms.HmacSha256),
            EncryptingCredentials = new EncryptingCredentials(kek, SecurityAlgorithms.Aes256KW, SecurityAlgorithms.Aes128CbcHmacSha256),
        };
        TokenValidationParameters Parameters(SecurityKey kek) => new()
        {
            ValidIssuer = "https://issuer.cachedaes.test",
            ValidAudience = "one-line",
            IssuerSigningKey = signingKey,
            TokenDecryptionKey = kek,
        };

        string byStock = handler.CreateToken(Descriptor(new SymmetricSecurityKey(kekBytes)));
        ICryptoProvider? before = CryptoProviderFactory.Default.CustomCryptoProvider;
        Assert.Null(before);
        try
        {
            CryptoProviderFactory.Default.UseCachedAes();

            var kek = new SymmetricSecurityKey(kekBytes);
            Assert.IsType<CachedAesKeyWrapProvider>(kek.CryptoProviderFactory.CreateKeyWrapProvider(kek, SecurityAlgorithms.Aes256KW));
            Assert.IsType<CachedAesKeyWrapProvider>(kek.CryptoProviderFactory.CreateKeyWrapProviderForUnwrap(kek, SecurityAlgorithms.Aes256KW));
            Assert.IsType<CachedAesCbcHmacProvider>(CryptoProviderFactory.Default.CreateAuthenticatedEncryptionProvider(
                new SymmetricSecurityKey(Bytes(32, 5)), SecurityAlgorithms.Aes128CbcHmacSha256));

            string byCached = handler.CreateToken(Descriptor(kek));
            foreach (string token in new[] { byStock, byCached })
            {
                TokenValidationResult result = await handler.ValidateTokenAsync(token, Parameters(kek));
                Assert.True(result.IsValid, $"token rejected: {result.Exception}");
                Assert.Equal("one-line-user", (string)result.Claims["sub"]);
            }
        }
        finally
        {
            CryptoProviderFactory.Default.CustomCryptoProvider = before;
        }

        // Stock again, and it reads what CachedAes made.
        Assert.IsNotType<CachedAesKeyWrapProvider>(CryptoProviderFactory.Default.CreateKeyWrapProvider(new SymmetricSecurityKey(kekBytes), SecurityAlgorithms.Aes256KW));
    }

    [Fact]
    public void The_provider_claims_only_AES_key_wrap_and_AES_CBC_HMAC_with_symmetric_keys()
    {
        var provider = new CachedAesCryptoProvider();
        var symmetric = new SymmetricSecurityKey(Bytes(32, 6));
        var octJwk = new JsonWebKey { Kty = "oct", K = Base64UrlEncoder.Encode(Bytes(32, 7)) };
        using var rsa = RSA.Create(2048);
        var rsaKey = new RsaSecurityKey(rsa);

        foreach (string kw in new[] { SecurityAlgorithms.Aes128KW, SecurityAlgorithms.Aes192KW, SecurityAlgorithms.Aes256KW })
        {
            Assert.True(provider.IsSupportedAlgorithm(kw, symmetric, false));
            Assert.True(provider.IsSupportedAlgorithm(kw, symmetric, true));
            Assert.True(provider.IsSupportedAlgorithm(kw, octJwk, true));
            Assert.True(provider.IsSupportedAlgorithm(kw));
            Assert.False(provider.IsSupportedAlgorithm(kw, rsaKey, false));
            Assert.False(provider.IsSupportedAlgorithm(kw, symmetric));
            Assert.IsType<CachedAesKeyWrapProvider>(provider.Create(kw, symmetric, false));
        }

        foreach (string enc in new[] { SecurityAlgorithms.Aes128CbcHmacSha256, SecurityAlgorithms.Aes192CbcHmacSha384, SecurityAlgorithms.Aes256CbcHmacSha512 })
        {
            Assert.True(provider.IsSupportedAlgorithm(enc, symmetric));
            Assert.True(provider.IsSupportedAlgorithm(enc, octJwk));
            Assert.False(provider.IsSupportedAlgorithm(enc, rsaKey));
            // IdentityModel's own content provider asks for its HMAC under the content algorithm's name with (key, bool).
            Assert.False(provider.IsSupportedAlgorithm(enc, symmetric, true));
            Assert.False(provider.IsSupportedAlgorithm(enc));
        }

        foreach (string other in new[] { SecurityAlgorithms.HmacSha256, SecurityAlgorithms.Aes128Gcm, SecurityAlgorithms.Aes256Gcm, SecurityAlgorithms.RsaOAEP, "none" })
        {
            Assert.False(provider.IsSupportedAlgorithm(other, symmetric));
            Assert.False(provider.IsSupportedAlgorithm(other, symmetric, true));
            Assert.False(provider.IsSupportedAlgorithm(other));
            Assert.Throws<NotSupportedException>(() => provider.Create(other, symmetric));
        }

        Assert.False(provider.IsSupportedAlgorithm(SecurityAlgorithms.Aes256KW, symmetric, false, 1));
        Assert.Throws<NotSupportedException>(() => provider.Create(SecurityAlgorithms.Aes256KW, symmetric));
        Assert.Throws<NotSupportedException>(() => provider.Create(SecurityAlgorithms.Aes128CbcHmacSha256, symmetric, true));
    }

    [Fact]
    public void Release_disposes_what_the_provider_made()
    {
        var provider = new CachedAesCryptoProvider();
        var kek = new SymmetricSecurityKey(Bytes(32, 8));
        var wrap = (KeyWrapProvider)provider.Create(SecurityAlgorithms.Aes256KW, kek, false);
        Assert.Equal(40, wrap.WrapKey(Bytes(32, 9)).Length);
        provider.Release(wrap);
        Assert.Throws<ObjectDisposedException>(() => wrap.WrapKey(Bytes(32, 9)));
        provider.Release("not disposable");
    }

    /// <summary>
    /// IdentityModel makes a key-wrap provider per token and never releases it, so the provider keeps no keyed instance
    /// between calls: every CachedAes a wrap or an unwrap makes has lost the key-encryption key (it was disposed) when the
    /// call returns. A damaged wrap fails with stock's exception and message, and a disposed provider as stock's does.
    /// </summary>
    [Theory]
    [MemberData(nameof(JweTests.KeyWraps), MemberType = typeof(JweTests))]
    public void A_key_wrap_provider_keeps_no_keyed_instance_between_calls(string algorithm, int kekLength)
    {
        byte[] kekBytes = Bytes(kekLength, 20 + kekLength);
        var made = new List<CachedAes>();
        var cached = new CachedAesKeyWrapProvider(new SymmetricSecurityKey(kekBytes), algorithm, () =>
        {
            CachedAes aes = CachedAes.Create();
            made.Add(aes);
            return aes;
        });
        var stock = new SymmetricKeyWrapProvider(new SymmetricSecurityKey(kekBytes), algorithm);
        foreach (int length in new[] { 16, 32, 64 })
        {
            byte[] cek = Bytes(length, 30 + length);
            byte[] wrapped = stock.WrapKey(cek);
            Assert.Equal(wrapped, cached.WrapKey(cek));
            Assert.Equal(cek, cached.UnwrapKey(wrapped));
        }

        Assert.Equal(6, made.Count);
        Assert.All(made, aes => Assert.False(aes.Key.AsSpan().SequenceEqual(kekBytes), "an instance still holds the key after the call"));

        byte[] damaged = stock.WrapKey(Bytes(32, 40));
        damaged[5] ^= 0x10;
        SecurityTokenKeyWrapException fromStock = Assert.Throws<SecurityTokenKeyWrapException>(() => stock.UnwrapKey(damaged));
        SecurityTokenKeyWrapException fromCached = Assert.Throws<SecurityTokenKeyWrapException>(() => cached.UnwrapKey(damaged));
        Assert.Equal(fromStock.Message, fromCached.Message);

        stock.Dispose();
        cached.Dispose();
        foreach (Func<KeyWrapProvider, byte[]> call in new Func<KeyWrapProvider, byte[]>[] { p => p.WrapKey(Bytes(32, 41)), p => p.UnwrapKey(damaged) })
        {
            Exception? s = Record.Exception(() => call(stock));
            Exception? c = Record.Exception(() => call(cached));
            Assert.IsType<ObjectDisposedException>(s);
            Assert.Equal(s.GetType(), c?.GetType());

            // Stock's names the provider's own type, as IdentityModel's check does for any subclass.
            Assert.Equal(cached.GetType().ToString(), ((ObjectDisposedException)c!).ObjectName);
        }
    }

    /// <summary>The public constructors (CachedAes.Create inside) give stock's bytes too.</summary>
    [Fact]
    public void Public_constructors_give_stocks_bytes()
    {
        var kek = new SymmetricSecurityKey(Bytes(24, 10));
        byte[] cek = Bytes(48, 11);
        using var stockWrap = new SymmetricKeyWrapProvider(kek, SecurityAlgorithms.Aes192KW);
        using var cachedWrap = new CachedAesKeyWrapProvider(kek, SecurityAlgorithms.Aes192KW);
        byte[] wrapped = stockWrap.WrapKey(cek);
        Assert.Equal(wrapped, cachedWrap.WrapKey(cek));
        Assert.Equal(cek, cachedWrap.UnwrapKey(wrapped));

        var contentKey = new SymmetricSecurityKey(cek);
        using var stock = new AuthenticatedEncryptionProvider(contentKey, SecurityAlgorithms.Aes192CbcHmacSha384);
        using var cached = new CachedAesCbcHmacProvider(contentKey, SecurityAlgorithms.Aes192CbcHmacSha384);
        byte[] plaintext = Bytes(77, 12);
        byte[] iv = Bytes(16, 13);
        AuthenticatedEncryptionResult s = stock.Encrypt(plaintext, s_aad, iv);
        AuthenticatedEncryptionResult c = cached.Encrypt(plaintext, s_aad, iv);
        Assert.Equal(s.Ciphertext, c.Ciphertext);
        Assert.Equal(s.AuthenticationTag, c.AuthenticationTag);
        Assert.Equal(plaintext, cached.Decrypt(s.Ciphertext, s_aad, s.IV, s.AuthenticationTag));
    }

    [Fact]
    public void Constructors_reject_what_stock_rejects_and_AES_GCM()
    {
        var key = new SymmetricSecurityKey(Bytes(32, 14));
        AssertSameFailure(() => new AuthenticatedEncryptionProvider(null!, SecurityAlgorithms.Aes128CbcHmacSha256), () => new CachedAesCbcHmacProvider(null!, SecurityAlgorithms.Aes128CbcHmacSha256));
        AssertSameFailure(() => new AuthenticatedEncryptionProvider(key, null!), () => new CachedAesCbcHmacProvider(key, null!));
        AssertSameFailure(() => new AuthenticatedEncryptionProvider(key, "A999CBC"), () => new CachedAesCbcHmacProvider(key, "A999CBC"));
        AssertSameFailure(() => new SymmetricKeyWrapProvider(null!, SecurityAlgorithms.Aes256KW), () => new CachedAesKeyWrapProvider(null!, SecurityAlgorithms.Aes256KW));
        AssertSameFailure(() => new SymmetricKeyWrapProvider(key, ""), () => new CachedAesKeyWrapProvider(key, ""));

        // Stock takes AES-GCM (for decryption); this provider does AES-CBC-HMAC only and says so.
        ArgumentException e = Assert.Throws<ArgumentException>(() => new CachedAesCbcHmacProvider(key, SecurityAlgorithms.Aes256Gcm));
        Assert.Equal("algorithm", e.ParamName);
    }

    public static TheoryData<string, int> AllEncs() => JweTests.AllEncs();

    [Theory]
    [MemberData(nameof(AllEncs))]
    public void A_disposed_content_provider_fails_like_stocks(string enc, int cekLength)
    {
        var key = new SymmetricSecurityKey(Bytes(cekLength, 15));
        var stock = new AuthenticatedEncryptionProvider(key, enc);
        var cached = new CachedAesCbcHmacProvider(key, enc);
        AuthenticatedEncryptionResult r = stock.Encrypt(Bytes(20, 16), s_aad);
        Assert.Equal(Bytes(20, 16), cached.Decrypt(r.Ciphertext, s_aad, r.IV, r.AuthenticationTag));
        stock.Dispose();
        cached.Dispose();
        cached.Dispose();

        // The exception names IdentityModel's provider, as stock's does, and goes through IdentityModel's log alike.
        foreach ((Func<object?> s, Func<object?> c) in new (Func<object?>, Func<object?>)[]
        {
            (() => stock.Encrypt(Bytes(20, 16), s_aad), () => cached.Encrypt(Bytes(20, 16), s_aad)),
            (() => stock.Encrypt(Bytes(20, 16), s_aad, Bytes(16, 17)), () => cached.Encrypt(Bytes(20, 16), s_aad, Bytes(16, 17))),
            (() => stock.Decrypt(r.Ciphertext, s_aad, r.IV, r.AuthenticationTag), () => cached.Decrypt(r.Ciphertext, s_aad, r.IV, r.AuthenticationTag)),
        })
        {
            Outcome fromStock = StockComparison.Run(s);
            Assert.Equal(fromStock, StockComparison.Run(c));
            Assert.StartsWith(typeof(ObjectDisposedException).FullName + " ", fromStock.Exception, StringComparison.Ordinal);
            Assert.Contains("'Microsoft.IdentityModel.Tokens.AuthenticatedEncryptionProvider'", fromStock.Message, StringComparison.Ordinal);
            Assert.StartsWith("Error: Cannot access a disposed object.", fromStock.Log, StringComparison.Ordinal);
        }
    }

    /// <summary>
    /// Dispose while a call is running (held inside the provider's AES step): the call finishes with the intact keys, so
    /// its output is what stock makes with the real key; a call that starts afterwards throws as stock's does; the keys
    /// are zeroed once the running call is done.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public async Task Dispose_during_a_call_lets_it_finish_with_the_key_and_zeroes_the_keys_after_it(string enc, int cekLength)
    {
        var key = new SymmetricSecurityKey(Bytes(cekLength, 40));
        using var stock = new AuthenticatedEncryptionProvider(key, enc);
        byte[] plaintext = Bytes(40, 41);
        byte[] iv = Bytes(16, 42);
        AuthenticatedEncryptionResult expected = stock.Encrypt(plaintext, s_aad, iv);

        foreach (bool encrypting in new[] { true, false })
        {
            using var inside = new ManualResetEventSlim();
            using var proceed = new ManualResetEventSlim();
            var cached = new CachedAesCbcHmacProvider(key, enc, () =>
            {
                inside.Set();
                Assert.True(proceed.Wait(TimeSpan.FromSeconds(30)), "the held call was never let go");
                return CachedAes.Create();
            });

            Task<byte[][]> running = Task.Run(() =>
            {
                if (!encrypting)
                {
                    return new[] { cached.Decrypt(expected.Ciphertext, s_aad, iv, expected.AuthenticationTag) };
                }

                AuthenticatedEncryptionResult r = cached.Encrypt(plaintext, s_aad, iv);
                return new[] { r.Ciphertext, r.AuthenticationTag };
            });
            Assert.True(inside.Wait(TimeSpan.FromSeconds(30)), "the call never reached its AES step");
            cached.Dispose();
            Assert.IsType<ObjectDisposedException>(Record.Exception(() => cached.Encrypt(plaintext, s_aad, iv)));
            Assert.IsType<ObjectDisposedException>(Record.Exception(() => cached.Decrypt(expected.Ciphertext, s_aad, iv, expected.AuthenticationTag)));
            Assert.False(cached.KeysZeroed);

            proceed.Set();
            byte[][] result = await running;
            if (encrypting)
            {
                Assert.Equal(expected.Ciphertext, result[0]);
                Assert.Equal(expected.AuthenticationTag, result[1]);
            }
            else
            {
                Assert.Equal(plaintext, result[0]);
            }

            Assert.True(cached.KeysZeroed);
        }
    }

    /// <summary>
    /// The copies of the content key the provider asks for are zeroed once it has split them; a key that hands out its
    /// own array every time keeps it intact (and keeps working).
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void The_copies_of_the_content_key_are_zeroed_and_a_keys_own_array_is_not(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength, 43);
        using var stock = new AuthenticatedEncryptionProvider(new SymmetricSecurityKey(cek), enc);
        byte[] iv = Bytes(16, 44);
        AuthenticatedEncryptionResult expected = stock.Encrypt(Bytes(30, 45), s_aad, iv);

        var copying = new RecordingKey(cek, shareOwnArray: false);
        using (var cached = new CachedAesCbcHmacProvider(copying, enc))
        {
            Assert.Equal(expected.Ciphertext, cached.Encrypt(Bytes(30, 45), s_aad, iv).Ciphertext);
            Assert.NotEmpty(copying.HandedOut);
            Assert.All(copying.HandedOut, copy => Assert.Equal(new byte[cekLength], copy));
        }

        var sharing = new RecordingKey(cek, shareOwnArray: true);
        for (int i = 0; i < 2; i++)
        {
            using var cached = new CachedAesCbcHmacProvider(sharing, enc);
            Assert.Equal(expected.AuthenticationTag, cached.Encrypt(Bytes(30, 45), s_aad, iv).AuthenticationTag);
            Assert.All(sharing.HandedOut, array => Assert.Equal(cek, array));
        }
    }

    /// <summary>
    /// After <see cref="AuthenticatedEncryptionProvider.Dispose()"/>, no object reachable from the provider holds either half
    /// of the content key (the MAC key, the AES key), nor a copy of the whole key: every object reachable through instance
    /// fields is searched, IdentityModel's base class and the key's factory included, except the caller's key itself
    /// (which holds the whole key and is not the provider's to clear). IdentityModel's own provider, searched the same way,
    /// still holds both halves after its Dispose, so the search does find them where they are.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Nothing_reachable_from_a_disposed_provider_holds_the_content_key(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength + 8, 60);
        int half = StockComparison.Half(enc);
        byte[][] halves = [cek[..half], cek[half..(2 * half)]];
        var key = new SymmetricSecurityKey(cek) { CryptoProviderFactory = new CryptoProviderFactory() };
        var stock = new AuthenticatedEncryptionProvider(key, enc);
        var cached = new CachedAesCbcHmacProvider(key, enc);
        foreach (AuthenticatedEncryptionProvider provider in new[] { stock, cached })
        {
            AuthenticatedEncryptionResult r = provider.Encrypt(Bytes(70, 61), s_aad, Bytes(16, 62));
            Assert.Equal(Bytes(70, 61), provider.Decrypt(r.Ciphertext, s_aad, r.IV, r.AuthenticationTag));
            byte[] forged = (byte[])r.AuthenticationTag.Clone();
            forged[0] ^= 1;
            Assert.Throws<SecurityTokenDecryptionFailedException>(() => provider.Decrypt(r.Ciphertext, s_aad, r.IV, forged));
            Assert.Throws<SecurityTokenDecryptionFailedException>(() => provider.Decrypt(Bytes(17, 63), s_aad, r.IV, RfcTag(cek[..(2 * half)], enc, s_aad, r.IV, Bytes(17, 63))));
            provider.Dispose();
        }

        (List<string> inStock, int stockObjects) = Holders(stock, key, halves);
        (List<string> inCached, int cachedObjects) = Holders(cached, key, halves);
        Assert.True(inStock.Count >= 2, $"the search found no key half in IdentityModel's disposed provider ({stockObjects} objects searched)");
        Assert.True(inCached.Count == 0, $"after Dispose, {string.Join(", ", inCached)} hold(s) a half of the content key ({cachedObjects} objects searched)");
        Assert.True(cachedObjects > 10, $"only {cachedObjects} objects searched");
    }

    /// <summary>
    /// The paths, from <paramref name="root"/> through instance fields (array elements, delegate targets, boxed structs),
    /// of every byte array that contains one of <paramref name="secrets"/>; <paramref name="skip"/> is not entered.
    /// </summary>
    private static (List<string> Paths, int Objects) Holders(object root, object skip, byte[][] secrets)
    {
        const int Limit = 1_000_000;
        var seen = new HashSet<object>(ReferenceEqualityComparer.Instance);
        var pending = new Stack<(object Value, string Path)>();
        var found = new List<string>();
        pending.Push((root, root.GetType().Name));
        while (pending.Count > 0)
        {
            (object value, string path) = pending.Pop();
            if (ReferenceEquals(value, skip) || !seen.Add(value))
            {
                continue;
            }

            Assert.True(seen.Count < Limit, $"more than {Limit} objects reachable: the search would not end");
            Type type = value.GetType();
            switch (value)
            {
                case byte[] bytes:
                    if (secrets.Any(secret => bytes.AsSpan().IndexOf(secret) >= 0))
                    {
                        found.Add(path);
                    }

                    continue;
                case string or Type or System.Reflection.MemberInfo or System.Reflection.Module or System.Reflection.Assembly:
                    continue;
                case Delegate d:
                    foreach (Delegate each in d.GetInvocationList())
                    {
                        if (each.Target is not null)
                        {
                            pending.Push((each.Target, path + ".Target"));
                        }
                    }

                    continue;
                case Array array:
                    if (!type.GetElementType()!.IsPrimitive)
                    {
                        int index = 0;
                        foreach (object? element in array)
                        {
                            if (element is not null)
                            {
                                pending.Push((element, $"{path}[{index}]"));
                            }

                            index++;
                        }
                    }

                    continue;
            }

            if (type.IsPrimitive || type.IsPointer || type.IsEnum)
            {
                continue;
            }

            for (Type? t = type; t is not null; t = t.BaseType)
            {
                foreach (System.Reflection.FieldInfo field in t.GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.Public |
                    System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.DeclaredOnly))
                {
                    if (field.FieldType.IsPointer || field.FieldType.IsByRefLike || field.FieldType.IsPrimitive)
                    {
                        continue;
                    }

                    if (field.GetValue(value) is object fieldValue)
                    {
                        pending.Push((fieldValue, $"{path}.{field.Name}"));
                    }
                }
            }
        }

        return (found, seen.Count);
    }

    /// <summary>
    /// The HMAC's input (AAD, IV, ciphertext, AL) is hashed in one call up to 64 KiB and incrementally above: inputs on
    /// both sides of that line give stock's ciphertexts and tags, decrypt both ways, and a forged tag fails alike.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Inputs_on_both_sides_of_64_KiB_give_stocks_tags_and_failures(string enc, int cekLength)
    {
        var key = new SymmetricSecurityKey(Bytes(cekLength, 64));
        using var stock = new AuthenticatedEncryptionProvider(key, enc);
        using var cached = new CachedAesCbcHmacProvider(key, enc);
        byte[] iv = Bytes(16, 65);
        foreach ((int aadLength, int plaintextLength) in new[] { (100, 65_400), (100, 65_500), (65_530, 1), (70_000, 70_000) })
        {
            byte[] aad = Bytes(aadLength, 66 + aadLength);
            byte[] plaintext = Bytes(plaintextLength, 67 + plaintextLength);
            AuthenticatedEncryptionResult s = stock.Encrypt(plaintext, aad, iv);
            AuthenticatedEncryptionResult c = cached.Encrypt(plaintext, aad, iv);
            Assert.Equal(s.Ciphertext, c.Ciphertext);
            Assert.Equal(s.AuthenticationTag, c.AuthenticationTag);
            Assert.Equal(plaintext, cached.Decrypt(s.Ciphertext, aad, iv, s.AuthenticationTag));
            byte[] forged = (byte[])s.AuthenticationTag.Clone();
            forged[3] ^= 0x10;
            AssertSameFailure(() => stock.Decrypt(s.Ciphertext, aad, iv, forged), () => cached.Decrypt(s.Ciphertext, aad, iv, forged));
        }
    }

    /// <summary>A content key shorter than the algorithm needs: accepted by both constructors, refused by both on use.</summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void A_short_content_key_fails_on_use_like_stocks(string enc, int cekLength)
    {
        var shortKey = new SymmetricSecurityKey(Bytes(cekLength - 8, 17));
        var stock = new AuthenticatedEncryptionProvider(shortKey, enc);
        var cached = new CachedAesCbcHmacProvider(shortKey, enc);
        AssertSameFailure(() => stock.Encrypt(Bytes(20, 18), s_aad), () => cached.Encrypt(Bytes(20, 18), s_aad));
        byte[] tag = new byte[cekLength / 2];
        AssertSameFailure(() => stock.Decrypt(Bytes(32, 19), s_aad, Bytes(16, 20), tag), () => cached.Decrypt(Bytes(32, 19), s_aad, Bytes(16, 20), tag));

        // A longer key than needed: both use its first bytes.
        var longKey = new SymmetricSecurityKey(Bytes(cekLength + 16, 21));
        using var stockLong = new AuthenticatedEncryptionProvider(longKey, enc);
        using var cachedLong = new CachedAesCbcHmacProvider(longKey, enc);
        byte[] iv = Bytes(16, 22);
        AuthenticatedEncryptionResult s = stockLong.Encrypt(Bytes(40, 23), s_aad, iv);
        AuthenticatedEncryptionResult c = cachedLong.Encrypt(Bytes(40, 23), s_aad, iv);
        Assert.Equal(s.Ciphertext, c.Ciphertext);
        Assert.Equal(s.AuthenticationTag, c.AuthenticationTag);
    }

    /// <summary>An IV that is not 16 bytes: the AES IV setter's exception, unwrapped, in both (with a valid tag on decrypt).</summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void IVs_of_the_wrong_length_fail_like_stocks(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength, 24);
        var key = new SymmetricSecurityKey(cek);
        using var stock = new AuthenticatedEncryptionProvider(key, enc);
        using var cached = new CachedAesCbcHmacProvider(key, enc);
        foreach (int ivLength in new[] { 1, 8, 15, 17, 32 })
        {
            byte[] iv = Bytes(ivLength, 25 + ivLength);
            AssertSameFailure(() => stock.Encrypt(Bytes(20, 26), s_aad, iv), () => cached.Encrypt(Bytes(20, 26), s_aad, iv));

            // A ciphertext whose tag is right for this IV (computed here per RFC 7518 5.2.2.1 from the MAC half of the key),
            // so both get past the tag check to the AES step.
            byte[] ciphertext = Bytes(32, 27);
            byte[] tag = RfcTag(cek, enc, s_aad, iv, ciphertext);
            AssertSameFailure(() => stock.Decrypt(ciphertext, s_aad, iv, tag), () => cached.Decrypt(ciphertext, s_aad, iv, tag));
        }
    }

    /// <summary>A ciphertext with a valid tag that does not decrypt (not whole blocks, bad padding): the same exception.</summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Authentic_ciphertexts_that_do_not_decrypt_fail_like_stocks(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength, 28);
        var key = new SymmetricSecurityKey(cek);
        using var stock = new AuthenticatedEncryptionProvider(key, enc);
        using var cached = new CachedAesCbcHmacProvider(key, enc);
        byte[] iv = Bytes(16, 29);
        foreach (int length in new[] { 1, 15, 17, 31, 32, 48 })
        {
            byte[] ciphertext = Bytes(length, 30 + length);
            byte[] tag = RfcTag(cek, enc, s_aad, iv, ciphertext);
            Exception? s = AssertSameFailure(() => stock.Decrypt(ciphertext, s_aad, iv, tag), () => cached.Decrypt(ciphertext, s_aad, iv, tag));
            Assert.IsType<SecurityTokenDecryptionFailedException>(s);
        }
    }

    /// <summary>
    /// A tag that does not match (IDX10650), a tag of the wrong length (IDX10625) and an authentic ciphertext that does not
    /// decrypt (IDX10654): IdentityModel's own message, and the same entries in IdentityModel's log (its
    /// <see cref="LogHelper.Logger"/>), so that alerts keyed on those numbers fire for CachedAes as for stock.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Decryption_failures_carry_IdentityModels_numbered_messages_and_are_logged_alike(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength, 50);
        var key = new SymmetricSecurityKey(cek);
        using var stock = new AuthenticatedEncryptionProvider(key, enc);
        using var cached = new CachedAesCbcHmacProvider(key, enc);
        byte[] aad = Bytes(24, 51 + cekLength);
        byte[] iv = Bytes(16, 52);
        AuthenticatedEncryptionResult r = stock.Encrypt(Bytes(33, 53), aad, iv);
        byte[] wrongTag = (byte[])r.AuthenticationTag.Clone();
        wrongTag[^1] ^= 0x80;
        byte[] undecryptable = Bytes(32, 54);
        foreach ((string number, byte[] ciphertext, byte[] tag) in new[]
        {
            ("IDX10650", r.Ciphertext, wrongTag),
            ("IDX10625", r.Ciphertext, r.AuthenticationTag[1..]),
            ("IDX10654", undecryptable, RfcTag(cek, enc, aad, iv, undecryptable)),
        })
        {
            var log = new RecordingLogger();
            IIdentityLogger before = LogHelper.Logger;
            LogHelper.Logger = log;
            try
            {
                Exception s = AssertSameFailure(() => stock.Decrypt(ciphertext, aad, iv, tag), () => cached.Decrypt(ciphertext, aad, iv, tag));
                Assert.IsType<SecurityTokenDecryptionFailedException>(s);
                Assert.StartsWith(number + ": ", s.Message, StringComparison.Ordinal);
                Assert.Null(s.InnerException);
                (EventLogLevel, string)[] entries = log.Matching(s.Message);
                Assert.Equal(2, entries.Length);
                Assert.Equal(entries[0], entries[1]);
            }
            finally
            {
                LogHelper.Logger = before;
            }
        }
    }

    [Theory]
    [MemberData(nameof(AllEncs))]
    public void Octet_JSON_Web_Keys_give_stocks_bytes(string enc, int cekLength)
    {
        byte[] cek = Bytes(cekLength, 31);
        var jwk = new JsonWebKey { Kty = "oct", K = Base64UrlEncoder.Encode(cek) };
        var factory = new CryptoProviderFactory().UseCachedAes();
        using AuthenticatedEncryptionProvider cached = factory.CreateAuthenticatedEncryptionProvider(jwk, enc);
        Assert.IsType<CachedAesCbcHmacProvider>(cached);
        using var stock = new AuthenticatedEncryptionProvider(new SymmetricSecurityKey(cek), enc);
        byte[] iv = Bytes(16, 32);
        AuthenticatedEncryptionResult s = stock.Encrypt(Bytes(50, 33), s_aad, iv);
        AuthenticatedEncryptionResult c = cached.Encrypt(Bytes(50, 33), s_aad, iv);
        Assert.Equal(s.Ciphertext, c.Ciphertext);
        Assert.Equal(s.AuthenticationTag, c.AuthenticationTag);

        byte[] kek = Bytes(32, 34);
        KeyWrapProvider wrap = factory.CreateKeyWrapProvider(new JsonWebKey { Kty = "oct", K = Base64UrlEncoder.Encode(kek) }, SecurityAlgorithms.Aes256KW);
        Assert.IsType<CachedAesKeyWrapProvider>(wrap);
        using var stockWrap = new SymmetricKeyWrapProvider(new SymmetricSecurityKey(kek), SecurityAlgorithms.Aes256KW);
        Assert.Equal(stockWrap.WrapKey(cek), wrap.WrapKey(cek));
    }

    /// <summary>
    /// An RFC 7518 section 5.2.2.1 tag, built here from the key's MAC half to forge inputs that pass the tag check: an input
    /// for both providers, never an expected value.
    /// </summary>
    private static byte[] RfcTag(byte[] cek, string enc, byte[] aad, byte[] iv, byte[] ciphertext)
    {
        Assert.Equal(cek.Length, 2 * StockComparison.Half(enc));
        return StockComparison.RfcTag(cek, StockComparison.Half(enc), aad, iv, ciphertext);
    }

    /// <summary>Both fail, with the same exception type, parameter name and message; returns stock's exception.</summary>
    private static Exception AssertSameFailure(Func<object> stock, Func<object> cached)
    {
        Exception? s = Record.Exception(stock);
        Exception? c = Record.Exception(cached);
        Assert.True(s is not null, "stock did not fail");
        Assert.True(c is not null, $"CachedAes did not fail (stock threw {s.GetType().Name}: {s.Message})");
        Assert.True(s.GetType() == c.GetType(), $"stock threw {s.GetType().FullName}: {s.Message}; CachedAes threw {c.GetType().FullName}: {c.Message}");
        Assert.Equal((s as ArgumentException)?.ParamName, (c as ArgumentException)?.ParamName);

        // The same text too (IdentityModel's, with its arguments hidden as IdentityModel hides them).
        Assert.Equal(s.Message, c.Message);
        return s;
    }

    /// <summary>A symmetric key that records the arrays its <see cref="Key"/> hands out: new copies, or its own array every time.</summary>
    private sealed class RecordingKey(byte[] key, bool shareOwnArray) : SymmetricSecurityKey(key)
    {
        private readonly byte[] _own = (byte[])key.Clone();

        public List<byte[]> HandedOut { get; } = [];

        public override byte[] Key
        {
            get
            {
                byte[] bytes = shareOwnArray ? _own : base.Key;
                lock (HandedOut)
                {
                    HandedOut.Add(bytes);
                }

                return bytes;
            }
        }
    }

    private sealed class OtherProvider : ICryptoProvider
    {
        public object Create(string algorithm, params object[] args) => throw new NotSupportedException();

        public bool IsSupportedAlgorithm(string algorithm, params object[] args) => false;

        public void Release(object cryptoInstance)
        {
        }
    }
}
