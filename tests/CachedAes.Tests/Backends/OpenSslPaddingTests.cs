using System;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// How a decryption context's OpenSSL padding is turned off. <c>EVP_CIPHER_CTX_set_padding</c> flags the context, and
/// OpenSSL 3's <c>EVP_CipherInit_ex</c> then sets the provider's parameter again on every re-key; where the backend's
/// probe found it safe it sets the parameter alone, so a key change re-keys without that. Both ways, every decryption
/// after key changes (same size and another size) gives stock's bytes, with the flag as each way leaves it.
/// </summary>
[SupportedOSPlatform("linux")]
public static unsafe partial class OpenSslPaddingTests
{
    // EVP_CIPH_NO_PADDING in <openssl/evp.h>.
    private const int NoPaddingFlag = 0x100;

    [LibraryImport("libcrypto.so.3")]
    private static partial int EVP_CIPHER_CTX_test_flags(IntPtr ctx, int flags);

    [LibraryImport("libcrypto.so.3")]
    private static partial nuint OpenSSL_version_num();

    /// <summary>This machine's libcrypto: on OpenSSL 3 over its own AES the probe passes and the parameter is used.</summary>
    [OpenSslFact]
    public static void The_process_backend_turns_padding_off_by_parameter_on_openssl_3()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? created, out string? why), why);
        var backend = (OpenSslBackend)created;
        bool openSsl3 = OpenSSL_version_num() >= 0x3000_0000;
        Assert.Equal(openSsl3 && backend.ShortCalls.Allowed, backend.PaddingByParameter);
        Assert.Equal(backend.PaddingByParameter, backend.Description.EndsWith("decryption padding off through the provider's parameter", StringComparison.Ordinal));
    }

    /// <summary>
    /// A kept instance whose key changes before each decryption, ECB and CBC, through key sizes 32, 32, 16, 24, 32: each
    /// decryption equals stock's (no padding, and PKCS7), and the cached decryption handle is flagged exactly when the
    /// backend does not use the parameter.
    /// </summary>
    [OpenSslFact]
    public static void Decryption_handles_rekeyed_many_times_match_stock_with_the_flag_as_the_backend_sets_it()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? created, out string? why), why);
        foreach (OpenSslBackend backend in new[] { (OpenSslBackend)created, OpenSslBackend.WithShortCalls(new OpenSslShortCalls(false, "a test")) })
        {
            using var aes = new CachedAes(backend);
            byte[] iv = RandomNumberGenerator.GetBytes(16);
            int rekeyed = 0;
            foreach (int keySize in new[] { 32, 32, 16, 24, 32 })
            {
                byte[] key = RandomNumberGenerator.GetBytes(keySize);
                aes.Key = key;
                using Aes stock = TestUtil.Stock(key);
                byte[] plaintext = RandomNumberGenerator.GetBytes(80);
                byte[] ecb = stock.EncryptEcb(plaintext, PaddingMode.PKCS7);
                byte[] cbc = stock.EncryptCbc(plaintext, iv, PaddingMode.PKCS7);

                // Twice each, so that from the second key on the handles are cached and re-keyed in place.
                for (int call = 0; call < 2; call++)
                {
                    Assert.Equal(plaintext, aes.DecryptEcb(ecb, PaddingMode.PKCS7));
                    Assert.Equal(stock.DecryptEcb(ecb, PaddingMode.None), aes.DecryptEcb(ecb, PaddingMode.None));
                    Assert.Equal(plaintext, aes.DecryptCbc(cbc, iv, PaddingMode.PKCS7));
                    Assert.Equal(stock.DecryptCbc(cbc, iv, PaddingMode.None), aes.DecryptCbc(cbc, iv, PaddingMode.None));
                }

                foreach (BlockCipherMode mode in new[] { BlockCipherMode.Ecb, BlockCipherMode.Cbc })
                {
                    if (aes.PeekCachedHandle(mode, encrypting: false) is OpenSslCipher handle)
                    {
                        rekeyed++;
                        bool flagged = EVP_CIPHER_CTX_test_flags(handle.Context, NoPaddingFlag) != 0;
                        Assert.True(flagged != backend.PaddingByParameter, $"{mode} decryption handle: flagged {flagged}, padding by parameter {backend.PaddingByParameter}");
                    }
                }
            }

            // The handles were cached and looked at after every key but the first.
            Assert.True(rekeyed >= 8, $"only {rekeyed} cached decryption handles were checked");
        }
    }
}
