using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Backends.OpenSsl;

// <openssl/err.h>: the per-thread error queue.
internal static unsafe partial class Libcrypto
{
    [LibraryImport(Name)]
    internal static partial nuint ERR_peek_error();

    [LibraryImport(Name)]
    internal static partial nuint ERR_peek_last_error();

    [LibraryImport(Name)]
    internal static partial void ERR_error_string_n(nuint e, byte* buf, nuint len);

    [LibraryImport(Name)]
    internal static partial void ERR_clear_error();

    /// <summary>
    /// Empties this thread's error queue so that a stale entry left by other code is never reported as ours.
    /// On OpenSSL 3.0 <c>ERR_clear_error</c> costs several times a whole small AES call even on an empty queue, so it
    /// only runs when the much cheaper <c>ERR_peek_error</c> finds an entry (docs/design-notes.md, "OpenSSL's error queue").
    /// </summary>
    internal static void ClearStaleErrors()
    {
        if (ERR_peek_error() != 0)
        {
            ERR_clear_error();
        }
    }

    /// <summary>
    /// Builds the exception for a failed call from the newest entry of this thread's error queue, then
    /// empties the queue so the entry cannot be reported again.
    /// </summary>
    internal static CryptographicException CreateException(string function)
    {
        nuint error = ERR_peek_last_error();
        ERR_clear_error();

        if (error == 0)
        {
            return new($"OpenSSL {function} failed without an error code.");
        }

        const int BufferSize = 256; // OpenSSL documents 256 bytes as always enough.
        byte* buffer = stackalloc byte[BufferSize];
        ERR_error_string_n(error, buffer, BufferSize);
        return new($"OpenSSL {function} failed: {Marshal.PtrToStringUTF8((IntPtr)buffer)}");
    }
}
