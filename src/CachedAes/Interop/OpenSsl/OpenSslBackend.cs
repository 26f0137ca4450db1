using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>OpenSSL libcrypto (1.1 or 3.x) on Linux: makes <see cref="OpenSslCipher"/> handles, from its pool of empty contexts where it can.</summary>
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

    /// <summary>This backend's pool of empty contexts (one per backend, so one per process outside tests).</summary>
    internal OpenSslContextPool Pool { get; } = new();

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        IntPtr cipher = _ciphers[(int)mode * 3 + (key.Length / 8 - 2)];
        OpenSslCipher context = Pool.TryRent() ?? OpenSslCipher.CreateEmpty(this, Pool);
        if (!context.TryKey(cipher, mode, encrypting, key))
        {
            CryptographicException failure = context.CreateFailure();
            context.Discard();
            throw failure;
        }

        return context;
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
