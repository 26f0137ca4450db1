using System;
using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// What the <c>Aes</c> API itself adds to a message under a new key on a kept instance (<see cref="MessageShape.NewKey"/>):
/// the least native work (<see cref="Native"/>, the baseline: one OpenSSL AES-256-CBC context that keeps its cipher,
/// re-keyed with <c>EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, 1)</c>, and one <c>EVP_CipherUpdate</c> of the padded
/// message, as <c>PerMessage.LeastNativeWork</c>), the same native work behind <c>SetKey</c> and <c>EncryptCbc</c> of an
/// <c>Aes</c> subclass that does nothing else (<see cref="ApiFloor"/>, benchmarks/Shared/ApiFloorAes.cs), and CachedAes (<see cref="Cached"/>). Every message
/// uses the next of 64 keys. OpenSSL only: CNG and CommonCrypto cannot re-key a key object.
/// </summary>
/// <remarks>
/// <see cref="ApiFloor"/> is a floor, not a usable <c>Aes</c>: its key sits in a managed array, it shares one native
/// context between instances and threads, and it keeps no promise about key schedules. It is what any <c>Aes</c>
/// subclass pays at least for this shape on top of the native work: the base class's key size check (a
/// <c>LegalKeySizes</c> array per <c>SetKey</c>), its argument checks of <c>EncryptCbc</c>, and the virtual calls.
/// </remarks>
[MemoryDiagnoser]
[FloorRow(openSslOnly: true)]
public class NewKeyApiFloor
{
    private const int Keys = 64;
    private readonly byte[][] _keys = new byte[Keys][];
    private readonly byte[] _plaintext = TestData.Fill(16, 0x3C);
    private readonly byte[] _destination = new byte[32];
    private Aes? _cached;
    private ApiFloorAes? _floor;
    private PerMessage.NativeRekey? _native;
    private IntPtr _ctx;
    private int _next;

    /// <summary>Makes the keys, the context and both instances, and checks each row's ciphertext against stock's for every key.</summary>
    [GlobalSetup]
    public void Setup()
    {
        using Aes stock = Aes.Create();
        byte[][] expected = new byte[Keys][];
        for (int i = 0; i < Keys; i++)
        {
            _keys[i] = TestData.Fill(32, 0x100 + i);
            stock.Key = _keys[i];
            expected[i] = stock.EncryptCbc(_plaintext, TestData.Iv);
        }

        _native = new PerMessage.NativeRekey();
        _ctx = Libcrypto.KeyedContext(Libcrypto.Aes256Cbc, encrypt: true, TestData.Key, TestData.Iv);
        _cached = CachedAes.Create();
        _floor = new ApiFloorAes(_ctx);
        Check(Native, expected, nameof(Native));
        Check(ApiFloor, expected, nameof(ApiFloor));
        Check(Cached, expected, nameof(Cached));
    }

    /// <summary>Frees the context and the instances.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _cached?.Dispose();
        _floor?.Dispose();
        _native?.Dispose();
        if (_ctx != IntPtr.Zero)
        {
            Libcrypto.EVP_CIPHER_CTX_free(_ctx);
            _ctx = IntPtr.Zero;
        }
    }

    /// <summary>The least native work for the message (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Native() => _native!.Run(NextKey(), TestData.Iv, _plaintext, _destination);

    /// <summary>The same native work behind the <c>Aes</c> API, and nothing else.</summary>
    [Benchmark]
    public int ApiFloor()
    {
        _floor!.SetKey(NextKey());
        return _floor.EncryptCbc(_plaintext, TestData.Iv, _destination);
    }

    /// <summary>A kept CachedAes given the next key before each message.</summary>
    [Benchmark]
    public int Cached()
    {
        _cached!.SetKey(NextKey());
        return _cached.EncryptCbc(_plaintext, TestData.Iv, _destination);
    }

    private byte[] NextKey() => _keys[_next = (_next + 1) & (Keys - 1)];

    private void Check(Func<int> row, byte[][] expected, string name)
    {
        for (int i = 0; i < Keys; i++)
        {
            _next = (i - 1) & (Keys - 1);
            if (row() != 32 || !_destination.AsSpan().SequenceEqual(expected[i]))
            {
                throw new InvalidOperationException($"{name} differs from stock under key {i}.");
            }
        }

        _next = 0;
    }
}
