using System;
using System.Diagnostics;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>An <c>EVP_CIPHER_CTX</c> keyed once, padding off, reused for every message.</summary>
internal sealed unsafe class OpenSslBlockCipher : BlockCipherHandle
{
    private readonly SafeEvpCipherCtxHandle _ctx;

    public OpenSslBlockCipher(IntPtr cipher, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
        : base(mode)
    {
        Debug.Assert(cipher != IntPtr.Zero);
        Libcrypto.ClearStaleErrors();

        SafeEvpCipherCtxHandle ctx = Libcrypto.EVP_CIPHER_CTX_new();
        try
        {
            if (ctx.IsInvalid)
            {
                throw Libcrypto.CreateException("EVP_CIPHER_CTX_new");
            }

            fixed (byte* keyPointer = key)
            {
                // No IV yet: CBC messages set theirs through Reset.
                if (Libcrypto.EVP_CipherInit_ex(ctx, cipher, IntPtr.Zero, keyPointer, null, encrypting ? 1 : 0) != 1)
                {
                    throw Libcrypto.CreateException("EVP_CipherInit_ex");
                }
            }

            // Padding is done in managed code for every backend.
            if (Libcrypto.EVP_CIPHER_CTX_set_padding(ctx, 0) != 1)
            {
                throw Libcrypto.CreateException("EVP_CIPHER_CTX_set_padding");
            }
        }
        catch
        {
            ctx.Dispose();
            throw;
        }

        _ctx = ctx;
    }

    /// <summary>The owned context (tests use it to provoke real OpenSSL failures).</summary>
    internal SafeEvpCipherCtxHandle Context => _ctx;

    protected override void ResetCore(ReadOnlySpan<byte> iv)
    {
        fixed (byte* ivPointer = iv)
        {
            // Cipher, engine and key NULL, enc -1: only the IV changes; the key schedule is kept.
            if (Libcrypto.EVP_CipherInit_ex(_ctx, IntPtr.Zero, IntPtr.Zero, null, ivPointer, -1) != 1)
            {
                throw Libcrypto.CreateException("EVP_CipherInit_ex");
            }
        }
    }

    protected override void TransformCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        // No ClearStaleErrors here: this is the hot path, and on failure CreateException reports the newest
        // queue entry, which is the one this call pushed.
        int written;
        int result;
        fixed (byte* inputPointer = input)
        fixed (byte* outputPointer = output)
        {
            // With padding off and whole blocks, Update writes everything (no block is held back for
            // depadding) and EVP_CipherFinal_ex would write nothing, so it is skipped.
            result = Libcrypto.EVP_CipherUpdate(_ctx, outputPointer, out written, inputPointer, input.Length);
        }

        if (result != 1)
        {
            throw Libcrypto.CreateException("EVP_CipherUpdate");
        }

        if (written != input.Length)
        {
            throw new CryptographicException($"OpenSSL EVP_CipherUpdate wrote {written} bytes for {input.Length}.");
        }
    }

    protected override void ReleaseCore() => _ctx.Dispose();
}
