using System;
using System.Security.Cryptography;
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
/// RFC 3394 Steady: one keyed instance reused, span overloads into a preallocated destination. Rows: OpenSSL's own
/// <c>AES-256-WRAP</c> cipher on a context keyed once and reused (the baseline, through the tests' OpenSSL reference
/// <see cref="OpenSslKeyWrap"/>, a source file linked from tests/CachedAes.Tests/KeyWrap); CachedAes; the native floor
/// (<see cref="NativeFloor"/>: RFC 3394 over one ECB context, one update per AES step); and, in the .NET 11 job only,
/// stock .NET 11's <c>Aes.EncryptKeyWrap</c>/<c>DecryptKeyWrap</c> (.NET 10 has no RFC 3394). On .NET 11 CachedAes is
/// called as a net11.0 app calls it, through <c>Aes</c>'s own members, which run CachedAes's cores. OpenSSL only: the
/// baseline and the setup's check are OpenSSL's wrap cipher (elsewhere the class is left out, <see cref="FloorRowAttribute"/>).
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[FloorRow(openSslOnly: true)]
[Net11Only(nameof(Stock))]
public class Rfc3394Steady
{
    private Aes? _aes;
    private OpenSslKeyWrap.Context? _openSsl;
    private NativeFloor? _floor;
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

    /// <summary>Keys one CachedAes instance and checks what is measured against OpenSSL.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => SetupInstance(CachedAes.Create());

    /// <summary>Keys one stock instance (.NET 11) and checks what is measured against OpenSSL.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => SetupInstance(Aes.Create());

    /// <summary>Keys the floor's ECB context and checks its output against OpenSSL's.</summary>
    [GlobalSetup(Target = nameof(Floor))]
    public void SetupFloor()
    {
        Prepare();
        _floor = NativeFloor.ForKeyWrap(Operation == Rfc3394Operation.EncryptKeyWrap, padded: false, _input);
        _floor.Verify(_expected, $"RFC 3394 {Operation} of {Length} bytes");
    }

    /// <summary>Frees the context, the floor or the instance.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _openSsl?.Dispose();
        _floor?.Dispose();
        _aes?.Dispose();
    }

    /// <summary>OpenSSL's <c>AES-256-WRAP</c>: one <c>EVP_CipherUpdate</c> on a cached context (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int OpenSslWrapCipher() => _openSsl!.TryUpdate(_input, _destination, out int written)
        ? written
        : throw new InvalidOperationException("EVP_CipherUpdate on the wrap cipher failed.");

    /// <summary>CachedAes's RFC 3394 on its cached ECB handle.</summary>
    [Benchmark]
    public int Cached() => Run((CachedAes)_aes!);

    /// <summary>Stock .NET 11's RFC 3394 (the .NET 11 job only).</summary>
    [Benchmark]
    public int Stock() => RunStock(_aes!);

    /// <summary>The native floor: RFC 3394 over one ECB context, one update per AES step through the cheapest P/Invoke.</summary>
    [Benchmark]
    public int Floor() => _floor!.Run();

    // On .NET 10 the members are CachedAes's own; on .NET 11 they are Aes's (CachedAes overrides the cores), so this
    // compiles to the call a net11.0 app makes.
    private int Run(CachedAes aes)
    {
        if (Operation == Rfc3394Operation.EncryptKeyWrap)
        {
            aes.EncryptKeyWrap(_input, _destination.AsSpan(0, _input.Length + 8));
            return _input.Length + 8;
        }

        return aes.DecryptKeyWrap(_input, _destination);
    }

#if NET11_0_OR_GREATER
    private int RunStock(Aes aes)
    {
        if (Operation == Rfc3394Operation.EncryptKeyWrap)
        {
            aes.EncryptKeyWrap(_input, _destination.AsSpan(0, _input.Length + 8));
            return _input.Length + 8;
        }

        return aes.DecryptKeyWrap(_input, _destination);
    }
#else
    private static int RunStock(Aes aes) => throw new PlatformNotSupportedException(
        $"{aes.GetType().Name}: .NET 10 has no RFC 3394; this case runs in the .NET 11 job only ({nameof(Net11OnlyAttribute)}).");
#endif

    private void SetupInstance(Aes aes)
    {
        Prepare();
        aes.SetKey(TestData.Key);
        _aes = aes;
        Array.Clear(_destination);
        int written = aes is CachedAes cached ? Run(cached) : RunStock(aes);
        if (!_destination.AsSpan(0, written).SequenceEqual(_expected))
        {
            throw BenchmarkCheck.Failure($"{aes.GetType().Name} gives a wrong RFC 3394 {Operation} of {Length} bytes.");
        }
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
