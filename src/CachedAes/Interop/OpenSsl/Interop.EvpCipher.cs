using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.OpenSsl;

// <openssl/evp.h>: symmetric ciphers. Every int-returning function returns 1 on success.
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

    [LibraryImport(Name)]
    internal static partial SafeEvpCipherCtxHandle EVP_CIPHER_CTX_new();

    [LibraryImport(Name)]
    internal static partial void EVP_CIPHER_CTX_free(IntPtr ctx);

    /// <summary>
    /// <c>int EVP_CipherInit_ex(EVP_CIPHER_CTX*, const EVP_CIPHER*, ENGINE*, const unsigned char* key,
    /// const unsigned char* iv, int enc)</c>. With cipher and key NULL and enc -1 it only sets a new IV,
    /// keeping the key schedule and the direction.
    /// </summary>
    [LibraryImport(Name)]
    internal static partial int EVP_CipherInit_ex(SafeEvpCipherCtxHandle ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int enc);

    [LibraryImport(Name)]
    internal static partial int EVP_CIPHER_CTX_set_padding(SafeEvpCipherCtxHandle ctx, int padding);

    [LibraryImport(Name)]
    internal static partial int EVP_CipherUpdate(SafeEvpCipherCtxHandle ctx, byte* output, out int outputLength, byte* input, int inputLength);
}
