using System;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;

namespace CachedCryptography.Tests;

/// <summary>
/// The reference for RFC 3394: OpenSSL's own wrap cipher (<c>AES-128-WRAP</c>, <c>AES-192-WRAP</c>, <c>AES-256-WRAP</c>),
/// an implementation independent of CachedAes (it runs its own AES inside OpenSSL's wrap provider), called through
/// <c>libcrypto.so.3</c>. The tests use the one-shots (<see cref="Wrap"/>, <see cref="Unwrap"/>: a fresh context per
/// call); the benchmarks link this file and measure a <see cref="Context"/> keyed once as their baseline, so the
/// baseline is the same code the tests check against the RFC's own examples (<c>Rfc3394VectorTests</c>).
/// </summary>
/// <remarks>
/// Initial value: a NULL IV at init makes OpenSSL use RFC 3394's default <c>A6A6A6A6A6A6A6A6</c>; an explicit 8-byte
/// IV replaces it, which the tests use to make ciphertexts whose recovered integrity register differs from the
/// default in one chosen bit.
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

    // One fresh context: fetch (once per process), new context, the wrap-allow flag, init, one update, final, free.
    private static byte[]? Run(ReadOnlySpan<byte> kek, ReadOnlySpan<byte> input, ReadOnlySpan<byte> iv, bool encrypt)
    {
        // OpenSSL writes whole output blocks: leave room for one more than the result.
        byte[] output = new byte[input.Length + 16];
        using var context = new Context(kek, encrypt, iv);
        if (!context.TryUpdate(input, output, out int written))
        {
            return null;
        }

        if (context.Final(output.AsSpan(written)) != 0)
        {
            throw new InvalidOperationException("EVP_CipherFinal_ex of a wrap cipher wrote data.");
        }

        int expected = encrypt ? input.Length + WrapBlockLength : input.Length - WrapBlockLength;
        if (written != expected)
        {
            throw new InvalidOperationException($"OpenSSL wrote {written} bytes; {expected} expected.");
        }

        return output.AsSpan(0, written).ToArray();
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

        // Kept for the life of the process, like the library's own fetched ciphers.
        return fetched;
    });

    /// <summary>
    /// One wrap-cipher context keyed once for one direction. It can be reused for any number of messages: the wrap
    /// cipher keeps no state between updates.
    /// </summary>
    internal sealed class Context : IDisposable
    {
        private IntPtr _ctx;

        /// <summary>Keys a context for <paramref name="kek"/>'s size; <paramref name="iv"/> empty means the default IV.</summary>
        public Context(ReadOnlySpan<byte> kek, bool encrypt, ReadOnlySpan<byte> iv = default)
        {
            if (!iv.IsEmpty && iv.Length != WrapBlockLength)
            {
                throw new ArgumentException("The RFC 3394 IV is 8 bytes.", nameof(iv));
            }

            IntPtr cipher = Cipher(kek.Length);
            _ctx = EVP_CIPHER_CTX_new();
            if (_ctx == IntPtr.Zero)
            {
                throw new InvalidOperationException("EVP_CIPHER_CTX_new failed.");
            }

            // Before init: OpenSSL 1.1 refuses wrap ciphers without it (3.x accepts it).
            EVP_CIPHER_CTX_set_flags(_ctx, EvpCipherCtxFlagWrapAllow);
            fixed (byte* k = kek)
            fixed (byte* v = iv)
            {
                if (EVP_CipherInit_ex(_ctx, cipher, IntPtr.Zero, k, iv.IsEmpty ? null : v, encrypt ? 1 : 0) != 1)
                {
                    Dispose();
                    throw new InvalidOperationException("EVP_CipherInit_ex failed for a wrap cipher.");
                }
            }
        }

        /// <summary>
        /// One wrap or unwrap of <paramref name="input"/> into <paramref name="output"/> (at least 8 bytes longer than
        /// the input). False when OpenSSL rejects the input (a failed integrity check, or a length the algorithm does
        /// not take): OpenSSL has then cleared its output, and its error queue is cleared here.
        /// </summary>
        public bool TryUpdate(ReadOnlySpan<byte> input, Span<byte> output, out int written)
        {
            if (output.Length < input.Length + WrapBlockLength)
            {
                throw new ArgumentException("The output needs room for one 8-byte block more than the input.", nameof(output));
            }

            fixed (byte* i = input)
            fixed (byte* o = output)
            {
                if (EVP_CipherUpdate(_ctx, o, out written, i, input.Length) == 1)
                {
                    return true;
                }
            }

            ERR_clear_error();
            return false;
        }

        /// <summary><c>EVP_CipherFinal_ex</c>: the bytes it wrote (none for a wrap cipher).</summary>
        public int Final(Span<byte> output)
        {
            fixed (byte* o = output)
            {
                return EVP_CipherFinal_ex(_ctx, o, out int final) == 1
                    ? final
                    : throw new InvalidOperationException("EVP_CipherFinal_ex of a wrap cipher failed.");
            }
        }

        public void Dispose()
        {
            if (_ctx != IntPtr.Zero)
            {
                EVP_CIPHER_CTX_free(_ctx);
                _ctx = IntPtr.Zero;
            }
        }
    }

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
