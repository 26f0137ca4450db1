using System;
using System.IO;
using Microsoft.IdentityModel.Tokens;
using Xunit.Abstractions;

namespace CachedCryptography.IdentityModel.Tests;

/// <summary>
/// The differences from stock IdentityModel that the package page (src/CachedAes.IdentityModel/PACKAGE.md) and
/// docs/integrations.md describe, checked to be as described, and the pages checked to describe them.
/// </summary>
public sealed class DocumentedDifferenceTests(ITestOutputHelper output)
{
    private static readonly Version s_identityModel = typeof(AuthenticatedEncryptionProvider).Assembly.GetName().Version!;

    /// <summary>
    /// AAD of 256 MiB (2^28 bytes) or more: its length in bits no longer fits in 32 bits. CachedAes writes it in 64 bits as
    /// RFC 7518 section 5.2.2.1 says. IdentityModel 8.0.1 (and its source up to 8.1.2) multiplies in 32 bits, so its AL, and
    /// so its tag, differs; 8.16.0 and later follow the RFC. Checked on the IdentityModel version the tests run on, with
    /// the RFC's tag and the 32-bit one both computed here from the key's MAC half.
    /// </summary>
    [Fact]
    public void An_AAD_of_256_MiB_follows_the_RFC_where_IdentityModel_8_0_1_overflows_as_documented()
    {
        const int AadLength = 1 << 28;
        var rng = new Random(0xAAD);
        byte[] cek = new byte[32];
        rng.NextBytes(cek);
        byte[] aad = GC.AllocateUninitializedArray<byte>(AadLength);
        aad.AsSpan().Fill(0x2E);
        rng.NextBytes(aad.AsSpan(0, 4096));
        byte[] plaintext = new byte[40];
        rng.NextBytes(plaintext);
        byte[] iv = new byte[16];
        rng.NextBytes(iv);
        var key = new SymmetricSecurityKey(cek);

        byte[] stockTag;
        byte[] ciphertext;
        using (var stock = new AuthenticatedEncryptionProvider(key, SecurityAlgorithms.Aes128CbcHmacSha256))
        {
            AuthenticatedEncryptionResult s = stock.Encrypt(plaintext, aad, iv);
            (stockTag, ciphertext) = (s.AuthenticationTag, s.Ciphertext);
        }

        using var cached = new CachedAesCbcHmacProvider(key, SecurityAlgorithms.Aes128CbcHmacSha256);
        AuthenticatedEncryptionResult c = cached.Encrypt(plaintext, aad, iv);
        Assert.Equal(ciphertext, c.Ciphertext);

        byte[] rfc = StockComparison.TagWithLength(cek, 16, aad, iv, ciphertext, 8L * AadLength);
        byte[] thirtyTwoBits = StockComparison.TagWithLength(cek, 16, aad, iv, ciphertext, unchecked(AadLength * 8));
        Assert.NotEqual(rfc, thirtyTwoBits);
        Assert.Equal(rfc, c.AuthenticationTag);
        bool stockFollowsRfc = stockTag.AsSpan().SequenceEqual(rfc);
        Assert.True(stockFollowsRfc || stockTag.AsSpan().SequenceEqual(thirtyTwoBits), "stock's tag is neither the RFC's nor the 32-bit one");
        output.WriteLine($"IdentityModel {s_identityModel}: stock's AL is {(stockFollowsRfc ? "the RFC's (64 bits)" : "computed in 32 bits")}");
        if (s_identityModel <= new Version(8, 1, 2))
        {
            Assert.False(stockFollowsRfc, $"IdentityModel {s_identityModel} followed the RFC, which the documentation says it does not");
        }
        else if (s_identityModel >= new Version(8, 16))
        {
            Assert.True(stockFollowsRfc, $"IdentityModel {s_identityModel} computed AL in 32 bits");
        }

        // And the pages say so.
        foreach (string page in new[] { Path.Combine("src", "CachedAes.IdentityModel", "PACKAGE.md"), Path.Combine("docs", "integrations.md") })
        {
            string text = File.ReadAllText(Path.Combine(RepositoryRoot(), page));
            Assert.True(text.Contains("256 MiB", StringComparison.Ordinal) && text.Contains("8.0.1", StringComparison.Ordinal),
                $"{page} does not describe the 256 MiB AAD difference with IdentityModel 8.0.1");
        }
    }

    /// <summary>
    /// Key-wrap names on the signing path: stock's factory hands out a <see cref="SymmetricSignatureProvider"/> for
    /// <c>CreateForSigning(key, "A128KW")</c> and <c>CreateForVerifying</c> (which fails on its first use, IDX10666), while a
    /// factory with <c>UseCachedAes()</c> fails at once with IDX10646: IdentityModel asks its custom provider with the same
    /// arguments, <c>(algorithm, key, bool)</c>, for a key-wrap provider and for a signature provider, so the provider
    /// cannot tell the two apart and answers with a key-wrap provider. The documented difference, pinned.
    /// </summary>
    [Theory]
    [InlineData(SecurityAlgorithms.Aes128KW, 16)]
    [InlineData(SecurityAlgorithms.Aes192KW, 24)]
    [InlineData(SecurityAlgorithms.Aes256KW, 32)]
    public void Key_wrap_names_on_the_signing_path_fail_when_created_not_when_used_as_documented(string algorithm, int keyLength)
    {
        var stockFactory = new CryptoProviderFactory();
        CryptoProviderFactory cachedFactory = new CryptoProviderFactory().UseCachedAes();
        byte[] keyBytes = new byte[keyLength];
        new Random(keyLength).NextBytes(keyBytes);
        var stockKey = new SymmetricSecurityKey(keyBytes) { CryptoProviderFactory = stockFactory };
        var cachedKey = new SymmetricSecurityKey(keyBytes) { CryptoProviderFactory = cachedFactory };

        foreach (bool signing in new[] { true, false })
        {
            SignatureProvider fromStock = signing ? stockFactory.CreateForSigning(stockKey, algorithm) : stockFactory.CreateForVerifying(stockKey, algorithm);
            Assert.IsType<SymmetricSignatureProvider>(fromStock);
            NotSupportedException use = Assert.Throws<NotSupportedException>(() => signing ? fromStock.Sign(new byte[8]) : fromStock.Verify(new byte[8], new byte[32]));
            Assert.StartsWith("IDX10666:", use.Message, StringComparison.Ordinal);

            InvalidOperationException create = Assert.Throws<InvalidOperationException>(() =>
                signing ? cachedFactory.CreateForSigning(cachedKey, algorithm) : cachedFactory.CreateForVerifying(cachedKey, algorithm));
            Assert.StartsWith("IDX10646:", create.Message, StringComparison.Ordinal);
        }

        // The same factory's key wrap is CachedAes's.
        Assert.IsType<CachedAesKeyWrapProvider>(cachedFactory.CreateKeyWrapProvider(cachedKey, algorithm));
        foreach (string page in new[] { Path.Combine("src", "CachedAes.IdentityModel", "PACKAGE.md"), Path.Combine("docs", "integrations.md") })
        {
            string text = File.ReadAllText(Path.Combine(RepositoryRoot(), page));
            Assert.True(text.Contains("CreateForSigning", StringComparison.Ordinal) && text.Contains("IDX10646", StringComparison.Ordinal),
                $"{page} does not describe the key-wrap names on the signing path");
        }
    }

    private static string RepositoryRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CachedAes.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException($"No CachedAes.sln above {AppContext.BaseDirectory}.");
    }
}
