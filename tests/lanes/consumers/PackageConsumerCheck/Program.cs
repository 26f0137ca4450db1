// The packed-package consumer check (scripts/consumer-test.sh), not a usage example (that is
// samples/QuickStart): a consumer of the CachedAes package: encrypts with CachedAes, decrypts with stock Aes.Create()
// (and the other way round), and compares. Prints "consumer-check: OK" and exits 0 when every
// result matches; prints each mismatch and exits 1 otherwise.
using System;
using System.Reflection;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography;

int checks = 0;
int failures = 0;

void Check(bool ok, string what)
{
    checks++;
    if (!ok)
    {
        failures++;
        Console.WriteLine($"MISMATCH: {what}");
    }
}

try
{
    using CachedAes cached = CachedAes.Create();
    Console.WriteLine($"backend: {cached.Backend}");
    // Which runtime this is, and which of the package's builds (lib/net10.0 or lib/net11.0) it got.
    Console.WriteLine($"runtime: {Environment.Version}");
    Console.WriteLine($"library: {typeof(CachedAes).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName}");
    Console.WriteLine($"describe: {CachedAesDiagnostics.Describe().Split(Environment.NewLine)[0]}");

    int[] lengths = [0, 1, 15, 16, 17, 64, 100, 1000];
    PaddingMode[] paddings = [PaddingMode.PKCS7, PaddingMode.ANSIX923, PaddingMode.Zeros];

    foreach (int keyBytes in new[] { 16, 24, 32 })
    {
        byte[] key = RandomNumberGenerator.GetBytes(keyBytes);
        // The same CachedAes instance is re-keyed for every key size: its cached native
        // handles must follow the new key.
        cached.Key = key;
        using Aes stock = Aes.Create();
        stock.Key = key;

        foreach (int length in lengths)
        {
            byte[] plaintext = RandomNumberGenerator.GetBytes(length);
            byte[] iv = RandomNumberGenerator.GetBytes(16);
            foreach (PaddingMode padding in paddings)
            {
                string label = $"AES-{keyBytes * 8} {padding} {length} bytes";

                // Zeros padding cannot tell trailing zero bytes from padding: compare the ciphertexts.
                byte[] ecb = cached.EncryptEcb(plaintext, padding);
                Check(ecb.AsSpan().SequenceEqual(stock.EncryptEcb(plaintext, padding)), $"ECB encrypt {label}");
                Check(cached.DecryptEcb(ecb, padding).AsSpan().SequenceEqual(stock.DecryptEcb(ecb, padding)), $"ECB decrypt {label}");

                byte[] cbc = cached.EncryptCbc(plaintext, iv, padding);
                Check(cbc.AsSpan().SequenceEqual(stock.EncryptCbc(plaintext, iv, padding)), $"CBC encrypt {label}");
                Check(cached.DecryptCbc(cbc, iv, padding).AsSpan().SequenceEqual(stock.DecryptCbc(cbc, iv, padding)), $"CBC decrypt {label}");

                if (padding == PaddingMode.PKCS7)
                {
                    // Round trips across implementations: CachedAes -> stock and stock -> CachedAes.
                    Check(stock.DecryptEcb(ecb, padding).AsSpan().SequenceEqual(plaintext), $"ECB CachedAes->stock {label}");
                    Check(stock.DecryptCbc(cbc, iv, padding).AsSpan().SequenceEqual(plaintext), $"CBC CachedAes->stock {label}");
                    Check(cached.DecryptCbc(stock.EncryptCbc(plaintext, iv, padding), iv, padding).AsSpan().SequenceEqual(plaintext), $"CBC stock->CachedAes {label}");
                }
            }

            if (length > 0)
            {
                // RFC 5649 key wrap with padding.
                string label = $"AES-{keyBytes * 8} key wrap {length} bytes";
                byte[] wrapped = cached.EncryptKeyWrapPadded(plaintext);
                Check(wrapped.AsSpan().SequenceEqual(stock.EncryptKeyWrapPadded(plaintext)), $"wrap {label}");
                Check(stock.DecryptKeyWrapPadded(wrapped).AsSpan().SequenceEqual(plaintext), $"unwrap by stock {label}");
                Check(cached.DecryptKeyWrapPadded(wrapped).AsSpan().SequenceEqual(plaintext), $"unwrap by CachedAes {label}");
            }
        }

        // RFC 3394 key wrap without padding. As a net11.0 app this is .NET 11's Aes.EncryptKeyWrap/DecryptKeyWrap over
        // CachedAes's cores, compared with stock .NET 11's own; as a net10.0 app, CachedAes's own members (stock .NET 10
        // has none): a round trip of the right length.
        foreach (int kwLength in new[] { 16, 32, 40 })
        {
            string kwLabel = $"AES-{keyBytes * 8} RFC 3394 {kwLength} bytes";
            byte[] cek = RandomNumberGenerator.GetBytes(kwLength);
            byte[] kw = cached.EncryptKeyWrap(cek);
            Check(kw.Length == kwLength + 8 && cached.DecryptKeyWrap(kw).AsSpan().SequenceEqual(cek), $"round trip {kwLabel}");
#if NET11_0_OR_GREATER
            Aes asAes = cached;
            Check(asAes.EncryptKeyWrap(cek).AsSpan().SequenceEqual(stock.EncryptKeyWrap(cek)), $"wrap through Aes vs stock {kwLabel}");
            Check(stock.DecryptKeyWrap(kw).AsSpan().SequenceEqual(cek), $"unwrap by stock {kwLabel}");
            Check(asAes.DecryptKeyWrap(stock.EncryptKeyWrap(cek)).AsSpan().SequenceEqual(cek), $"unwrap of stock's through Aes {kwLabel}");
#endif
        }

        // A block-aligned message without padding.
        byte[] blocks = RandomNumberGenerator.GetBytes(48);
        byte[] iv0 = RandomNumberGenerator.GetBytes(16);
        Check(cached.EncryptEcb(blocks, PaddingMode.None).AsSpan().SequenceEqual(stock.EncryptEcb(blocks, PaddingMode.None)), $"ECB None AES-{keyBytes * 8}");
        Check(cached.EncryptCbc(blocks, iv0, PaddingMode.None).AsSpan().SequenceEqual(stock.EncryptCbc(blocks, iv0, PaddingMode.None)), $"CBC None AES-{keyBytes * 8}");

        // A last block that decrypts to ...00 is never valid PKCS7: CachedAes must reject it, as stock does.
        byte[] badPadding = stock.EncryptCbc(new byte[32], iv0, PaddingMode.None);
        bool cachedThrew = false;
        try
        {
            cached.DecryptCbc(badPadding, iv0, PaddingMode.PKCS7);
        }
        catch (CryptographicException)
        {
            cachedThrew = true;
        }
        Check(cachedThrew, $"bad padding rejected AES-{keyBytes * 8}");
    }
}
catch (Exception ex)
{
    Console.WriteLine($"consumer-check: FAILED ({ex.GetType().FullName}: {ex.Message})");
    return 2;
}

Console.WriteLine($"checks: {checks}, mismatches: {failures}");
Console.WriteLine(failures == 0 ? "consumer-check: OK" : $"consumer-check: FAILED ({failures} mismatches)");
return failures == 0 ? 0 : 1;
