using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.OpenSsl;

/// <summary>OpenSSL libcrypto (1.1 or 3.x) on Linux: makes <see cref="OpenSslCipher"/> handles, from its pool of empty contexts where it can.</summary>
[SupportedOSPlatform("linux")]
internal sealed class OpenSslBackend : CipherBackend
{
    // The library and its six AES ciphers are looked up once per process; every backend (one per process outside tests)
    // shares them and has a pool of its own.
    private static readonly Lazy<Library> s_library = new(LoadCiphers);

    // ECB 128/192/256 then CBC 128/192/256 (OpenSslCipher picks one by mode and key size).
    private readonly IntPtr[] _ciphers;

    private OpenSslBackend(IntPtr[] ciphers, OpenSslShortCalls shortCalls, string file)
    {
        _ciphers = ciphers;
        ShortCalls = shortCalls;
        Description = $"{file}, {shortCalls.Reason}";
    }

    public override CachedAesBackend Kind => CachedAesBackend.OpenSsl;

    /// <summary>The library file loaded, its version number, and whether short calls skip the GC transition.</summary>
    public override string Description { get; }

    /// <summary>Whether this backend's handles make short <c>EVP_CipherUpdate</c> calls without the GC transition, and why.</summary>
    internal OpenSslShortCalls ShortCalls { get; }

    /// <summary>This backend's pool of empty contexts.</summary>
    internal OpenSslContextPool Pool { get; } = new();

    /// <summary>A backend over the libcrypto the .NET runtime uses; false, with the reason, when it cannot be used.</summary>
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        Library library = s_library.Value;
        backend = library.Ciphers is null ? null : new OpenSslBackend(library.Ciphers, library.ShortCalls, library.Detail);
        reason = library.Ciphers is null ? library.Detail : null;
        return backend is not null;
    }

    /// <summary>
    /// A backend over the process's libcrypto that decides short calls as <paramref name="shortCalls"/> says instead of as
    /// the library was found (a test seam: the path for an ENGINE or a third-party provider, on the development machine).
    /// </summary>
    internal static OpenSslBackend WithShortCalls(OpenSslShortCalls shortCalls)
    {
        Library library = s_library.Value;
        return library.Ciphers is null
            ? throw new PlatformNotSupportedException(library.Detail)
            : new OpenSslBackend(library.Ciphers, shortCalls, library.Detail);
    }

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        OpenSslCipher? context = Pool.TryRent();
        if (context is null)
        {
            CachedAesMetrics.PoolMiss();
            context = OpenSslCipher.CreateEmpty(Pool);
        }
        else
        {
            CachedAesMetrics.PoolHit();
        }

        if (!context.TryKey(_ciphers, ShortCalls.Allowed, mode, encrypting, key))
        {
            // The context is freed even if describing the failure throws (it allocates).
            CryptographicException failure;
            try
            {
                failure = context.CreateFailure();
            }
            finally
            {
                context.Discard();
            }

            throw failure;
        }

        return context;
    }

    // The ciphers and what implements them, or null and why not.
    private static Library LoadCiphers()
    {
        try
        {
            Libcrypto.EnsureResolver();
            nuint version = Libcrypto.OpenSSL_version_num();
            bool openSsl3 = version >= 0x3000_0000;
            IntPtr[] ciphers = openSsl3 ? FetchCiphers() : LegacyCiphers();
            if (Array.IndexOf(ciphers, IntPtr.Zero) >= 0)
            {
                return new(null, default, "libcrypto: OpenSSL did not provide every AES ECB/CBC cipher.");
            }

            return new(ciphers, ProbeShortCalls(ciphers, openSsl3), string.Create(CultureInfo.InvariantCulture, $"{Libcrypto.LoadedFile} (OPENSSL_VERSION_NUMBER 0x{version:x})"));
        }
        catch (Exception e) when (e is PlatformNotSupportedException or DllNotFoundException or EntryPointNotFoundException)
        {
            return new(null, default, e.Message);
        }
    }

    // Whatever goes wrong asking what implements AES leaves every call with the GC transition.
    private static OpenSslShortCalls ProbeShortCalls(IntPtr[] ciphers, bool openSsl3)
    {
        try
        {
            return OpenSslShortCalls.Probe(ciphers, openSsl3);
        }
        catch (EntryPointNotFoundException e)
        {
            return new(false, $"what implements AES could not be asked ({e.Message}): every EVP_CipherUpdate makes the GC transition");
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

    private readonly record struct Library(IntPtr[]? Ciphers, OpenSslShortCalls ShortCalls, string Detail);
}
