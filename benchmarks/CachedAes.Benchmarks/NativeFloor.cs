using System;
using System.Buffers.Binary;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// The native floor, measured inside the benchmark process: the calls into the platform's AES library
/// (<see cref="PlatformFloor"/>: OpenSSL on Linux, CNG on Windows, CommonCrypto on macOS) that a row needs at least, made
/// through the cheapest P/Invoke there is (blittable arguments, raw pointers into pinned arrays, no SafeHandle; on OpenSSL
/// <c>EVP_CipherUpdate</c> without the GC transition, as CachedAes calls it), with the glue between them in the plainest
/// managed code. A <c>Floor</c> method of the Steady classes runs it as a third row of each case, so BenchmarkDotNet warms
/// it up, measures it and runs it next to the Stock and Cached rows of the same parameters in the same kind of process, on
/// each runtime: the <c>× floor</c> column divides two numbers measured under the same conditions.
/// <para>
/// The work per call is that of <c>benchmarks/native-floor/floor.c</c> (OpenSSL; it stays, for instruction counts under
/// callgrind and CI's smoke test): AES-256, the plaintext already padded (padding is not native work), one handle
/// (<see cref="FloorCipher"/>) keyed once and reused; ECB one update of the whole message; CBC on a handle that is never
/// restarted, each message started at its IV by the 16-byte first-block fix-up CachedAes uses; RFC 5649 and RFC 3394
/// one 16-byte update per AES step on one ECB handle. Every floor checks its output against stock's before it is timed.
/// </para>
/// </summary>
internal sealed unsafe class NativeFloor : IDisposable
{
    private const int Block = 16;

    private readonly FloorCipher _cipher;
    private readonly byte[] _input;
    private readonly byte[] _output;
    private readonly int _length;
    private readonly byte[] _chain = GC.AllocateArray<byte>(Block, pinned: true);
    private readonly byte[] _ivXorChain = GC.AllocateArray<byte>(Block, pinned: true);
    private readonly byte[] _iv = GC.AllocateArray<byte>(Block, pinned: true);
    private readonly Func<NativeFloor, int> _run;

    private NativeFloor(bool cbc, bool encrypt, ReadOnlySpan<byte> input, int outputLength, Func<NativeFloor, int> run)
    {
        _cipher = FloorCipher.Create(cbc, encrypt, TestData.Key, TestData.Iv);
        _input = GC.AllocateArray<byte>(Math.Max(input.Length, 1), pinned: true);
        input.CopyTo(_input);
        _length = input.Length;
        _output = GC.AllocateArray<byte>(outputLength + Block, pinned: true);
        TestData.Iv.CopyTo(_iv, 0);
        TestData.Iv.CopyTo(_chain, 0); // a CBC context keyed at the IV chains from it
        _run = run;
    }

    /// <summary>The bytes of the last <see cref="Run"/>.</summary>
    public ReadOnlySpan<byte> Output(int written) => _output.AsSpan(0, written);

    /// <summary>The floor of one ECB/CBC one-shot with PKCS7 on a kept instance (the input already padded for encryption).</summary>
    public static NativeFloor ForCipher(CipherCase call) => call.Operation switch
    {
        CipherOperation.EncryptEcb => new(false, true, call.PaddedPlaintext, call.Ciphertext.Length, static f => f.Ecb()),
        CipherOperation.DecryptEcb => new(false, false, call.Ciphertext, call.Ciphertext.Length, static f => f.Ecb()),
        CipherOperation.EncryptCbc => new(true, true, call.PaddedPlaintext, call.Ciphertext.Length, static f => f.EncryptCbc()),
        CipherOperation.DecryptCbc => new(true, false, call.Ciphertext, call.Ciphertext.Length, static f => f.DecryptCbc()),
        _ => throw new ArgumentOutOfRangeException(nameof(call)),
    };

    /// <summary>The floor of RFC 5649 (<paramref name="padded"/>) or RFC 3394 wrap or unwrap of <paramref name="input"/>.</summary>
    public static NativeFloor ForKeyWrap(bool wrap, bool padded, ReadOnlySpan<byte> input) => wrap
        ? new(false, true, input, (input.Length + 7) / 8 * 8 + 8, padded ? static f => f.WrapPadded() : static f => f.Wrap())
        : new(false, false, input, input.Length - 8, padded ? static f => f.UnwrapPadded() : static f => f.Unwrap());

    /// <summary>One call; returns the bytes written.</summary>
    public int Run() => _run(this);

    /// <summary>
    /// Runs three times (a CBC floor's later messages start from the chaining state the earlier ones left) and throws
    /// unless every output equals <paramref name="expected"/>.
    /// </summary>
    public void Verify(ReadOnlySpan<byte> expected, string description)
    {
        for (int call = 0; call < 3; call++)
        {
            Array.Clear(_output);
            int written = Run();
            if (!Output(written).SequenceEqual(expected))
            {
                throw BenchmarkCheck.Failure($"The native floor of {description} did not produce stock's output (call {call + 1}).");
            }
        }
    }

    public void Dispose() => _cipher.Dispose();

    private int Ecb()
    {
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        {
            _cipher.Update(output, input, _length);
        }

        return _length;
    }

    // Never restarted: the context chains from its last ciphertext block, so P0 ^ IV ^ chain goes in, and the input
    // block is put back afterwards (the input buffer is reused, as the C floor does).
    private int EncryptCbc()
    {
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        fixed (byte* chain = _chain)
        fixed (byte* fix = _ivXorChain)
        fixed (byte* iv = _iv)
        {
            Xor(fix, chain, iv);
            Xor(input, input, fix);
            _cipher.Update(output, input, _length);
            Xor(input, input, fix);
            Buffer.MemoryCopy(output + _length - Block, chain, Block, Block);
        }

        return _length;
    }

    private int DecryptCbc()
    {
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        fixed (byte* chain = _chain)
        fixed (byte* fix = _ivXorChain)
        fixed (byte* iv = _iv)
        {
            _cipher.Update(output, input, _length);
            Xor(fix, chain, iv);
            Xor(output, output, fix);
            Buffer.MemoryCopy(input + _length - Block, chain, Block, Block);
        }

        return _length;
    }

    // RFC 5649: the 8-byte alternative initial value with the length, the key padded to 8 bytes, then RFC 3394's
    // 6 x n steps (one AES step alone for up to 8 bytes).
    private int WrapPadded()
    {
        int n = _length;
        int padded = (n + 7) / 8 * 8;
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        {
            byte* b = stackalloc byte[Block];
            BinaryPrimitives.WriteUInt32BigEndian(new Span<byte>(b, 4), 0xA65959A6);
            BinaryPrimitives.WriteUInt32BigEndian(new Span<byte>(b + 4, 4), (uint)n);
            new Span<byte>(output + 8, padded).Clear();
            Buffer.MemoryCopy(input, output + 8, padded, n);
            if (padded == 8)
            {
                Buffer.MemoryCopy(output + 8, b + 8, 8, 8);
                _cipher.Update(output, b, Block);
                return Block;
            }

            WrapSteps(b, output + 8, padded / 8);
            *(ulong*)output = *(ulong*)b;
        }

        return padded + 8;
    }

    private int Wrap()
    {
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        {
            byte* b = stackalloc byte[Block];
            *(ulong*)b = 0xA6A6A6A6A6A6A6A6;
            Buffer.MemoryCopy(input, output + 8, _length, _length);
            WrapSteps(b, output + 8, _length / 8);
            *(ulong*)output = *(ulong*)b;
        }

        return _length + 8;
    }

    private void WrapSteps(byte* b, byte* r, int k)
    {
        for (int j = 0; j < 6; j++)
        {
            for (int i = 1; i <= k; i++)
            {
                *(ulong*)(b + 8) = *(ulong*)(r + (8 * (i - 1)));
                _cipher.Update(b, b, Block);
                *(ulong*)b ^= BinaryPrimitives.ReverseEndianness((ulong)((k * j) + i));
                *(ulong*)(r + (8 * (i - 1))) = *(ulong*)(b + 8);
            }
        }
    }

    private void UnwrapSteps(byte* b, byte* r, int k)
    {
        for (int j = 5; j >= 0; j--)
        {
            for (int i = k; i >= 1; i--)
            {
                *(ulong*)b ^= BinaryPrimitives.ReverseEndianness((ulong)((k * j) + i));
                *(ulong*)(b + 8) = *(ulong*)(r + (8 * (i - 1)));
                _cipher.Update(b, b, Block);
                *(ulong*)(r + (8 * (i - 1))) = *(ulong*)(b + 8);
            }
        }
    }

    // The integrity checks (the alternative initial value, the length, the pad bytes) as the C floor makes them.
    private int UnwrapPadded()
    {
        int padded = _length - 8;
        byte* b = stackalloc byte[Block];
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        {
            if (_length == Block)
            {
                _cipher.Update(b, input, Block);
                *(ulong*)output = *(ulong*)(b + 8);
            }
            else
            {
                *(ulong*)b = *(ulong*)input;
                Buffer.MemoryCopy(input + 8, output, padded, padded);
                UnwrapSteps(b, output, padded / 8);
            }

            uint length = BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(b + 4, 4));
            bool bad = BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(b, 4)) != 0xA65959A6
                | length <= (uint)(padded - 8) | length > (uint)padded;
            for (int p = bad ? padded : (int)length; p < padded; p++)
            {
                bad |= output[p] != 0;
            }

            return bad ? throw new CryptographicException("The native floor's unwrap failed its integrity check.") : (int)length;
        }
    }

    private int Unwrap()
    {
        int n = _length - 8;
        byte* b = stackalloc byte[Block];
        fixed (byte* input = _input)
        fixed (byte* output = _output)
        {
            *(ulong*)b = *(ulong*)input;
            Buffer.MemoryCopy(input + 8, output, n, n);
            UnwrapSteps(b, output, n / 8);
            return *(ulong*)b == 0xA6A6A6A6A6A6A6A6
                ? n
                : throw new CryptographicException("The native floor's unwrap failed its integrity check.");
        }
    }

    private static void Xor(byte* destination, byte* a, byte* b) =>
        *(System.Runtime.Intrinsics.Vector128<byte>*)destination =
            *(System.Runtime.Intrinsics.Vector128<byte>*)a ^ *(System.Runtime.Intrinsics.Vector128<byte>*)b;
}

/// <summary>
/// The floor of the Single shape, stock's own native sequence for one one-shot (its OpenSSL shim, read from
/// dotnet/runtime): a new context, init with the implicit-fetch cipher (<c>EVP_aes_256_ecb()</c> or <c>_cbc()</c>) and
/// no key, the key length, init with key and IV, padding off, one update, final, free. What any new-instance path that
/// creates a native context per call costs at least. (CachedAes's Single re-keys a pooled context instead.)
/// </summary>
internal sealed unsafe class NativeStockSequence
{
    private const int Block = 16;

    private readonly IntPtr _cipher;
    private readonly bool _encrypt;
    private readonly byte[] _input;
    private readonly byte[] _output;

    public NativeStockSequence(CipherCase call)
    {
        _cipher = call.Cbc ? Libcrypto.EVP_aes_256_cbc() : Libcrypto.EVP_aes_256_ecb();
        _encrypt = call.Encrypting;
        byte[] input = call.Encrypting ? call.PaddedPlaintext : call.Ciphertext;
        _input = GC.AllocateArray<byte>(input.Length, pinned: true);
        input.CopyTo(_input, 0);
        _output = GC.AllocateArray<byte>(input.Length + Block, pinned: true);
    }

    /// <summary>The bytes of the last <see cref="Run"/>.</summary>
    public ReadOnlySpan<byte> Output(int written) => _output.AsSpan(0, written);

    /// <summary>One call; returns the bytes written.</summary>
    public int Run()
    {
        IntPtr ctx = Libcrypto.EVP_CIPHER_CTX_new();
        try
        {
            fixed (byte* input = _input)
            fixed (byte* output = _output)
            fixed (byte* key = TestData.Key)
            fixed (byte* iv = TestData.Iv)
            {
                int final;
                if (Libcrypto.EVP_CipherInit_ex(ctx, _cipher, IntPtr.Zero, null, null, _encrypt ? 1 : 0) != 1
                    || Libcrypto.EVP_CIPHER_CTX_set_key_length(ctx, TestData.KeySizeBytes) != 1
                    || Libcrypto.EVP_CipherInit_ex(ctx, IntPtr.Zero, IntPtr.Zero, key, iv, _encrypt ? 1 : 0) != 1
                    || Libcrypto.EVP_CIPHER_CTX_set_padding(ctx, 0) != 1
                    || Libcrypto.EVP_CipherUpdate(ctx, output, &final, input, _input.Length) != 1
                    || Libcrypto.EVP_CipherFinal_ex(ctx, output + final, &final) != 1)
                {
                    throw new CryptographicException("The stock native sequence failed.");
                }

                return _input.Length;
            }
        }
        finally
        {
            Libcrypto.EVP_CIPHER_CTX_free(ctx);
        }
    }

    /// <summary>Runs once and throws unless the output equals <paramref name="expected"/>.</summary>
    public void Verify(ReadOnlySpan<byte> expected, string description)
    {
        Array.Clear(_output);
        if (!Output(Run()).SequenceEqual(expected))
        {
            throw BenchmarkCheck.Failure($"Stock's native sequence for {description} did not produce stock's output.");
        }
    }
}

/// <summary>The few libcrypto functions the floors call on Linux (<c>libcrypto.so.3</c>, the library CachedAes loads there).</summary>
internal static unsafe partial class Libcrypto
{
    private const string Library = "libcrypto.so.3";

    /// <summary>AES-256-ECB, fetched once (as CachedAes does).</summary>
    public static IntPtr Aes256Ecb { get; } = Fetch("AES-256-ECB");

    /// <summary>AES-256-CBC, fetched once.</summary>
    public static IntPtr Aes256Cbc { get; } = Fetch("AES-256-CBC");

    /// <summary>
    /// A new context keyed for <paramref name="cipher"/> and one direction. A decryption context has padding off; an
    /// encryption context keeps OpenSSL's padding on, as CachedAes's do: only <c>EVP_CipherFinal_ex</c>, never called,
    /// would add it, and an update of whole blocks writes them all. <c>EVP_CIPHER_CTX_set_padding(ctx, 0)</c> would
    /// flag the context, and OpenSSL 3 then sets padding again on every re-key (about 410 instructions), which the
    /// re-key rows must not pay when CachedAes does not.
    /// </summary>
    public static IntPtr KeyedContext(IntPtr cipher, bool encrypt, ReadOnlySpan<byte> key, ReadOnlySpan<byte> iv)
    {
        IntPtr ctx = EVP_CIPHER_CTX_new();
        fixed (byte* k = key)
        fixed (byte* v = iv)
        {
            if (ctx == IntPtr.Zero || EVP_CipherInit_ex(ctx, cipher, IntPtr.Zero, k, v, encrypt ? 1 : 0) != 1
                || (!encrypt && EVP_CIPHER_CTX_set_padding(ctx, 0) != 1))
            {
                throw new CryptographicException("Keying a libcrypto context failed.");
            }
        }

        return ctx;
    }

    /// <summary>One <c>EVP_CipherUpdate</c> of <paramref name="length"/> bytes, without the GC transition.</summary>
    public static void Update(IntPtr ctx, byte* output, byte* input, int length)
    {
        int written;
        if (EVP_CipherUpdateNoTransition(ctx, output, &written, input, length) != 1 || written != length)
        {
            Fail();
        }
    }

    private static void Fail() => throw new CryptographicException("EVP_CipherUpdate failed.");

    private static IntPtr Fetch(string name)
    {
        IntPtr cipher = EVP_CIPHER_fetch(IntPtr.Zero, name, null);
        return cipher != IntPtr.Zero ? cipher : throw new CryptographicException($"EVP_CIPHER_fetch({name}) failed.");
    }

    [LibraryImport(Library, StringMarshalling = StringMarshalling.Utf8)]
    private static partial IntPtr EVP_CIPHER_fetch(IntPtr libraryContext, string algorithm, string? properties);

    [LibraryImport(Library)]
    public static partial IntPtr EVP_aes_256_ecb();

    [LibraryImport(Library)]
    public static partial IntPtr EVP_aes_256_cbc();

    [LibraryImport(Library)]
    public static partial IntPtr EVP_CIPHER_CTX_new();

    [LibraryImport(Library)]
    public static partial void EVP_CIPHER_CTX_free(IntPtr ctx);

    [LibraryImport(Library)]
    public static partial int EVP_CIPHER_CTX_reset(IntPtr ctx);

    [LibraryImport(Library)]
    public static partial int EVP_CIPHER_CTX_set_padding(IntPtr ctx, int padding);

    [LibraryImport(Library)]
    public static partial int EVP_CIPHER_CTX_set_key_length(IntPtr ctx, int keyLength);

    [LibraryImport(Library)]
    public static partial int EVP_CipherInit_ex(IntPtr ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int encrypt);

    [LibraryImport(Library)]
    public static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);

    // The same function declared again, without the GC transition: no callbacks, locks or system calls on a keyed
    // AES context's success path (the reason CachedAes does the same; see docs/design-notes.md).
    [LibraryImport(Library, EntryPoint = "EVP_CipherUpdate")]
    [SuppressGCTransition]
    private static partial int EVP_CipherUpdateNoTransition(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);

    [LibraryImport(Library)]
    public static partial int EVP_CipherFinal_ex(IntPtr ctx, byte* output, int* outputLength);
}
