using System;
using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Org.BouncyCastle.Crypto;
using Org.BouncyCastle.Crypto.Modes;
using Org.BouncyCastle.Crypto.Parameters;

namespace CachedCryptography.Benchmarks;

/// <summary>How the code measured by <see cref="PerMessage"/> gets its <c>Aes</c> for each 16-byte AES-256-CBC message.</summary>
public enum MessageShape
{
    /// <summary><c>using Aes aes = Create(); aes.SetKey(key);</c> one <c>TryEncryptCbc</c> (ASP.NET Core Data Protection's
    /// shape: a new instance and a new key per message).</summary>
    NewInstance,

    /// <summary>One kept instance, <c>aes.SetKey(key)</c> with another key per message, one <c>TryEncryptCbc</c>
    /// (envelope encryption: a data key per record).</summary>
    NewKey,

    /// <summary><c>using Aes aes = Create(); aes.Key = key; aes.IV = iv;</c>, <c>aes.CreateEncryptor()</c> and one
    /// <c>TransformFinalBlock</c>; the transform is not disposed (the Microsoft Learn sample hands it to a
    /// <c>CryptoStream</c>, which never disposes it).</summary>
    LearnSample,

    /// <summary><c>Aes aes = Create(); aes.SetKey(key);</c> one <c>TryEncryptCbc</c>, and the instance is dropped, never
    /// disposed (IdentityModel never releases its key-wrap providers): the collector finalizes what it holds.</summary>
    NeverDisposed,
}

/// <summary>
/// A message under a new key (<see cref="MessageShape"/>), where a kept keyed handle cannot help: stock <c>Aes.Create()</c>
/// (baseline) against CachedAes, the least native work of the platform's library (<see cref="NativeRekey"/>), the least any
/// <c>Aes</c> subclass with CachedAes's key hygiene pays (<see cref="SubclassFloorAes"/>), and BouncyCastle's managed AES. Every
/// message uses the next of 64 keys, so no key is ever the one already set. Each method's global setup checks its first
/// messages against stock's.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Shape), MessageShape.NewInstance, MessageShape.NewKey, MessageShape.LearnSample)]
public class PerMessage
{
    private const int Keys = 64;
    private readonly byte[][] _keys = new byte[Keys][];
    private readonly byte[][] _expected = new byte[Keys][];
    private readonly byte[] _plaintext = TestData.Fill(16, 0x3C);
    private readonly byte[] _destination = new byte[32];
    private Aes? _kept;
    private NativeRekey? _native;
    private BouncyCastleCbc? _bouncyCastle;
    private int _next;

    /// <summary>How the instance and key are had per message.</summary>
    [ParamsAllValues]
    public MessageShape Shape { get; set; }

    /// <summary>Prepares the keys and stock's ciphertext for each, and checks stock.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(Aes.Create, "Stock");

    /// <summary>Prepares the keys and checks CachedAes.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached()
    {
        BenchmarkSetup.CheckCachedBackend();
        Setup(CachedAes.Create, "Cached");
    }

    /// <summary>Prepares the native re-key of one context (OpenSSL) and checks it.</summary>
    [GlobalSetup(Target = nameof(LeastNativeWork))]
    public void SetupLeastNativeWork()
    {
        PrepareKeys();
        _native = new NativeRekey();
        CheckEveryKey(key => _native.Run(_keys[key], TestData.Iv, _plaintext, _destination), "the least native work");
    }

    /// <summary>Prepares the subclass floor and checks it.</summary>
    [GlobalSetup(Target = nameof(SubclassFloor))]
    public void SetupSubclassFloor()
    {
        SubclassFloorAes.AllocateContext();
        Setup(SubclassFloorAes.Create, "the subclass floor");
    }

    /// <summary>Prepares BouncyCastle's CBC over its AES engine and checks it.</summary>
    [GlobalSetup(Target = nameof(BouncyCastle))]
    public void SetupBouncyCastle()
    {
        PrepareKeys();
        _bouncyCastle = new BouncyCastleCbc();
        CheckEveryKey(key => _bouncyCastle.Run(Shape != MessageShape.NewKey, _keys[key], TestData.Iv, _plaintext, _destination), "BouncyCastle");
    }

    /// <summary>Frees the kept instance and native context.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _kept?.Dispose();
        _native?.Dispose();
        SubclassFloorAes.FreeContext();
    }

    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Stock() => Run(Aes.Create);

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public int Cached() => Run(CachedAes.Create);

    /// <summary>
    /// The least native work for one message under a new key, the same in every shape, through the cheapest P/Invoke: on
    /// OpenSSL one context that keeps its cipher, re-keyed with <c>EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, 1)</c>, and
    /// one <c>EVP_CipherUpdate</c> of the padded message; on CNG and CommonCrypto, which cannot re-key, a key or cryptor
    /// made from the new key, one encryption and its release (<see cref="PlatformFloor.EncryptCbcUnderNewKey"/>).
    /// </summary>
    [Benchmark]
    [FloorRow]
    public int LeastNativeWork() => _native!.Run(NextKey(), TestData.Iv, _plaintext, _destination);

    /// <summary>
    /// The least any <c>Aes</c> subclass over the platform's library pays for the shape while keeping CachedAes's promise
    /// that no key schedule outlives its use (<see cref="SubclassFloorAes"/>): the <c>Aes</c> base class doing what it does
    /// for every subclass (constructor, key size check, IV copies, <c>Dispose</c>), the key in a field of the object with a
    /// finalizer to zero it if dropped, and per message on OpenSSL one keyless context keyed with the cipher, updated once
    /// and reset (cleansed), on CNG and CommonCrypto a key or cryptor made, used once and released. No native key memory,
    /// no cache, no concurrency guard.
    /// </summary>
    [Benchmark]
    [FloorRow]
    public int SubclassFloor() => Run(SubclassFloorAes.Create);

    /// <summary>
    /// BouncyCastle.Cryptography's CBC over its AES engine (<c>AesUtilities.CreateEngine()</c>: <c>AesEngine_X86</c>
    /// where the CPU has AES instructions): a new cipher object per message, or (<see cref="MessageShape.NewKey"/>) one
    /// kept cipher object re-initialised with the new key.
    /// </summary>
    [Benchmark]
    public int BouncyCastle() => _bouncyCastle!.Run(Shape != MessageShape.NewKey, NextKey(), TestData.Iv, _plaintext, _destination);

    private int Run(Func<Aes> create)
    {
        byte[] key = NextKey();
        switch (Shape)
        {
            case MessageShape.NewInstance:
            {
                using Aes aes = create();
                aes.SetKey(key);
                return aes.EncryptCbc(_plaintext, TestData.Iv, _destination);
            }

            case MessageShape.NewKey:
                _kept!.SetKey(key);
                return _kept.EncryptCbc(_plaintext, TestData.Iv, _destination);
            case MessageShape.LearnSample:
            {
                using Aes aes = create();
                aes.Key = key;
                aes.IV = TestData.Iv;
                ICryptoTransform encryptor = aes.CreateEncryptor();
                return encryptor.TransformFinalBlock(_plaintext, 0, _plaintext.Length).Length;
            }

            default:
            {
                Aes aes = create();
                aes.SetKey(key);
                return aes.EncryptCbc(_plaintext, TestData.Iv, _destination);
            }
        }
    }

    private byte[] NextKey() => _keys[_next = (_next + 1) & (Keys - 1)];

    private void Setup(Func<Aes> create, string implementation)
    {
        PrepareKeys();
        _kept = Shape == MessageShape.NewKey ? create() : null;
        CheckEveryKey(
            key =>
            {
                _next = (key - 1) & (Keys - 1);
                if (Shape == MessageShape.LearnSample)
                {
                    using Aes aes = create();
                    aes.Key = _keys[key];
                    aes.IV = TestData.Iv;
                    byte[] ciphertext = aes.CreateEncryptor().TransformFinalBlock(_plaintext, 0, _plaintext.Length);
                    ciphertext.CopyTo(_destination, 0);
                    return ciphertext.Length;
                }

                return Run(create);
            },
            implementation);
    }

    private void PrepareKeys()
    {
        using Aes stock = Aes.Create();
        for (int i = 0; i < Keys; i++)
        {
            _keys[i] = TestData.Fill(TestData.KeySizeBytes, 0x700 + i);
            stock.Key = _keys[i];
            _expected[i] = stock.EncryptCbc(_plaintext, TestData.Iv);
        }
    }

    private void CheckEveryKey(Func<int, int> run, string implementation)
    {
        for (int key = 0; key < Keys; key++)
        {
            Array.Clear(_destination);
            int written = run(key);
            if (!_destination.AsSpan(0, written).SequenceEqual(_expected[key]))
            {
                throw BenchmarkCheck.Failure($"{implementation} ({Shape}) did not produce stock's ciphertext under key {key}.");
            }
        }

        _next = 0;
    }

    /// <summary>
    /// An <c>Aes</c> that does nothing of its own beyond what every subclass and the native minimum need: the base
    /// class's constructor, key size check and <c>Dispose</c>; the key kept in a field of the object (no allocation;
    /// CachedAes cannot do this, the collector may move and copy such a field), zeroed on <c>Dispose</c> or, for an
    /// instance or transform dropped without it, by a finalizer (the plainest way a subclass zeroes a dropped key; CachedAes
    /// used one finalizable object per key until 2026-11-27, and now finds dropped keys through weak handles after each
    /// collection); and per AES-256-CBC encryption one keyless context keyed with the cipher, updated once and reset, so no
    /// key schedule is left behind (what CachedAes's pooled contexts do per new key). One context for the process, used
    /// by one thread at a time here (the benchmark is single-threaded). On CNG and CommonCrypto, which cannot re-key, a key
    /// or cryptor made from the key, used once and released (<see cref="PlatformFloor.EncryptCbcUnderNewKey"/>): what their
    /// backends pay per new key. Only what the per-message shapes call is implemented.
    /// </summary>
    private sealed unsafe class SubclassFloorAes : Aes
    {
        // Made by the benchmark's setup and freed by its cleanup (in the quick mode every benchmark runs in one process).
        private static IntPtr s_ctx;
        private KeyBytes _key;
        private int _keyLength;

        ~SubclassFloorAes() => ((Span<byte>)_key).Clear();

        public static new SubclassFloorAes Create() => new();

        public override byte[] Key
        {
            get => ((ReadOnlySpan<byte>)_key)[.._keyLength].ToArray();
            set => SetKey(value);
        }

        // CachedAes's cheaper key size check (a new array without Array.Clone), so the floor is what CachedAes could reach.
        public override KeySizes[] LegalKeySizes => [.. LegalKeySizesValue!];

        public static void AllocateContext()
        {
            FreeContext();
            if (!PlatformFloor.IsOpenSsl)
            {
                return; // CNG and CommonCrypto: nothing kept between messages
            }

            s_ctx = Libcrypto.EVP_CIPHER_CTX_new();
            if (s_ctx == IntPtr.Zero)
            {
                throw new CryptographicException("EVP_CIPHER_CTX_new failed.");
            }
        }

        public static void FreeContext()
        {
            if (s_ctx != IntPtr.Zero)
            {
                Libcrypto.EVP_CIPHER_CTX_free(s_ctx);
                s_ctx = IntPtr.Zero;
            }
        }

        // The transform needs a key of its own (it outlives the instance): a copy, as stock's transforms make.
        public override ICryptoTransform CreateEncryptor() => new Encryptor(Key, IV);

        public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => new Encryptor((byte[])rgbKey.Clone(), rgbIV!);

        public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => throw new NotSupportedException();

        public override void GenerateIV() => IVValue = RandomNumberGenerator.GetBytes(16);

        public override void GenerateKey() => SetKey(RandomNumberGenerator.GetBytes(KeySizeValue / 8));

        protected override void SetKeyCore(ReadOnlySpan<byte> key)
        {
            key.CopyTo(_key);
            _keyLength = key.Length;
            KeySizeValue = 8 * key.Length;
        }

        protected override bool TryEncryptCbcCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
        {
            bytesWritten = Encrypt(((ReadOnlySpan<byte>)_key)[.._keyLength], iv, plaintext, destination);
            return true;
        }

        protected override void Dispose(bool disposing)
        {
            ((Span<byte>)_key).Clear();
            base.Dispose(disposing);
        }

        // One whole block of plaintext, PKCS7-padded to two.
        private static int Encrypt(ReadOnlySpan<byte> key, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> plaintext, Span<byte> destination)
        {
            Span<byte> padded = stackalloc byte[32];
            plaintext.CopyTo(padded);
            padded[16..].Fill(16);
            fixed (byte* k = key)
            fixed (byte* v = iv)
            fixed (byte* input = padded)
            fixed (byte* output = destination)
            {
                if (!PlatformFloor.IsOpenSsl)
                {
                    PlatformFloor.EncryptCbcUnderNewKey(k, key.Length, v, input, output, 32);
                    return 32;
                }

                if (Libcrypto.EVP_CipherInit_ex(s_ctx, Libcrypto.Aes256Cbc, IntPtr.Zero, k, v, 1) != 1)
                {
                    throw new CryptographicException("EVP_CipherInit_ex failed.");
                }

                Libcrypto.Update(s_ctx, output, input, 32);
                if (Libcrypto.EVP_CIPHER_CTX_reset(s_ctx) != 1)
                {
                    throw new CryptographicException("EVP_CIPHER_CTX_reset failed.");
                }
            }

            return 32;
        }

        [System.Runtime.CompilerServices.InlineArray(32)]
        private struct KeyBytes
        {
            private byte _first;
        }

        // The transform the Learn sample shape makes: it keeps its own copies of the key and IV.
        private sealed class Encryptor(byte[] key, byte[] iv) : ICryptoTransform
        {
            ~Encryptor() => CryptographicOperations.ZeroMemory(key);

            public int InputBlockSize => 16;

            public int OutputBlockSize => 16;

            public bool CanTransformMultipleBlocks => true;

            public bool CanReuseTransform => true;

            public int TransformBlock(byte[] inputBuffer, int inputOffset, int inputCount, byte[] outputBuffer, int outputOffset) =>
                throw new NotSupportedException();

            public byte[] TransformFinalBlock(byte[] inputBuffer, int inputOffset, int inputCount)
            {
                byte[] output = new byte[32];
                Encrypt(key, iv, inputBuffer.AsSpan(inputOffset, inputCount), output);
                return output;
            }

            public void Dispose()
            {
                CryptographicOperations.ZeroMemory(key);
                GC.SuppressFinalize(this);
            }
        }
    }

    /// <summary>
    /// One OpenSSL AES-256-CBC encryption context keyed once; each message re-keys it and encrypts. On CNG and
    /// CommonCrypto, which cannot re-key a key or cryptor, each message makes one, encrypts and releases it.
    /// </summary>
    internal sealed unsafe class NativeRekey : IDisposable
    {
        private readonly IntPtr _ctx = PlatformFloor.IsOpenSsl
            ? Libcrypto.KeyedContext(Libcrypto.Aes256Cbc, encrypt: true, TestData.Key, TestData.Iv)
            : IntPtr.Zero;
        private readonly byte[] _padded = GC.AllocateArray<byte>(32, pinned: true);

        public int Run(byte[] key, byte[] iv, byte[] plaintext, byte[] destination)
        {
            plaintext.CopyTo(_padded, 0);
            _padded.AsSpan(16).Fill(16); // PKCS7 of a whole block
            fixed (byte* k = key)
            fixed (byte* v = iv)
            fixed (byte* input = _padded)
            fixed (byte* output = destination)
            {
                if (!PlatformFloor.IsOpenSsl)
                {
                    PlatformFloor.EncryptCbcUnderNewKey(k, key.Length, v, input, output, 32);
                    return 32;
                }

                if (Libcrypto.EVP_CipherInit_ex(_ctx, IntPtr.Zero, IntPtr.Zero, k, v, 1) != 1)
                {
                    throw new CryptographicException("EVP_CipherInit_ex failed.");
                }

                Libcrypto.Update(_ctx, output, input, 32);
            }

            return 32;
        }

        public void Dispose()
        {
            if (_ctx != IntPtr.Zero)
            {
                Libcrypto.EVP_CIPHER_CTX_free(_ctx);
            }
        }
    }

    /// <summary>BouncyCastle's CBC over its AES engine, PKCS7 padding done by hand (one block).</summary>
    private sealed class BouncyCastleCbc
    {
        private readonly IBlockCipher _kept = new CbcBlockCipher(AesUtilities.CreateEngine());
        private readonly byte[] _padded = new byte[32];

        public int Run(bool newCipher, byte[] key, byte[] iv, byte[] plaintext, byte[] destination)
        {
            IBlockCipher cipher = newCipher ? new CbcBlockCipher(AesUtilities.CreateEngine()) : _kept;
            cipher.Init(true, new ParametersWithIV(new KeyParameter(key), iv));
            plaintext.CopyTo(_padded, 0);
            _padded.AsSpan(16).Fill(16);
            cipher.ProcessBlock(_padded, 0, destination, 0);
            cipher.ProcessBlock(_padded, 16, destination, 16);
            return 32;
        }
    }
}
