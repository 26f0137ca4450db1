using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using CachedCryptography.Core;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>OpenSSL libcrypto (1.1 or 3.x) on Linux.</summary>
[SupportedOSPlatform("linux")]
internal sealed class OpenSslBackend : CipherBackend
{
    // Index: mode * 3 + (key bytes / 8 - 2), i.e. ECB 128/192/256 then CBC 128/192/256.
    private readonly IntPtr[] _ciphers;

    private OpenSslBackend(IntPtr[] ciphers, string description)
    {
        _ciphers = ciphers;
        Description = description;
    }

    /// <summary>Which library was loaded, for diagnostics.</summary>
    public string Description { get; }

    public override CachedAesBackend Kind => CachedAesBackend.OpenSsl;

    // Restarting a CBC context at a new IV goes through EVP_CipherInit_ex, which on OpenSSL 3.0 costs
    // 150-200 ns, several times a block's AES work, so short messages are cheaper as ECB plus a managed XOR
    // chain (see README: this moves the CBC chaining of those messages outside the OpenSSL FIPS module
    // boundary). Measured here with a stopwatch loop over the span one-shots (AES-128, no padding):
    // encrypt needs one native call per block (~35-45 ns each) and breaks even with the restart at 6-7
    // blocks; decrypt needs one native call per message and stays cheaper up to the 32-block stack limit.
    public override int ShortCbcEncryptBlocks => 6;

    public override int ShortCbcDecryptBlocks => MessageCipher.MaxStackCiphertext / 16;

    public override IBlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        IntPtr cipher = _ciphers[(int)mode * 3 + (key.Length / 8 - 2)];
        return new OpenSslBlockCipher(cipher, mode, encrypting, key);
    }

    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        backend = null;
        try
        {
            Libcrypto.EnsureResolver();
            nuint version = Libcrypto.OpenSSL_version_num();
            IntPtr[] ciphers = version >= 0x3000_0000 ? FetchCiphers() : LegacyCiphers();

            if (Array.IndexOf(ciphers, IntPtr.Zero) >= 0)
            {
                reason = "OpenSSL did not provide every AES ECB/CBC cipher.";
                return false;
            }

            backend = new OpenSslBackend(ciphers, $"{Libcrypto.LoadedFile} (OPENSSL_VERSION_NUMBER 0x{version:x})");
            reason = null;
            return true;
        }
        catch (Exception e) when (e is PlatformNotSupportedException or DllNotFoundException or EntryPointNotFoundException)
        {
            reason = e.Message;
            return false;
        }
    }

    // Fetched once per process and kept for its lifetime (never EVP_CIPHER_free'd): every init with an
    // explicitly fetched cipher skips the provider lookup that the EVP_aes_*() placeholders trigger on 3.x.
    private static IntPtr[] FetchCiphers()
    {
        Libcrypto.ClearStaleErrors();
        IntPtr[] ciphers =
        [
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-128-ECB", null),
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-192-ECB", null),
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-256-ECB", null),
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-128-CBC", null),
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-192-CBC", null),
            Libcrypto.EVP_CIPHER_fetch(IntPtr.Zero, "AES-256-CBC", null),
        ];
        Libcrypto.ClearStaleErrors();
        return ciphers;
    }

    private static IntPtr[] LegacyCiphers() =>
    [
        Libcrypto.EVP_aes_128_ecb(),
        Libcrypto.EVP_aes_192_ecb(),
        Libcrypto.EVP_aes_256_ecb(),
        Libcrypto.EVP_aes_128_cbc(),
        Libcrypto.EVP_aes_192_cbc(),
        Libcrypto.EVP_aes_256_cbc(),
    ];
}
