using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Backends.OpenSsl;

// <openssl/core.h> and <openssl/core_names.h> (OpenSSL 3.x only): OSSL_PARAM, the parameter arrays that providers read,
// and the one cipher parameter this library sets; EVP_CIPHER_CTX_set_params is declared in <openssl/evp.h>.
internal static unsafe partial class Libcrypto
{
    // OSSL_PARAM_UNSIGNED_INTEGER, and OSSL_PARAM_UNMODIFIED (a return size the callee has not written).
    private const uint ParamUnsignedInteger = 2;
    private static readonly nuint s_paramUnmodified = nuint.MaxValue;

    /// <summary>
    /// Turns a keyed cipher context's padding off through its provider's <c>"padding"</c> parameter
    /// (<c>OSSL_CIPHER_PARAM_PADDING</c> set to 0), without <c>EVP_CIPHER_CTX_set_padding</c>'s flag on the context;
    /// false on failure. OpenSSL 3.x only.
    /// </summary>
    internal static bool TrySetPaddingOffByParameter(IntPtr ctx)
    {
        uint off = 0;
        fixed (byte* name = "padding\0"u8)
        {
            OsslParam* parameters = stackalloc OsslParam[2];
            parameters[0] = new OsslParam { Key = name, DataType = ParamUnsignedInteger, Data = &off, DataSize = sizeof(uint), ReturnSize = s_paramUnmodified };
            parameters[1] = default; // the end marker: a null key
            return EVP_CIPHER_CTX_set_params(ctx, parameters) == 1;
        }
    }

    /// <summary><c>int EVP_CIPHER_CTX_set_params(EVP_CIPHER_CTX*, const OSSL_PARAM params[])</c> (OpenSSL 3.x).</summary>
    [LibraryImport(Name)]
    private static partial int EVP_CIPHER_CTX_set_params(IntPtr ctx, OsslParam* parameters);

    // struct ossl_param_st { const char *key; unsigned int data_type; void *data; size_t data_size; size_t return_size; }
    [StructLayout(LayoutKind.Sequential)]
    private struct OsslParam
    {
        public byte* Key;
        public uint DataType;
        public void* Data;
        public nuint DataSize;
        public nuint ReturnSize;
    }
}
