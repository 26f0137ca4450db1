using System;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>The RFC 3394 (key wrap without padding) operation measured.</summary>
public enum Rfc3394Operation
{
    /// <summary><c>CachedAes.EncryptKeyWrap(ReadOnlySpan&lt;byte&gt;, Span&lt;byte&gt;)</c>; OpenSSL: one update on an encrypt context.</summary>
    EncryptKeyWrap,

    /// <summary><c>CachedAes.DecryptKeyWrap(ReadOnlySpan&lt;byte&gt;, Span&lt;byte&gt;)</c>; OpenSSL: one update on a decrypt context.</summary>
    DecryptKeyWrap,
}

/// <summary>
/// RFC 3394 Steady: one keyed instance reused, span overloads into a preallocated destination, against OpenSSL's own
/// <c>AES-256-WRAP</c> cipher on a context keyed once and reused (.NET 10 has no stock RFC 3394 API to compare with).
/// Linux only: the baseline is libcrypto.so.3.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[OperatingSystemsFilter(true, OS.Linux)]
public class Rfc3394Steady
{
    private CachedAes? _aes;
    private OpenSslWrapContext? _openSsl;
    private byte[] _input = [];
    private byte[] _destination = [];

    /// <summary>Wrap or unwrap.</summary>
    [ParamsAllValues]
    public Rfc3394Operation Operation { get; set; }

    /// <summary>Plaintext (key data) length in bytes.</summary>
    [Params(16, 32, 4096)]
    public int Length { get; set; }

    /// <summary>Keys one OpenSSL context and checks it against CachedAes (and CachedAes against it).</summary>
    [GlobalSetup(Target = nameof(OpenSslWrapCipher))]
    public void SetupOpenSsl()
    {
        Prepare();
        _openSsl = new OpenSslWrapContext(TestData.Key, encrypt: Operation == Rfc3394Operation.EncryptKeyWrap);
    }

    /// <summary>Keys one CachedAes instance and checks it against OpenSSL.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached()
    {
        Prepare();
        _aes = CachedAes.Create();
        _aes.SetKey(TestData.Key);
    }

    /// <summary>Frees the context or the instance.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _openSsl?.Dispose();
        _aes?.Dispose();
    }

    /// <summary>OpenSSL's <c>AES-256-WRAP</c>: one <c>EVP_CipherUpdate</c> on a cached context (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int OpenSslWrapCipher() => _openSsl!.Run(_input, _destination);

    /// <summary>CachedAes's RFC 3394 on its cached ECB handle.</summary>
    [Benchmark]
    public int Cached()
    {
        if (Operation == Rfc3394Operation.EncryptKeyWrap)
        {
            _aes!.EncryptKeyWrap(_input, _destination.AsSpan(0, _input.Length + 8));
            return _input.Length + 8;
        }

        return _aes!.DecryptKeyWrap(_input, _destination);
    }

    // Inputs for the current parameters, and a check, with both implementations on fresh state, that they agree
    // on the wrap and that each unwraps it: a benchmark of a wrong result fails here instead of being measured.
    private void Prepare()
    {
        byte[] plaintext = TestData.Fill(Length, Length + 3394);
        byte[] wrapped;

        using (CachedAes aes = CachedAes.Create())
        using (var openSslEncrypt = new OpenSslWrapContext(TestData.Key, encrypt: true))
        using (var openSslDecrypt = new OpenSslWrapContext(TestData.Key, encrypt: false))
        {
            aes.SetKey(TestData.Key);
            wrapped = aes.EncryptKeyWrap(plaintext);
            byte[] openSslWrapped = new byte[Length + 8 + 16];
            int written = openSslEncrypt.Run(plaintext, openSslWrapped);

            if (!openSslWrapped.AsSpan(0, written).SequenceEqual(wrapped))
            {
                throw new InvalidOperationException($"CachedAes and OpenSSL wrap {Length} bytes differently.");
            }

            byte[] openSslUnwrapped = new byte[Length + 16];
            written = openSslDecrypt.Run(wrapped, openSslUnwrapped);

            if (!openSslUnwrapped.AsSpan(0, written).SequenceEqual(plaintext) || !aes.DecryptKeyWrap(wrapped).AsSpan().SequenceEqual(plaintext))
            {
                throw new InvalidOperationException($"Unwrapping {Length} bytes did not give the plaintext back.");
            }
        }

        _input = Operation == Rfc3394Operation.EncryptKeyWrap ? plaintext : wrapped;

        // OpenSSL is given room for one more block than the result; CachedAes's wrap gets exactly the result length.
        _destination = GC.AllocateArray<byte>(_input.Length + 16, pinned: true);
    }
}

/// <summary>
/// Benchmark-only: one OpenSSL 3 <c>AES-256-WRAP</c> (RFC 3394, default IV) context keyed once and reused for every
/// message (the wrap cipher keeps no state between updates). <c>EVP_CIPHER_CTX_FLAG_WRAP_ALLOW</c> is set before init.
/// </summary>
internal sealed unsafe partial class OpenSslWrapContext : IDisposable
{
    private const string Libcrypto = "libcrypto.so.3";
    private const int EvpCipherCtxFlagWrapAllow = 0x1;

    private static readonly IntPtr s_cipher = Fetch();
    private IntPtr _ctx;

    public OpenSslWrapContext(ReadOnlySpan<byte> key, bool encrypt)
    {
        _ctx = EVP_CIPHER_CTX_new();
        if (_ctx == IntPtr.Zero)
        {
            throw new InvalidOperationException("EVP_CIPHER_CTX_new failed.");
        }

        EVP_CIPHER_CTX_set_flags(_ctx, EvpCipherCtxFlagWrapAllow);

        fixed (byte* k = key)
        {
            // A NULL IV: RFC 3394's default initial value A6A6A6A6A6A6A6A6.
            if (EVP_CipherInit_ex(_ctx, s_cipher, IntPtr.Zero, k, null, encrypt ? 1 : 0) != 1)
            {
                Dispose();
                throw new InvalidOperationException("EVP_CipherInit_ex(AES-256-WRAP) failed.");
            }
        }
    }

    /// <summary>One wrap or unwrap of <paramref name="input"/> into <paramref name="output"/> (input length + 16 bytes).</summary>
    public int Run(byte[] input, byte[] output)
    {
        fixed (byte* i = input)
        fixed (byte* o = output)
        {
            if (EVP_CipherUpdate(_ctx, o, out int written, i, input.Length) != 1)
            {
                throw new InvalidOperationException("EVP_CipherUpdate on the wrap cipher failed.");
            }

            return written;
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

    private static IntPtr Fetch()
    {
        IntPtr cipher = EVP_CIPHER_fetch(IntPtr.Zero, "AES-256-WRAP", null);
        return cipher != IntPtr.Zero ? cipher : throw new InvalidOperationException("EVP_CIPHER_fetch(AES-256-WRAP) failed.");
    }

    [LibraryImport(Libcrypto, StringMarshalling = StringMarshalling.Utf8)]
    private static partial IntPtr EVP_CIPHER_fetch(IntPtr libraryContext, string algorithm, string? properties);

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
}
