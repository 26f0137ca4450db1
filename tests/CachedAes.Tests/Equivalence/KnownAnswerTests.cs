using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>NIST CAVP AES KATs and Wycheproof AES-CBC vectors from tests/vectors/.</summary>
public class KnownAnswerTests
{
    public static IEnumerable<string> NistFiles()
    {
        foreach (string mode in new[] { "ECB", "CBC" })
        {
            foreach (string kind in new[] { "GFSbox", "KeySbox", "VarKey", "VarTxt" })
            {
                foreach (int bits in new[] { 128, 192, 256 })
                {
                    yield return $"{mode}{kind}{bits}.rsp";
                }
            }
        }
    }

    public static TheoryData<string, string> BackendAndNistFile()
    {
        var data = new TheoryData<string, string>();
        foreach (string backend in BackendData.All)
        {
            foreach (string file in NistFiles())
            {
                data.Add(backend, file);
            }
        }

        return data;
    }

    [Fact]
    public void Nist_files_hold_the_documented_number_of_records()
    {
        int total = NistFiles().Sum(f => Vectors.ReadNistAes(Vectors.Path("nist-cavp-aes-kat", f)).Count);
        Assert.Equal(4156, total);
    }

    [Theory]
    [MemberData(nameof(BackendAndNistFile))]
    public void Nist_kat(string backend, string file)
    {
        List<Vectors.NistAesRecord> records = Vectors.ReadNistAes(Vectors.Path("nist-cavp-aes-kat", file));
        Assert.NotEmpty(records);
        Assert.Contains(records, r => r.Encrypt);
        Assert.Contains(records, r => !r.Encrypt);
        bool cbc = file.StartsWith("CBC", StringComparison.Ordinal);

        using CachedAes aes = BackendData.Create(backend);
        byte[] dest = new byte[32];
        foreach (Vectors.NistAesRecord r in records)
        {
            aes.Key = r.Key;
            Assert.Equal(r.Key.Length * 8, aes.KeySize);
            if (cbc)
            {
                Assert.NotNull(r.Iv);
                if (r.Encrypt)
                {
                    AssertRecord(r, r.Ciphertext, aes.EncryptCbc(r.Plaintext, r.Iv, PaddingMode.None));
                    dest.AsSpan().Fill(TestUtil.Canary);
                    Assert.True(aes.TryEncryptCbc(r.Plaintext, r.Iv, dest, out int written, PaddingMode.None), r.ToString());
                    AssertRecord(r, r.Ciphertext, dest.AsSpan(0, written).ToArray());
                }
                else
                {
                    AssertRecord(r, r.Plaintext, aes.DecryptCbc(r.Ciphertext, r.Iv, PaddingMode.None));
                    dest.AsSpan().Fill(TestUtil.Canary);
                    int written = aes.DecryptCbc(r.Ciphertext.AsSpan(), r.Iv, dest.AsSpan(), PaddingMode.None);
                    AssertRecord(r, r.Plaintext, dest.AsSpan(0, written).ToArray());
                }
            }
            else
            {
                Assert.Null(r.Iv);
                if (r.Encrypt)
                {
                    AssertRecord(r, r.Ciphertext, aes.EncryptEcb(r.Plaintext, PaddingMode.None));
                    dest.AsSpan().Fill(TestUtil.Canary);
                    int written = aes.EncryptEcb(r.Plaintext.AsSpan(), dest.AsSpan(), PaddingMode.None);
                    AssertRecord(r, r.Ciphertext, dest.AsSpan(0, written).ToArray());
                }
                else
                {
                    AssertRecord(r, r.Plaintext, aes.DecryptEcb(r.Ciphertext, PaddingMode.None));
                    dest.AsSpan().Fill(TestUtil.Canary);
                    Assert.True(aes.TryDecryptEcb(r.Ciphertext, dest, PaddingMode.None, out int written), r.ToString());
                    AssertRecord(r, r.Plaintext, dest.AsSpan(0, written).ToArray());
                }
            }

            Assert.True(dest.AsSpan(16).IndexOfAnyExcept(TestUtil.Canary) < 0, $"{r}: bytes past the result were written");
        }
    }

    private static void AssertRecord(Vectors.NistAesRecord r, byte[] expected, byte[] actual)
    {
        if (!expected.AsSpan().SequenceEqual(actual))
        {
            Assert.Fail($"{r}: expected {TestUtil.Hex(expected)}, got {TestUtil.Hex(actual)}");
        }
    }

    private static List<Vectors.WycheproofCbcCase> Wycheproof() =>
        Vectors.ReadWycheproofCbc(Vectors.Path("wycheproof", "aes_cbc_pkcs5_test.json"));

    // The cases with one comment (one padding mode), after checking that there are as many as the file documents.
    private static List<Vectors.WycheproofCbcCase> WycheproofCases(string comment, int expectedCount)
    {
        List<Vectors.WycheproofCbcCase> cases = Wycheproof().Where(c => c.Comment == comment).ToList();
        Assert.Equal(expectedCount, cases.Count);
        return cases;
    }

    [Fact]
    public void Wycheproof_file_holds_the_documented_cases()
    {
        List<Vectors.WycheproofCbcCase> all = Wycheproof();
        Assert.Equal(216, all.Count);
        Assert.Equal(72, all.Count(c => c.Valid));
        Assert.Equal(144, all.Count(c => c.Result == "invalid"));
        Assert.Equal(15, all.Count(c => c.Comment == AnsiComment));
        Assert.Equal(15, all.Count(c => c.Comment == IsoComment));
        Assert.Equal(18, all.Count(c => c.Comment == ZerosComment));
    }

    private const string AnsiComment = "Using ANSI X.923 padding instead of PKCS #5 padding";
    private const string IsoComment = "Using ISO 10126 padding instead of PKCS #5 padding";
    private const string ZerosComment = "Using zero padding instead of PKCS #5 padding";

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Wycheproof_valid_cases_encrypt_and_decrypt(string backend)
    {
        using CachedAes aes = BackendData.Create(backend);
        foreach (Vectors.WycheproofCbcCase c in Wycheproof().Where(c => c.Valid))
        {
            aes.Key = c.Key;
            Assert.True(c.Ct.AsSpan().SequenceEqual(aes.EncryptCbc(c.Msg, c.Iv, PaddingMode.PKCS7)), c.ToString());
            Assert.True(c.Msg.AsSpan().SequenceEqual(aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.PKCS7)), c.ToString());

            byte[] dest = TestUtil.Filled(c.Ct.Length + 7);
            Assert.True(aes.TryDecryptCbc(c.Ct, c.Iv, dest, out int written, PaddingMode.PKCS7), c.ToString());
            Assert.Equal(c.Msg.Length, written);
            Assert.True(c.Msg.AsSpan().SequenceEqual(dest.AsSpan(0, written)), c.ToString());

            // Stock zeroes the decrypted pad bytes it wrote past the plaintext and leaves the rest alone: same buffer.
            using Aes stock = TestUtil.Stock(c.Key);
            byte[] stockDest = TestUtil.Filled(c.Ct.Length + 7);
            Assert.True(stock.TryDecryptCbc(c.Ct, c.Iv, stockDest, out int stockWritten, PaddingMode.PKCS7));
            Assert.Equal(stockWritten, written);
            Assert.True(stockDest.AsSpan().SequenceEqual(dest), $"{c}: destination differs from stock's ({TestUtil.Hex(stockDest)} vs {TestUtil.Hex(dest)})");
            Assert.True(dest.AsSpan(c.Ct.Length).IndexOfAnyExcept(TestUtil.Canary) < 0, $"{c}: bytes past the ciphertext length were written");
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Wycheproof_invalid_cases_throw_and_leave_no_plaintext(string backend)
    {
        using CachedAes aes = BackendData.Create(backend);
        int checkedCases = 0;
        foreach (Vectors.WycheproofCbcCase c in Wycheproof().Where(c => !c.Valid))
        {
            aes.Key = c.Key;
            Assert.Throws<CryptographicException>(() => aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.PKCS7));

            // Destination big enough for the whole decryption.
            byte[] dest = TestUtil.Filled(c.Ct.Length + 16);
            byte[] before = (byte[])dest.Clone();
            Assert.Throws<CryptographicException>(() => aes.TryDecryptCbc(c.Ct, c.Iv, dest, out _, PaddingMode.PKCS7));
            TestUtil.AssertNoNewData(before, dest, c + " (Try)");

            // Destination exactly as long as the ciphertext, int-returning overload.
            dest = TestUtil.Filled(c.Ct.Length);
            before = (byte[])dest.Clone();
            Assert.Throws<CryptographicException>(() => aes.DecryptCbc(c.Ct.AsSpan(), c.Iv, dest.AsSpan(), PaddingMode.PKCS7));
            TestUtil.AssertNoNewData(before, dest, c + " (span)");

            // In place.
            byte[] inPlace = (byte[])c.Ct.Clone();
            Assert.Throws<CryptographicException>(() => aes.TryDecryptCbc(inPlace, c.Iv, inPlace, out _, PaddingMode.PKCS7));
            TestUtil.AssertNoNewData(c.Ct, inPlace, c + " (in place)");
            checkedCases++;
        }

        Assert.Equal(144, checkedCases);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Wycheproof_ansix923_cases(string backend)
    {
        using CachedAes aes = BackendData.Create(backend);
        foreach (Vectors.WycheproofCbcCase c in WycheproofCases(AnsiComment, expectedCount: 15))
        {
            aes.Key = c.Key;
            Assert.True(c.Msg.AsSpan().SequenceEqual(aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.ANSIX923)), c.ToString());
            Assert.True(c.Ct.AsSpan().SequenceEqual(aes.EncryptCbc(c.Msg, c.Iv, PaddingMode.ANSIX923)), c.ToString());
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Wycheproof_iso10126_cases(string backend)
    {
        using CachedAes aes = BackendData.Create(backend);
        foreach (Vectors.WycheproofCbcCase c in WycheproofCases(IsoComment, expectedCount: 15))
        {
            aes.Key = c.Key;
            Assert.True(c.Msg.AsSpan().SequenceEqual(aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.ISO10126)), c.ToString());

            // The pad bytes are random: the encryption can only be checked by length and a round trip through stock.
            byte[] ct = aes.EncryptCbc(c.Msg, c.Iv, PaddingMode.ISO10126);
            Assert.Equal(c.Ct.Length, ct.Length);
            using Aes stock = TestUtil.Stock(c.Key);
            Assert.True(c.Msg.AsSpan().SequenceEqual(stock.DecryptCbc(ct, c.Iv, PaddingMode.ISO10126)), c.ToString());
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Wycheproof_zero_padding_cases(string backend)
    {
        using CachedAes aes = BackendData.Create(backend);
        int partial = 0;
        foreach (Vectors.WycheproofCbcCase c in WycheproofCases(ZerosComment, expectedCount: 18))
        {
            aes.Key = c.Key;

            // Raw decryption is msg followed by zero bytes; Zeros mode removes nothing.
            byte[] expectedRaw = new byte[c.Ct.Length];
            c.Msg.CopyTo(expectedRaw, 0);
            Assert.True(expectedRaw.AsSpan().SequenceEqual(aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.Zeros)), c.ToString());
            Assert.True(expectedRaw.AsSpan().SequenceEqual(aes.DecryptCbc(c.Ct, c.Iv, PaddingMode.None)), c.ToString());

            if (c.Msg.Length % 16 != 0)
            {
                partial++;
                Assert.True(c.Ct.AsSpan().SequenceEqual(aes.EncryptCbc(c.Msg, c.Iv, PaddingMode.Zeros)), c.ToString());
            }
        }

        Assert.Equal(9, partial);
    }
}
