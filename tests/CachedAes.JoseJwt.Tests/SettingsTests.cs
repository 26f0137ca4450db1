using System;
using Jose;

namespace CachedCryptography.JoseJwt.Tests;

/// <summary>What UseCachedAes() changes on a JwtSettings, and what it leaves alone.</summary>
public sealed class SettingsTests
{
    private static readonly string[] s_keyWraps = ["A128KW", "A192KW", "A256KW"];
    private static readonly string[] s_contentEncryptions = ["A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512"];

    [Fact]
    public void It_registers_CachedAes_for_the_six_algorithms_with_their_sizes()
    {
        JwtSettings settings = new JwtSettings().UseCachedAes();
        int bits = 128;
        foreach (string alg in s_keyWraps)
        {
            Assert.Equal(bits, Assert.IsType<CachedAesKeyWrapManagement>(settings.Jwa(alg)).KekLengthBits);
            bits += 64;
        }

        bits = 256;
        foreach (string enc in s_contentEncryptions)
        {
            Assert.Equal(bits, Assert.IsType<CachedAesCbcHmacEncryption>(settings.Jwe(enc)).KeySize);
            bits += 128;
        }
    }

    [Fact]
    public void Everything_else_stays_jose_jwts()
    {
        var stock = new JwtSettings();
        JwtSettings cached = new JwtSettings().UseCachedAes();
        foreach (JweAlgorithm alg in Enum.GetValues<JweAlgorithm>())
        {
            string name = Headers.Jwa(alg);
            if (Array.IndexOf(s_keyWraps, name) < 0)
            {
                Assert.Equal(stock.Jwa(name)?.GetType(), cached.Jwa(name)?.GetType());
            }
        }

        foreach (JweEncryption enc in Enum.GetValues<JweEncryption>())
        {
            string name = Headers.Jwe(enc);
            if (Array.IndexOf(s_contentEncryptions, name) < 0)
            {
                Assert.Equal(stock.Jwe(name)?.GetType(), cached.Jwe(name)?.GetType());
            }
        }
    }

    [Fact]
    public void It_returns_the_same_settings_and_a_second_call_changes_nothing()
    {
        var settings = new JwtSettings();
        Assert.Same(settings, settings.UseCachedAes());
        IKeyManagement first = settings.Jwa("A256KW");
        Assert.Same(settings, settings.UseCachedAes());
        Assert.Same(first, settings.Jwa("A256KW"));
    }

    [Fact]
    public void It_does_not_replace_a_custom_implementation_and_then_changes_nothing()
    {
        var settings = new JwtSettings().RegisterJwe(JweEncryption.A256CBC_HS512, new CustomEncryption());
        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() => settings.UseCachedAes());
        Assert.Contains("A256CBC-HS512", e.Message, StringComparison.Ordinal);
        Assert.IsType<AesKeyWrapManagement>(settings.Jwa("A128KW"));
        Assert.IsType<AesCbcHmacEncryption>(settings.Jwe("A128CBC-HS256"));
        Assert.IsType<CustomEncryption>(settings.Jwe("A256CBC-HS512"));
    }

    [Fact]
    public void A_deregistered_algorithm_stays_deregistered()
    {
        JwtSettings settings = new JwtSettings().DeregisterJwa(JweAlgorithm.A192KW).UseCachedAes();
        Assert.Null(settings.Jwa("A192KW"));
        Assert.IsType<CachedAesKeyWrapManagement>(settings.Jwa("A128KW"));
    }

    [Fact]
    public void Null_settings_throw_ArgumentNullException() =>
        Assert.Throws<ArgumentNullException>(() => CachedAesJwtSettingsExtensions.UseCachedAes(null!));

    [Fact]
    public void The_constructors_take_only_the_algorithms_sizes()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new CachedAesKeyWrapManagement(64));
        Assert.Throws<ArgumentOutOfRangeException>(() => new CachedAesCbcHmacEncryption(128));
    }

    [Fact]
    public void On_the_default_settings_every_call_without_settings_uses_CachedAes()
    {
        // JWT.DefaultSettings is process-wide: this test is the only one in the assembly that changes it.
        JWT.DefaultSettings.UseCachedAes();
        Assert.IsType<CachedAesKeyWrapManagement>(JWT.DefaultSettings.Jwa("A256KW"));
        byte[] kek = new byte[32];
        string token = JWT.Encode("hello", kek, JweAlgorithm.A256KW, JweEncryption.A128CBC_HS256);
        Assert.Equal("hello", JWT.Decode(token, kek, JweAlgorithm.A256KW, JweEncryption.A128CBC_HS256, new JwtSettings()));
    }

    private sealed class CustomEncryption : IJweAlgorithm
    {
        public int KeySize => 512;

        public byte[][] Encrypt(byte[] aad, byte[] plainText, byte[] cek) => throw new NotSupportedException();

        public byte[] Decrypt(byte[] aad, byte[] cek, byte[] iv, byte[] cipherText, byte[] authTag) => throw new NotSupportedException();
    }
}
