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

    private OpenSslBackend(IntPtr[] ciphers, OpenSslShortCalls shortCalls, bool paddingParameterProbed, string file)
    {
        _ciphers = ciphers;
        ShortCalls = shortCalls;

        // Only over OpenSSL's own AES (the short-call verdict): the probe ran against what the process loaded, and a
        // third-party provider may treat the parameter otherwise.
        PaddingByParameter = paddingParameterProbed && shortCalls.Allowed;
        Description = PaddingByParameter
            ? $"{file}, {shortCalls.Reason}; decryption padding off through the provider's parameter"
            : $"{file}, {shortCalls.Reason}";
    }

    public override CachedAesBackend Kind => CachedAesBackend.OpenSsl;

    /// <summary>The library file loaded, its version number, and whether short calls skip the GC transition.</summary>
    public override string Description { get; }

    /// <summary>Whether this backend's handles make short <c>EVP_CipherUpdate</c> calls without the GC transition, and why.</summary>
    internal OpenSslShortCalls ShortCalls { get; }

    /// <summary>
    /// Whether decryption contexts have their padding turned off through the provider's <c>"padding"</c> parameter
    /// instead of <c>EVP_CIPHER_CTX_set_padding</c>, so that a re-key does not set it again: on OpenSSL 3 over OpenSSL's
    /// own AES, where a probe found the parameter still off after a re-key (<see cref="PaddingParameterSurvivesRekey"/>).
    /// </summary>
    internal bool PaddingByParameter { get; }

    /// <summary>This backend's pool of empty contexts.</summary>
    internal OpenSslContextPool Pool { get; } = new();

    /// <summary>A backend over the libcrypto the .NET runtime uses; false, with the reason, when it cannot be used.</summary>
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        Library library = s_library.Value;
        backend = library.Ciphers is null ? null : new OpenSslBackend(library.Ciphers, library.ShortCalls, library.PaddingParameter, library.Detail);
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
            : new OpenSslBackend(library.Ciphers, shortCalls, library.PaddingParameter, library.Detail);
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

        if (!context.TryKey(_ciphers, ShortCalls.Allowed, PaddingByParameter, mode, encrypting, key))
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
                return new(null, default, false, "libcrypto: OpenSSL did not provide every AES ECB/CBC cipher.");
            }

            return new(ciphers, ProbeShortCalls(ciphers, openSsl3), openSsl3 && PaddingParameterSurvivesRekey(ciphers), string.Create(CultureInfo.InvariantCulture, $"{Libcrypto.LoadedFile} (OPENSSL_VERSION_NUMBER 0x{version:x})"));
        }
        catch (Exception e) when (e is PlatformNotSupportedException or DllNotFoundException or EntryPointNotFoundException)
        {
            return new(null, default, false, e.Message);
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

    // OpenSSL 3: whether a decryption context whose padding was turned off through the provider's parameter still has it
    // off after a re-key with a NULL cipher, in ECB and CBC: a 32-byte update must then write 32 bytes (with padding on,
    // it holds the last block back). EVP_CIPHER_CTX_set_padding also flags the context, and EVP_CipherInit_ex then sets
    // the parameter again on every re-key; this probe decides whether the library may skip that. Any failure: false.
    private static unsafe bool PaddingParameterSurvivesRekey(IntPtr[] ciphers)
    {
        IntPtr ctx = Libcrypto.EVP_CIPHER_CTX_new();
        if (ctx == IntPtr.Zero)
        {
            Libcrypto.ClearStaleErrors();
            return false;
        }

        try
        {
            byte* first = stackalloc byte[16];
            byte* second = stackalloc byte[16];
            byte* iv = stackalloc byte[16];
            byte* input = stackalloc byte[32];
            byte* output = stackalloc byte[32];
            new Span<byte>(first, 16).Clear();
            new Span<byte>(second, 16).Fill(0x5A);
            new Span<byte>(iv, 16).Clear();
            new Span<byte>(input, 32).Clear();
            foreach (IntPtr cipher in (ReadOnlySpan<IntPtr>)[ciphers[0], ciphers[3]])
            {
                int written = 0;
                bool stillOff = Libcrypto.EVP_CIPHER_CTX_reset(ctx) == 1
                    && Libcrypto.EVP_CipherInit_ex(ctx, cipher, IntPtr.Zero, first, iv, 0) == 1
                    && Libcrypto.TrySetPaddingOffByParameter(ctx)
                    && Libcrypto.EVP_CipherInit_ex(ctx, IntPtr.Zero, IntPtr.Zero, second, iv, 0) == 1
                    && Libcrypto.EVP_CipherUpdate(ctx, output, &written, input, 32) == 1
                    && written == 32;
                if (!stillOff)
                {
                    return false;
                }
            }

            return true;
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
        finally
        {
            Libcrypto.EVP_CIPHER_CTX_free(ctx);
            Libcrypto.ClearStaleErrors();
        }
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

    private readonly record struct Library(IntPtr[]? Ciphers, OpenSslShortCalls ShortCalls, bool PaddingParameter, string Detail);
}
