using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Security.Cryptography;
using System.Security.Cryptography.Xml;
using System.Xml;

// CryptoRegistrationTests changes CryptoConfig for the whole process, for good: nothing may run beside it.
[assembly: CollectionBehavior(DisableTestParallelization = true)]

namespace CachedCryptography.CryptoConfigTests;

/// <summary>XML documents and the EncryptedXml steps the tests share.</summary>
internal static class Xml
{
    public const string KekName = "kek";
    public const string ContentKeyName = "content-key";

    public static XmlDocument Document(int seed)
    {
        var rng = new Random(seed);
        var doc = new XmlDocument { PreserveWhitespace = true };
        doc.LoadXml($"<order id=\"{rng.Next()}\"><customer>ACME {rng.Next()}</customer><card number=\"{rng.NextInt64():D16}\">{new string('x', rng.Next(0, 200))}</card></order>");
        return doc;
    }

    public static string UriFor(int keySizeBits) => keySizeBits switch
    {
        128 => EncryptedXml.XmlEncAES128Url,
        192 => EncryptedXml.XmlEncAES192Url,
        _ => EncryptedXml.XmlEncAES256Url,
    };

    /// <summary>
    /// Encrypts the document's <c>card</c> element in place with <paramref name="contentAlgorithm"/> (its key and IV as
    /// set), AES-CBC by the URI of its key size. With a key-encryption key, the content key travels in an EncryptedKey
    /// (AES key wrap under <see cref="KekName"/>); without one, the EncryptedData names <see cref="ContentKeyName"/>.
    /// </summary>
    /// <param name="doc">The document; its <c>card</c> element is replaced by an EncryptedData.</param>
    /// <param name="contentAlgorithm">The AES instance that encrypts, keyed, with its IV.</param>
    /// <param name="kek">The key-encryption key, or null.</param>
    /// <param name="padding">EncryptedXml's padding: ISO 10126 by default (random pad bytes), PKCS #7 to compare bytes.</param>
    public static byte[] EncryptCard(XmlDocument doc, SymmetricAlgorithm contentAlgorithm, SymmetricAlgorithm? kek, PaddingMode padding = PaddingMode.ISO10126)
    {
        var card = (XmlElement)doc.SelectSingleNode("//card")!;
        byte[] cipherValue = new EncryptedXml(doc) { Padding = padding }.EncryptData(card, contentAlgorithm, content: false);
        var data = new EncryptedData
        {
            Type = EncryptedXml.XmlEncElementUrl,
            EncryptionMethod = new EncryptionMethod(UriFor(contentAlgorithm.KeySize)),
            CipherData = new CipherData(cipherValue),
        };
        if (kek is null)
        {
            data.KeyInfo.AddClause(new KeyInfoName(ContentKeyName));
        }
        else
        {
            var encryptedKey = new EncryptedKey
            {
                EncryptionMethod = new EncryptionMethod(EncryptedXml.XmlEncAES256KeyWrapUrl),
                CipherData = new CipherData(EncryptedXml.EncryptKey(contentAlgorithm.Key, kek)),
            };
            encryptedKey.KeyInfo.AddClause(new KeyInfoName(KekName));
            data.KeyInfo.AddClause(new KeyInfoEncryptedKey(encryptedKey));
        }

        EncryptedXml.ReplaceElement(card, data, content: false);
        return cipherValue;
    }
}

/// <summary>
/// An <see cref="EncryptedXml"/> that records the type of every content-decryption algorithm its own
/// <see cref="EncryptedXml.GetDecryptionKey"/> returns (for an EncryptedKey: the one it creates by the algorithm's URI).
/// </summary>
internal sealed class RecordingEncryptedXml(XmlDocument document) : EncryptedXml(document)
{
    public List<Type?> DecryptionAlgorithms { get; } = [];

    public override SymmetricAlgorithm? GetDecryptionKey(EncryptedData encryptedData, string? symmetricAlgorithmUri)
    {
        SymmetricAlgorithm? algorithm = base.GetDecryptionKey(encryptedData, symmetricAlgorithmUri);
        DecryptionAlgorithms.Add(algorithm?.GetType());
        return algorithm;
    }
}

/// <summary>
/// EncryptedXml with a CachedAes instance handed to it (no name lookup): AES-128/192/256-CBC ciphertexts identical to
/// stock's for the same key and IV, and documents encrypted by either decrypted by the other.
/// </summary>
public sealed class EncryptedXmlInstanceTests
{
    [Theory]
    [InlineData(128)]
    [InlineData(192)]
    [InlineData(256)]
    public void A_CachedAes_instance_encrypts_and_decrypts_like_stock_both_ways(int keySizeBits)
    {
        for (int seed = 0; seed < 8; seed++)
        {
            var rng = new Random(keySizeBits + seed);
            byte[] key = new byte[keySizeBits / 8];
            byte[] iv = new byte[16];
            rng.NextBytes(key);
            rng.NextBytes(iv);
            using Aes stock = Aes.Create();
            using CachedAes cached = CachedAes.Create();
            foreach (Aes aes in new[] { stock, cached })
            {
                aes.Key = key;
                aes.IV = iv;
            }

            XmlDocument original = Xml.Document(seed);

            // PKCS #7 padding: the same bytes as stock's. EncryptedXml's default, ISO 10126, pads with random bytes.
            XmlDocument byStock = Xml.Document(seed);
            XmlDocument byCached = Xml.Document(seed);
            byte[] stockCipher = Xml.EncryptCard(byStock, stock, kek: null, PaddingMode.PKCS7);
            byte[] cachedCipher = Xml.EncryptCard(byCached, cached, kek: null, PaddingMode.PKCS7);
            Assert.Equal(stockCipher, cachedCipher);
            Assert.Equal(byStock.OuterXml, byCached.OuterXml);
            Assert.DoesNotContain("<card", byCached.OuterXml, StringComparison.Ordinal);

            // EncryptedXml's default padding, each way: each decrypts the other's document, through the key-name mapping.
            XmlDocument isoByStock = Xml.Document(seed);
            XmlDocument isoByCached = Xml.Document(seed);
            Xml.EncryptCard(isoByStock, stock, kek: null);
            Xml.EncryptCard(isoByCached, cached, kek: null);
            foreach ((XmlDocument doc, Aes decryptor) in new[] { (byCached, (Aes)stock), (byStock, cached), (isoByCached, stock), (isoByStock, cached) })
            {
                var exml = new RecordingEncryptedXml(doc);
                exml.AddKeyNameMapping(Xml.ContentKeyName, decryptor);
                exml.DecryptDocument();
                Assert.Equal(original.OuterXml, doc.OuterXml);
                Assert.Equal([decryptor.GetType()], exml.DecryptionAlgorithms);
            }
        }
    }

    [Fact]
    public void Tampered_ciphertexts_fail_alike()
    {
        byte[] key = new byte[32];
        new Random(5).NextBytes(key);
        using Aes stock = Aes.Create();
        using CachedAes cached = CachedAes.Create();
        stock.Key = key;
        cached.Key = key;
        XmlDocument doc = Xml.Document(1);
        byte[] cipher = Xml.EncryptCard(doc, stock, kek: null);
        int rejected = 0;
        for (int i = 16; i < cipher.Length; i++)
        {
            byte[] damaged = (byte[])cipher.Clone();
            damaged[i] ^= 0x5A;
            var data = new EncryptedData { EncryptionMethod = new EncryptionMethod(EncryptedXml.XmlEncAES256Url), CipherData = new CipherData(damaged) };
            Exception? s = Record.Exception(() => new EncryptedXml().DecryptData(data, stock));
            Exception? c = Record.Exception(() => new EncryptedXml().DecryptData(data, cached));
            Assert.Equal(s?.GetType(), c?.GetType());
            if (s is null)
            {
                Assert.Equal(new EncryptedXml().DecryptData(data, stock), new EncryptedXml().DecryptData(data, cached));
            }
            else
            {
                rejected++;
            }
        }

        Assert.True(rejected > 0, "no damaged ciphertext was rejected");
    }
}

/// <summary>
/// <c>CryptoConfig.AddAlgorithm</c> with CachedAes, as docs/integrations.md shows it: name-based creation ("AES", and
/// EncryptedXml's AES-CBC URIs) then gives CachedAes, and nothing else changes. The registration is for the whole
/// process and cannot be undone, so everything about it is one test: before, the registration, after.
/// </summary>
public sealed class CryptoRegistrationTests
{
    private static readonly string[] s_cbcUris = [EncryptedXml.XmlEncAES128Url, EncryptedXml.XmlEncAES192Url, EncryptedXml.XmlEncAES256Url];

    /// <summary>docs/integrations.md's registration, word for word.</summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "A test, not trimmed.")]
    private static void RegisterAsDocumented() =>
        CryptoConfig.AddAlgorithm(typeof(CachedAes),
            "AES",
            "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
            "http://www.w3.org/2001/04/xmlenc#aes192-cbc",
            "http://www.w3.org/2001/04/xmlenc#aes256-cbc");

    /// <summary>Encrypts a document with stock AES (its content key in an AES-wrapped EncryptedKey), then decrypts it.</summary>
    private static (string Decrypted, List<Type?> Used) RoundTripThroughTheUri(int seed, int keySizeBits, out string original)
    {
        var rng = new Random(seed);
        using Aes kek = Aes.Create();
        using Aes content = Aes.Create();
        content.KeySize = keySizeBits;
        byte[] kekBytes = new byte[32];
        rng.NextBytes(kekBytes);
        kek.Key = kekBytes;
        XmlDocument doc = Xml.Document(seed);
        original = doc.OuterXml;
        Xml.EncryptCard(doc, content, kek);

        var exml = new RecordingEncryptedXml(doc);
        using Aes kekForReading = Aes.Create();
        kekForReading.Key = kekBytes;
        exml.AddKeyNameMapping(Xml.KekName, kekForReading);
        exml.DecryptDocument();
        return (doc.OuterXml, exml.DecryptionAlgorithms);
    }

    [Fact]
    public void Registering_CachedAes_changes_name_based_creation_only()
    {
        // Before: stock's defaults.
        Assert.IsNotType<CachedAes>(CryptoConfig.CreateFromName("AES"));
        foreach (string uri in s_cbcUris)
        {
            Assert.IsNotType<CachedAes>(CryptoConfig.CreateFromName(uri));
        }

        var stockTypes = new HashSet<Type?>();
        foreach (int bits in new[] { 128, 192, 256 })
        {
            (string decrypted, List<Type?> used) = RoundTripThroughTheUri(bits, bits, out string original);
            Assert.Equal(original, decrypted);
            Type? only = Assert.Single(used);
            Assert.NotNull(only);
            Assert.NotEqual(typeof(CachedAes), only);
            stockTypes.Add(only);
        }

        RegisterAsDocumented();

        // After: "AES" and the three AES-CBC URIs make a CachedAes, and so does the obsolete Aes.Create(string)...
        Assert.IsType<CachedAes>(CryptoConfig.CreateFromName("AES"));
        Assert.IsType<CachedAes>(CryptoConfig.CreateFromName("aes"));
        foreach (string uri in s_cbcUris)
        {
            Assert.IsType<CachedAes>(CryptoConfig.CreateFromName(uri));
        }
#pragma warning disable SYSLIB0045 // Aes.Create(string) is obsolete; it is the name-based path this checks.
        Assert.IsType<CachedAes>(Aes.Create("AES"));
#pragma warning restore SYSLIB0045

        // ... but not Aes.Create(), nor the names left alone (key wrap URIs: EncryptedXml's key wrap uses only a key's
        // bytes, on an AES of its own; the provider and managed type names).
        using (Aes plain = Aes.Create())
        {
            Assert.IsNotType<CachedAes>(plain);
        }

        foreach (string other in new[] { EncryptedXml.XmlEncAES256KeyWrapUrl, "AesManaged", "AesCryptoServiceProvider", "System.Security.Cryptography.AesCryptoServiceProvider" })
        {
            Assert.IsNotType<CachedAes>(CryptoConfig.CreateFromName(other));
        }

        // EncryptedXml decrypting a document whose content key came in an EncryptedKey: it now decrypts with a CachedAes
        // it created by the URI, and gets the same document back.
        foreach (int bits in new[] { 128, 192, 256 })
        {
            (string decrypted, List<Type?> used) = RoundTripThroughTheUri(1000 + bits, bits, out string original);
            Assert.Equal(original, decrypted);
            Assert.Equal([typeof(CachedAes)], used);
        }

        Assert.DoesNotContain(typeof(CachedAes), stockTypes);
    }

    /// <summary>
    /// The caveats docs/integrations.md states for trimming and native AOT come from these annotations: CryptoConfig's name
    /// lookup and EncryptedXml's constructors are marked as unsafe to trim (and EncryptedXml's as needing dynamic code).
    /// </summary>
    [Fact]
    public void Name_lookups_and_EncryptedXml_are_annotated_as_unsafe_to_trim()
    {
        MethodInfo createFromName = typeof(CryptoConfig).GetMethod(nameof(CryptoConfig.CreateFromName), [typeof(string)])!;
        Assert.NotNull(createFromName.GetCustomAttribute<RequiresUnreferencedCodeAttribute>());
        ConstructorInfo encryptedXml = typeof(EncryptedXml).GetConstructor([typeof(XmlDocument)])!;
        Assert.NotNull(encryptedXml.GetCustomAttribute<RequiresUnreferencedCodeAttribute>());
        Assert.NotNull(encryptedXml.GetCustomAttribute<RequiresDynamicCodeAttribute>());
    }
}
