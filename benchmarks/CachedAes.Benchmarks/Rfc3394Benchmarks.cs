using System;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using CachedCryptography.Tests;

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
/// Linux only: the baseline is libcrypto.so.3, through the tests' OpenSSL reference (<see cref="OpenSslKeyWrap"/>, a
/// source file linked from tests/CachedAes.Tests/KeyWrap).
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[OperatingSystemsFilter(true, OS.Linux)]
public class Rfc3394Steady
{
    private CachedAes? _aes;
    private OpenSslKeyWrap.Context? _openSsl;
    private byte[] _input = [];
    private byte[] _expected = [];
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
        _openSsl = new OpenSslKeyWrap.Context(TestData.Key, encrypt: Operation == Rfc3394Operation.EncryptKeyWrap);
        if (!_destination.AsSpan(0, OpenSslWrapCipher()).SequenceEqual(_expected))
        {
            throw new InvalidOperationException($"The measured OpenSSL context gives a wrong {Operation} of {Length} bytes.");
        }
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
    public int OpenSslWrapCipher() => _openSsl!.TryUpdate(_input, _destination, out int written)
        ? written
        : throw new InvalidOperationException("EVP_CipherUpdate on the wrap cipher failed.");

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
        {
            aes.SetKey(TestData.Key);
            wrapped = aes.EncryptKeyWrap(plaintext);
            if (!OpenSslKeyWrap.Wrap(TestData.Key, plaintext).AsSpan().SequenceEqual(wrapped))
            {
                throw new InvalidOperationException($"CachedAes and OpenSSL wrap {Length} bytes differently.");
            }

            if (!OpenSslKeyWrap.Unwrap(TestData.Key, wrapped).AsSpan().SequenceEqual(plaintext) || !aes.DecryptKeyWrap(wrapped).AsSpan().SequenceEqual(plaintext))
            {
                throw new InvalidOperationException($"Unwrapping {Length} bytes did not give the plaintext back.");
            }
        }

        (_input, _expected) = Operation == Rfc3394Operation.EncryptKeyWrap ? (plaintext, wrapped) : (wrapped, plaintext);

        // OpenSSL is given room for one more block than the result; CachedAes's wrap gets exactly the result length.
        _destination = GC.AllocateArray<byte>(_input.Length + 16, pinned: true);
    }
}
