using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Backends.OpenSsl;

// What implements AES in this process: <openssl/engine.h> (1.1, and deprecated but still consulted by EVP_CipherInit_ex
// in 3.x) and, on 3.x, <openssl/provider.h>. Asked once per process (OpenSslShortCalls).
internal static partial class Libcrypto
{
    /// <summary>
    /// <c>ENGINE *ENGINE_get_cipher_engine(int nid)</c>: the ENGINE that <c>EVP_CipherInit_ex</c> would use for the cipher
    /// (one registered as its default, typically by an <c>openssl.cnf</c>), or NULL for the library's own implementation.
    /// A non-NULL result is a functional reference, released with <see cref="ENGINE_finish"/>.
    /// </summary>
    [LibraryImport(Name)]
    internal static partial IntPtr ENGINE_get_cipher_engine(int nid);

    /// <summary><c>const char *ENGINE_get_id(const ENGINE *e)</c>: the ENGINE's short name (owned by the ENGINE).</summary>
    [LibraryImport(Name)]
    internal static partial IntPtr ENGINE_get_id(IntPtr engine);

    /// <summary><c>int ENGINE_finish(ENGINE *e)</c>: releases a functional reference.</summary>
    [LibraryImport(Name)]
    internal static partial int ENGINE_finish(IntPtr engine);

    /// <summary><c>const OSSL_PROVIDER *EVP_CIPHER_get0_provider(const EVP_CIPHER *cipher)</c> (3.0 and later): the provider of a fetched cipher.</summary>
    [LibraryImport(Name)]
    internal static partial IntPtr EVP_CIPHER_get0_provider(IntPtr cipher);

    /// <summary><c>const char *OSSL_PROVIDER_get0_name(const OSSL_PROVIDER *prov)</c> (3.0 and later): the name it was loaded under.</summary>
    [LibraryImport(Name)]
    internal static partial IntPtr OSSL_PROVIDER_get0_name(IntPtr provider);
}
