using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.OpenSsl;

/// <summary>
/// An <c>EVP_CIPHER_CTX</c> keyed for one mode and direction with padding off. Between owners it waits, reset and
/// keyless, in the backend's <see cref="OpenSslContextPool"/>, so a new <see cref="CachedAes"/> re-keys a pooled
/// context instead of allocating one.
/// </summary>
/// <remarks>
/// <para><b>Ownership.</b> This object owns its context and is not finalizable, so that it can be pooled safely: a
/// pooled object is one the collector can never finalize. Its owner (the key epoch whose slot holds it, the call that
/// leased it, the sweep of a dropped epoch's slots, or the pool) frees it: <see cref="Release"/> (reset and pool) or
/// <see cref="Discard"/> (docs/design-notes.md, "Ownership").</para>
/// <para><b>CBC without IV restarts.</b> Restarting a context at a new IV goes through <c>EVP_CipherInit_ex</c>, which
/// costs several times a short message's AES work (figures: docs/design-notes.md, "CBC without IV restarts"). This
/// context is never restarted: it keeps chaining from the last ciphertext block it processed, which is tracked here in
/// <see cref="_chain"/>, and each message is started at its own IV by a fix-up of the first block. Encryption feeds
/// <c>P0 ^ IV ^ chain</c>, so the context computes <c>E(P0 ^ IV)</c>, the correct first block, and chains on by
/// itself; decryption XORs the first output block with <c>IV ^ chain</c>. So every message, of any length, is one
/// <c>EVP_CipherUpdate</c>, and all chaining after the first block stays inside OpenSSL. After any failure the tracked
/// block may no longer match the context, so the handle is faulted and never reused.</para>
/// <para><b>The hot path.</b> The context is passed as a raw pointer: this object owns it, and only the one caller
/// holding the handle uses it, so no reference counting is needed per call. Short inputs go through
/// <see cref="Libcrypto.EVP_CipherUpdateShort"/> (no GC transition) where the backend found AES to be OpenSSL's own
/// (<see cref="OpenSslShortCalls"/>); elsewhere the limit is 0 and every call makes the transition. Failures come back as
/// return values; there is no exception handler around the native call.</para>
/// <para><b>Native calls out of line.</b> Every method here that makes a native call with the GC transition (keying,
/// re-keying, reset, free, long updates) is never inlined and has no exception handler. The JIT then makes the call
/// inline and clears the upper halves of the vector registers before it; inlined into a caller with an exception
/// handler, the call would go through a stub that leaves them as the managed code left them, and OpenSSL's SSE code
/// would then run with AVX-to-SSE transition penalties (measured: docs/design-notes.md, "Native calls
/// out of line").</para>
/// </remarks>
internal sealed unsafe class OpenSslCipher : BlockCipher
{
    // The longest inputs that skip the GC transition. A GC must wait for such a call to return, so the native work is
    // kept to about half a microsecond: ECB in either direction and CBC decryption process blocks in parallel, CBC
    // encryption is serial, so its limit is lower. At those lengths the transition is a negligible part of the call
    // anyway. Measurements: docs/design-notes.md, "Short calls without the GC transition".
    private const int ParallelShortLimit = 4096;
    private const int SerialShortLimit = 512;

    private readonly OpenSslContextPool _pool;
    private IntPtr _ctx;

    // The backend's six ciphers (CipherFor picks one), and the one this context is keyed with.
    private IntPtr[]? _ciphers;
    private IntPtr _cipher;

    // CBC: the block the context chains from next, i.e. the last ciphertext block it processed (zero after keying).
    // Written on every CBC call, so it has cache lines of its own.
    private IsolatedBlock _chain;

    // Inputs up to this length skip the GC transition; 0 where the backend found AES is not OpenSSL's own (OpenSslShortCalls).
    private int _shortLimit;
    private bool _shortCalls;

    // Whether a decryption context's padding is turned off through the provider's parameter (OpenSslBackend decides).
    private bool _paddingByParameter;

    private OpenSslCipher(OpenSslContextPool pool) => _pool = pool;

    /// <summary>When it was last returned to the pool (<see cref="Environment.TickCount64"/> as of the pool's last gen-2 callback), for trimming.</summary>
    internal long IdleSince { get; set; }

    /// <summary>The owned context (tests use it to provoke real OpenSSL failures).</summary>
    internal IntPtr Context => _ctx;

    /// <summary>The longest input that skips the GC transition: 0 when every call makes it (a test seam).</summary>
    internal int ShortLimit => _shortLimit;

    /// <summary>A new, empty context.</summary>
    /// <exception cref="CryptographicException"><c>EVP_CIPHER_CTX_new</c> failed.</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static OpenSslCipher CreateEmpty(OpenSslContextPool pool)
    {
        // The object first: once the native call has succeeded, nothing can fail before the context has its owner.
        var cipher = new OpenSslCipher(pool);
        cipher._ctx = Libcrypto.EVP_CIPHER_CTX_new();
        if (cipher._ctx == IntPtr.Zero)
        {
            throw Libcrypto.CreateException("EVP_CIPHER_CTX_new");
        }

        pool.OnContextAllocated();
        return cipher;
    }

    /// <summary>
    /// Keys an empty (new or reset) context with the cipher of <paramref name="ciphers"/> (the backend's) for the mode and
    /// key size; false on failure (then <see cref="Discard"/> it). <paramref name="paddingByParameter"/>: turn a
    /// decryption context's padding off through the provider's parameter (see <see cref="OpenSslBackend"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal bool TryKey(IntPtr[] ciphers, bool shortCalls, bool paddingByParameter, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        IntPtr cipher = CipherFor(ciphers, mode, key.Length);
        Debug.Assert(cipher != IntPtr.Zero && !IsFaulted);
        _ciphers = ciphers;
        _cipher = cipher;
        _shortCalls = shortCalls;
        _paddingByParameter = paddingByParameter;
        Mode = mode;
        Encrypting = encrypting;
        _chain.Value = Vector128<byte>.Zero;
        _shortLimit = !shortCalls ? 0 : mode == BlockCipherMode.Cbc && encrypting ? SerialShortLimit : ParallelShortLimit;

        Vector128<byte> zeroIv = Vector128<byte>.Zero;
        int result;
        fixed (byte* keyPointer = key)
        {
            // CBC starts chaining from a zero IV, which _chain records; ECB takes no IV.
            result = Libcrypto.EVP_CipherInit_ex(_ctx, cipher, IntPtr.Zero, keyPointer, mode == BlockCipherMode.Cbc ? (byte*)&zeroIv : null, encrypting ? 1 : 0);
        }

        if (result != 1)
        {
            return Fail("EVP_CipherInit_ex");
        }

        // Padding is done in managed code for every backend. A decryption context must have OpenSSL's padding off, or
        // EVP_CipherUpdate holds the last whole block back for depadding in EVP_CipherFinal_ex. An encryption context
        // can leave it on: padding is only added by EVP_CipherFinal_ex, which is never called, and an update of whole
        // blocks writes them all (checked on every call: written == length). Skipping the call saves a noticeable part
        // of keying a pooled context (docs/design-notes.md, "The OpenSSL context pool"). Where the backend found it
        // safe, a decryption context's padding is turned off through the provider's parameter instead of
        // EVP_CIPHER_CTX_set_padding: that function also flags the context, and OpenSSL 3 then sets the parameter
        // again on every re-key (docs/design-notes.md, "Padding off without the flag").
        if (encrypting)
        {
            return true;
        }

        return paddingByParameter
            ? Libcrypto.TrySetPaddingOffByParameter(_ctx) || Fail("EVP_CIPHER_CTX_set_params (padding)")
            : Libcrypto.EVP_CIPHER_CTX_set_padding(_ctx, 0) == 1 || Fail("EVP_CIPHER_CTX_set_padding");
    }

    /// <summary>Frees the context: one that never became a live handle (keying failed), a faulted one, or one trimmed from the pool.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Discard()
    {
        IntPtr ctx = _ctx;
        _ctx = IntPtr.Zero;
        if (ctx != IntPtr.Zero)
        {
            Libcrypto.EVP_CIPHER_CTX_free(ctx);
            _pool.OnContextFreed();
        }
    }

    [SkipLocalsInit] // every local is written before it is read
    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Debug.Assert(!IsFaulted);
        Debug.Assert(input.Length > 0 && input.Length % BlockSize == 0 && output.Length == input.Length);
        Debug.Assert(iv.Length == (Mode == BlockCipherMode.Cbc ? BlockSize : 0));
        Debug.Assert(!input.Overlaps(output, out int offset) || offset == 0);

        // Pinned by reference: never empty here, so the null for an empty span that `fixed` on a span tests for is not needed.
        fixed (byte* inputPointer = &MemoryMarshal.GetReference(input))
        fixed (byte* outputPointer = &MemoryMarshal.GetReference(output))
        {
            if (Mode == BlockCipherMode.Ecb)
            {
                return Update(inputPointer, outputPointer, input.Length);
            }

            // The IV's fix-up is made by each side, so that encryption (inlined) keeps it in a register.
            return Encrypting
                ? CbcEncrypt(FixUp(iv), inputPointer, outputPointer, input.Length)
                : CbcDecrypt(iv, inputPointer, outputPointer, input.Length);
        }
    }

    /// <summary>
    /// Re-keys the context in place: <c>EVP_CipherInit_ex</c> with no cipher keeps the provider's context and only runs
    /// the key schedule (overwriting the old one), the cheapest re-key OpenSSL has. A CBC context is given the zero IV
    /// that <see cref="_chain"/> then records: OpenSSL documents no IV for a re-key without one (its own providers restore
    /// the first IV since 3.0.0, others need not), so the handle passes the IV its first-block fix-up depends on, as the
    /// .NET runtime's own reset passes its IV (docs/design.md, "Platform contracts"). A key of another size needs another
    /// cipher: the context is reset (cleansed) and keyed afresh.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        Debug.Assert(_ciphers is not null && !IsFaulted);
        if (CipherFor(_ciphers, Mode, key.Length) != _cipher)
        {
            return Libcrypto.EVP_CIPHER_CTX_reset(_ctx) == 1
                ? TryKey(_ciphers, _shortCalls, _paddingByParameter, Mode, Encrypting, key)
                : Fail("EVP_CIPHER_CTX_reset");
        }

        Vector128<byte> zeroIv = Vector128<byte>.Zero;
        int result;
        fixed (byte* keyPointer = key)
        {
            result = Libcrypto.EVP_CipherInit_ex(_ctx, IntPtr.Zero, IntPtr.Zero, keyPointer, Mode == BlockCipherMode.Cbc ? (byte*)&zeroIv : null, Encrypting ? 1 : 0);
        }

        _chain.Value = Vector128<byte>.Zero;
        return result == 1 || Fail("EVP_CipherInit_ex");
    }

    /// <summary>OpenSSL's own reason for the failed call (<see cref="BlockCipher.Fail(string)"/> recorded its name), read from this thread's error queue.</summary>
    public override CryptographicException CreateFailure() =>
        RecordedFailure is string call ? Libcrypto.CreateException(call) : base.CreateFailure();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public override void Release()
    {
        // No key survives release: EVP_CIPHER_CTX_reset frees the cipher state, cleansing the key schedule, and
        // leaves an empty context that is pooled for the next owner (or freed when the pool is full).
        if (!IsFaulted && Libcrypto.EVP_CIPHER_CTX_reset(_ctx) == 1)
        {
            _chain.Value = Vector128<byte>.Zero;
            if (_pool.TryReturn(this))
            {
                return;
            }
        }

        Discard();
    }

    // ECB 128/192/256 then CBC 128/192/256: the backend's table (OpenSslBackend).
    private static IntPtr CipherFor(IntPtr[] ciphers, BlockCipherMode mode, int keyLength) => ciphers[(int)mode * 3 + (keyLength / 8 - 2)];

    [SkipLocalsInit] // every local is written before it is read
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // one caller, TryTransform
    private bool CbcEncrypt(Vector128<byte> fixUp, byte* input, byte* output, int length)
    {
        if (input == output)
        {
            (Vector128.Load(input) ^ fixUp).Store(output);
            if (!Update(output, output, length))
            {
                return false;
            }
        }
        else
        {
            // The caller's input is read-only: the fixed-up first block goes through a local (of this branch only, so
            // that the in-place branch above keeps its block in a register).
            Vector128<byte> first = Vector128.Load(input) ^ fixUp;
            if (!Update((byte*)&first, output, BlockSize)
                || (length != BlockSize && !Update(input + BlockSize, output + BlockSize, length - BlockSize)))
            {
                return false;
            }
        }

        _chain.Value = Vector128.Load(output + length - BlockSize);
        return true;
    }

    [SkipLocalsInit] // every local is written before it is read
    private bool CbcDecrypt(ReadOnlySpan<byte> iv, byte* input, byte* output, int length)
    {
        Vector128<byte> fixUp = FixUp(iv);

        // Read before an in-place update overwrites it.
        Vector128<byte> next = Vector128.Load(input + length - BlockSize);
        if (!Update(input, output, length))
        {
            return false;
        }

        (Vector128.Load(output) ^ fixUp).Store(output);
        _chain.Value = next;
        return true;
    }

    // What turns OpenSSL's CBC (chained from the zero IV the context was keyed with, or from the last message's final
    // ciphertext block) into CBC from `iv`: XORed into the first block before encryption, or after decryption.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private Vector128<byte> FixUp(ReadOnlySpan<byte> iv) => Vector128.LoadUnsafe(ref MemoryMarshal.GetReference(iv)) ^ _chain.Value;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Update(byte* input, byte* output, int length)
    {
        if (length > _shortLimit)
        {
            return UpdateLong(input, output, length);
        }

        int written;
        int result = Libcrypto.EVP_CipherUpdateShort(_ctx, output, &written, input, length);

        // With padding off and whole blocks, Update writes everything (EVP_CipherFinal_ex would write nothing).
        return (result == 1 && written == length) || UpdateFailed(result);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool UpdateFailed(int result) => Fail(result == 1 ? "EVP_CipherUpdate (short output)" : "EVP_CipherUpdate");

    // Kept out of line: a method that contains a P/Invoke with the GC transition sets up a P/Invoke frame in its prolog
    // on every call, which the short path above must not pay.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool UpdateLong(byte* input, byte* output, int length)
    {
        int written;
        int result = Libcrypto.EVP_CipherUpdate(_ctx, output, &written, input, length);
        return (result == 1 && written == length) || UpdateFailed(result);
    }
}
