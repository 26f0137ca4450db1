using System;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;

namespace CachedCryptography.Tests;

/// <summary>A theory that runs only on Linux, where libcrypto.so.3 provides the reference; elsewhere it is reported as skipped.</summary>
public sealed class OpenSslTheoryAttribute : TheoryAttribute
{
    public OpenSslTheoryAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "OpenSSL's own key-wrap cipher (libcrypto.so.3) is the reference on Linux only.";
        }
    }
}

/// <summary>
/// Test-only reference: OpenSSL's own RFC 3394 cipher (<c>AES-128-WRAP</c>, <c>AES-192-WRAP</c>, <c>AES-256-WRAP</c>),
/// an implementation independent of CachedAes (it runs its own AES inside OpenSSL's wrap provider), called through
/// <c>libcrypto.so.3</c>. Every call uses a fresh context: fetch (once per process), new context, the wrap-allow flag
/// before init (OpenSSL 1.1 refuses wrap ciphers without it; 3.x accepts it), init, one update, final, free.
/// </summary>
/// <remarks>
/// Initial value: a NULL IV at init makes OpenSSL use RFC 3394's default <c>A6A6A6A6A6A6A6A6</c> (checked against the
/// RFC's own examples in <see cref="Rfc3394VectorTests"/>); an explicit 8-byte IV replaces it, which the tests use to
/// make ciphertexts whose recovered integrity register differs from the default in one chosen bit.
/// </remarks>
internal static unsafe partial class OpenSslKeyWrap
{
    private const string Libcrypto = "libcrypto.so.3";
    private const int EvpCipherCtxFlagWrapAllow = 0x1;
    private const int WrapBlockLength = 8;

    private static readonly ConcurrentDictionary<int, IntPtr> s_ciphers = new();

    /// <summary>Wraps <paramref name="plaintext"/> under <paramref name="kek"/>; <paramref name="iv"/> empty means the default IV.</summary>
    public static byte[] Wrap(ReadOnlySpan<byte> kek, ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv = default)
    {
        byte[]? result = Run(kek, plaintext, iv, encrypt: true);
        return result ?? throw new InvalidOperationException(
            $"OpenSSL refused to wrap {plaintext.Length} bytes under a {kek.Length * 8}-bit key.");
    }

    /// <summary>Unwraps with the default IV; null when OpenSSL rejects the input (integrity check or length).</summary>
    public static byte[]? Unwrap(ReadOnlySpan<byte> kek, ReadOnlySpan<byte> ciphertext) => Run(kek, ciphertext, default, encrypt: false);

    private static byte[]? Run(ReadOnlySpan<byte> kek, ReadOnlySpan<byte> input, ReadOnlySpan<byte> iv, bool encrypt)
    {
        if (!iv.IsEmpty && iv.Length != WrapBlockLength)
        {
            throw new ArgumentException("The RFC 3394 IV is 8 bytes.", nameof(iv));
        }

        IntPtr cipher = Cipher(kek.Length);
        IntPtr ctx = EVP_CIPHER_CTX_new();
        if (ctx == IntPtr.Zero)
        {
            throw new InvalidOperationException("EVP_CIPHER_CTX_new failed.");
        }

        // OpenSSL writes whole output blocks: leave room for one more than the result.
        byte[] output = new byte[input.Length + 16];

        try
        {
            EVP_CIPHER_CTX_set_flags(ctx, EvpCipherCtxFlagWrapAllow);

            fixed (byte* k = kek)
            fixed (byte* v = iv)
            fixed (byte* i = input)
            fixed (byte* o = output)
            {
                if (EVP_CipherInit_ex(ctx, cipher, IntPtr.Zero, k, iv.IsEmpty ? null : v, encrypt ? 1 : 0) != 1)
                {
                    throw new InvalidOperationException("EVP_CipherInit_ex failed for a wrap cipher.");
                }

                if (EVP_CipherUpdate(ctx, o, out int written, i, input.Length) != 1)
                {
                    // A rejected unwrap (or a length the algorithm does not take): OpenSSL has cleared its output.
                    ERR_clear_error();
                    return null;
                }

                if (EVP_CipherFinal_ex(ctx, o + written, out int final) != 1 || final != 0)
                {
                    throw new InvalidOperationException("EVP_CipherFinal_ex of a wrap cipher failed or wrote data.");
                }

                int expected = encrypt ? input.Length + WrapBlockLength : input.Length - WrapBlockLength;
                if (written != expected)
                {
                    throw new InvalidOperationException($"OpenSSL wrote {written} bytes; {expected} expected.");
                }

                return output.AsSpan(0, written).ToArray();
            }
        }
        finally
        {
            EVP_CIPHER_CTX_free(ctx);
        }
    }

    private static IntPtr Cipher(int keyLength) => s_ciphers.GetOrAdd(keyLength, static length =>
    {
        string name = length switch
        {
            16 => "AES-128-WRAP",
            24 => "AES-192-WRAP",
            32 => "AES-256-WRAP",
            _ => throw new ArgumentException($"No AES key wrap for a {length}-byte key."),
        };

        IntPtr fetched = EVP_CIPHER_fetch(IntPtr.Zero, name, null);
        if (fetched == IntPtr.Zero || EVP_CIPHER_get_key_length(fetched) != length)
        {
            throw new InvalidOperationException($"EVP_CIPHER_fetch({name}) failed.");
        }

        // Kept for the life of the test process, like the library's own fetched ciphers.
        return fetched;
    });

    [LibraryImport(Libcrypto, StringMarshalling = StringMarshalling.Utf8)]
    private static partial IntPtr EVP_CIPHER_fetch(IntPtr libraryContext, string algorithm, string? properties);

    [LibraryImport(Libcrypto)]
    private static partial int EVP_CIPHER_get_key_length(IntPtr cipher);

    [LibraryImport(Libcrypto)]
    private static partial IntPtr EVP_CIPHER_CTX_new();

    [LibraryImport(Libcrypto)]
    private static partial void EVP_CIPHER_CTX_free(IntPtr ctx);

    [LibraryImport(Libcrypto)]
    private static partial void EVP_CIPHER_CTX_set_flags(IntPtr ctx, int flags);

    [LibraryImport(Libcrypto)]
    private static partial int EVP_CipherInit_ex(IntPtr ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int enc);

    [LibraryImport(Libcrypto)]
    private static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, out int outputLength, byte* input, int inputLength);

    [LibraryImport(Libcrypto)]
    private static partial int EVP_CipherFinal_ex(IntPtr ctx, byte* output, out int outputLength);

    [LibraryImport(Libcrypto)]
    private static partial void ERR_clear_error();
}
