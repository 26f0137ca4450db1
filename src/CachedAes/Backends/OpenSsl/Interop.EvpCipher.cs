using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Backends.OpenSsl;

// <openssl/evp.h>: symmetric ciphers. Every int-returning function returns 1 on success. Contexts are raw pointers:
// each is owned by one OpenSslCipher, which is owned by a key epoch, a call or the pool (docs/design-notes.md, "Native
// ownership"), and only its one user at a time passes it here.
internal static unsafe partial class Libcrypto
{
    /// <summary>OpenSSL 3.x only: an explicitly fetched cipher (a non-NULL result is owned by the caller).</summary>
    [LibraryImport(Name, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial IntPtr EVP_CIPHER_fetch(IntPtr libraryContext, string algorithm, string? properties);

    // OpenSSL 1.1 getters. On 3.x these return "implicit fetch" placeholders that redo a provider lookup at
    // every init, which is why 3.x uses EVP_CIPHER_fetch instead.
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_128_ecb();
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_192_ecb();
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_256_ecb();
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_128_cbc();
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_192_cbc();
    [LibraryImport(Name)] internal static partial IntPtr EVP_aes_256_cbc();

    /// <summary><c>EVP_CIPHER_CTX* EVP_CIPHER_CTX_new(void)</c>: an empty context, or NULL.</summary>
    [LibraryImport(Name)]
    internal static partial IntPtr EVP_CIPHER_CTX_new();

    /// <summary><c>void EVP_CIPHER_CTX_free(EVP_CIPHER_CTX*)</c>: cleanses any key schedule and frees the context.</summary>
    [LibraryImport(Name)]
    internal static partial void EVP_CIPHER_CTX_free(IntPtr ctx);

    /// <summary>
    /// <c>int EVP_CIPHER_CTX_reset(EVP_CIPHER_CTX*)</c>: frees the cipher state, cleansing the key schedule, and
    /// leaves an empty context that can be initialised with any cipher again.
    /// </summary>
    [LibraryImport(Name)]
    internal static partial int EVP_CIPHER_CTX_reset(IntPtr ctx);

    /// <summary>
    /// <c>int EVP_CipherInit_ex(EVP_CIPHER_CTX*, const EVP_CIPHER*, ENGINE*, const unsigned char* key,
    /// const unsigned char* iv, int enc)</c>.
    /// </summary>
    [LibraryImport(Name)]
    internal static partial int EVP_CipherInit_ex(IntPtr ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int enc);

    [LibraryImport(Name)]
    internal static partial int EVP_CIPHER_CTX_set_padding(IntPtr ctx, int padding);

    /// <summary><c>int EVP_CipherUpdate(EVP_CIPHER_CTX*, unsigned char* out, int* outl, const unsigned char* in, int inl)</c>.</summary>
    [LibraryImport(Name)]
    internal static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);

    /// <summary>
    /// <see cref="EVP_CipherUpdate"/> without the GC transition, for short inputs only (see <see cref="OpenSslCipher"/> for
    /// the bounds), and only in a process where AES is OpenSSL's own code (<see cref="OpenSslShortCalls"/>: the default or
    /// FIPS provider, no ENGINE). There, on a keyed AES context with padding off, a whole-block update only transforms
    /// memory: it takes no lock, makes no system call and calls back into nothing; its failure paths, which would
    /// allocate the thread's error state, are not reachable with the handle's inputs (a keyed context, whole blocks, a
    /// positive length, in place or not overlapping). The runtime cannot suspend the thread for a GC while it runs, so it
    /// must stay well under a microsecond.
    /// </summary>
    [LibraryImport(Name, EntryPoint = "EVP_CipherUpdate")]
    [SuppressGCTransition]
    internal static partial int EVP_CipherUpdateShort(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);
}
