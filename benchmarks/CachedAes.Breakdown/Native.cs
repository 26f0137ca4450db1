using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Breakdown;

/// <summary>
/// The harness's own raw calls into libcrypto.so.3 (the library CachedAes loads on Linux): plain <see cref="IntPtr"/>
/// contexts, no SafeHandle, no checks beyond the return code. They are the "P/Invoke" layers.
/// </summary>
internal static unsafe partial class RawLibcrypto
{
    private const string Library = "libcrypto.so.3";

    [LibraryImport(Library)]
    internal static partial IntPtr EVP_CIPHER_CTX_new();

    [LibraryImport(Library)]
    internal static partial void EVP_CIPHER_CTX_free(IntPtr ctx);

    [LibraryImport(Library)]
    internal static partial IntPtr EVP_aes_256_ecb();

    [LibraryImport(Library)]
    internal static partial IntPtr EVP_aes_256_cbc();

    [LibraryImport(Library)]
    internal static partial int EVP_CipherInit_ex(IntPtr ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int enc);

    [LibraryImport(Library)]
    internal static partial int EVP_CIPHER_CTX_set_padding(IntPtr ctx, int padding);

    [LibraryImport(Library)]
    internal static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, out int outputLength, byte* input, int inputLength);

    /// <summary>The same import without the GC transition (cooperative mode kept across the call).</summary>
    [LibraryImport(Library, EntryPoint = "EVP_CipherUpdate")]
    [SuppressGCTransition]
    internal static partial int EVP_CipherUpdateNoTransition(IntPtr ctx, byte* output, out int outputLength, byte* input, int inputLength);

    // OpenSSL 3's explicitly fetched ciphers, as CachedAes keys its contexts with (fetched once, never freed).
    [LibraryImport(Library, StringMarshalling = StringMarshalling.Utf8)]
    private static partial IntPtr EVP_CIPHER_fetch(IntPtr libraryContext, string algorithm, string? properties);

    /// <summary>
    /// A context keyed with <paramref name="key"/> and <paramref name="iv"/>. By default its cipher is OpenSSL's
    /// implicit-fetch placeholder (<c>EVP_aes_256_ecb()</c>/<c>_cbc()</c>, as the C floor's steady rows use) and padding is
    /// off through <c>EVP_CIPHER_CTX_set_padding</c>. With <paramref name="asCachedAes"/> it is keyed as CachedAes keys its
    /// contexts on OpenSSL 3: an explicitly fetched cipher, padding left on for encryption (only the final call, never
    /// made, would add it) and turned off through the provider's parameter for decryption, so that a re-key does not set
    /// padding again (docs/design-notes.md, "Padding off without the flag").
    /// </summary>
    public static IntPtr CreateKeyed(bool cbc, bool encrypting, ReadOnlySpan<byte> key, ReadOnlySpan<byte> iv, bool asCachedAes = false)
    {
        IntPtr ctx = EVP_CIPHER_CTX_new();
        IntPtr cipher = asCachedAes
            ? EVP_CIPHER_fetch(IntPtr.Zero, cbc ? "AES-256-CBC" : "AES-256-ECB", null)
            : cbc ? EVP_aes_256_cbc() : EVP_aes_256_ecb();
        fixed (byte* k = key)
        fixed (byte* v = iv)
        {
            if (ctx == IntPtr.Zero || cipher == IntPtr.Zero
                || EVP_CipherInit_ex(ctx, cipher, IntPtr.Zero, k, cbc ? v : null, encrypting ? 1 : 0) != 1
                || !(asCachedAes
                    ? encrypting || CachedCryptography.Backends.OpenSsl.Libcrypto.TrySetPaddingOffByParameter(ctx)
                    : EVP_CIPHER_CTX_set_padding(ctx, 0) == 1))
            {
                throw new InvalidOperationException("Could not create a keyed OpenSSL context.");
            }
        }

        return ctx;
    }
}

/// <summary>
/// Callgrind client requests through a tiny C helper (cgmark.c, built by breakdown.sh): zero the counters, and
/// dump them under a name. Without the helper (CACHEDAES_CGMARK unset) every request is a no-op.
/// </summary>
internal static unsafe class Callgrind
{
    private static readonly delegate* unmanaged<void> s_zero;
    private static readonly delegate* unmanaged<byte*, void> s_dump;

    static Callgrind()
    {
        string? path = Environment.GetEnvironmentVariable("CACHEDAES_CGMARK");
        if (string.IsNullOrEmpty(path))
        {
            return;
        }

        IntPtr library = NativeLibrary.Load(path);
        s_zero = (delegate* unmanaged<void>)NativeLibrary.GetExport(library, "cgmark_zero");
        s_dump = (delegate* unmanaged<byte*, void>)NativeLibrary.GetExport(library, "cgmark_dump");
    }

    public static bool Enabled => s_zero != null;

    public static void Zero()
    {
        if (s_zero != null)
        {
            s_zero();
        }
    }

    public static void Dump(string name)
    {
        if (s_dump == null)
        {
            return;
        }

        byte[] text = new byte[name.Length + 1];
        System.Text.Encoding.ASCII.GetBytes(name, text);
        fixed (byte* pointer = text)
        {
            s_dump(pointer);
        }
    }
}
