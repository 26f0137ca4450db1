using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// The shapes real code uses transforms in, each run with stock <see cref="Aes"/> and with CachedAes on the same keys
/// and IVs: the Microsoft Learn sample, Microsoft.Data.SqlClient's Always Encrypted pool, transforms that outlive their
/// instance and its later changes, and one instance shared by several threads. The benchmarks time these clients'
/// shapes too (TransformShapes; benchmarks/CachedAes.Benchmarks/README.md).
/// </summary>
public class TransformClientPatternTests
{
    /// <summary>Backend × mode rows, as <see cref="TransformDifferentialTests.BackendModes"/>.</summary>
    public static TheoryData<string, CipherMode, int> BackendModes() => TransformDifferentialTests.BackendModes();

    /// <summary>
    /// The Microsoft Learn sample's shape, written here from its description: a new instance, Key and IV set,
    /// <c>CreateEncryptor(aes.Key, aes.IV)</c> (never disposed, as in the sample), a CryptoStream in write mode with a
    /// StreamWriter over a MemoryStream; decryption with CreateDecryptor, a CryptoStream in read mode and a StreamReader.
    /// </summary>
    internal static class LearnSample
    {
        public static byte[] EncryptString(Func<Aes> create, string text, byte[] key, byte[] iv)
        {
            using Aes aes = create();
            aes.Key = key;
            aes.IV = iv;
            ICryptoTransform encryptor = aes.CreateEncryptor(aes.Key, aes.IV);
            using var buffer = new MemoryStream();
            using (var crypto = new CryptoStream(buffer, encryptor, CryptoStreamMode.Write))
            using (var writer = new StreamWriter(crypto))
            {
                writer.Write(text);
            }

            return buffer.ToArray();
        }

        public static string DecryptString(Func<Aes> create, byte[] ciphertext, byte[] key, byte[] iv)
        {
            using Aes aes = create();
            aes.Key = key;
            aes.IV = iv;
            ICryptoTransform decryptor = aes.CreateDecryptor(aes.Key, aes.IV);
            using var buffer = new MemoryStream(ciphertext);
            using var crypto = new CryptoStream(buffer, decryptor, CryptoStreamMode.Read);
            using var reader = new StreamReader(crypto);
            return reader.ReadToEnd();
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Microsoft_Learn_sample_round_trips_and_matches_stock_byte_for_byte(string backend)
    {
        var rng = new Random(TransformDifferentialTests.Seed + 31);
        string[] texts =
        [
            "",
            "Here is some data to encrypt!",
            "exactly 16 bytes",
            "Grüße, 世界 — 🙂 multi-byte UTF-8 text",
            new string('x', 5000),
            string.Concat(Enumerable.Range(0, 300).Select(i => (char)('a' + rng.Next(26)))),
        ];
        Func<Aes> cached = () => BackendData.Create(backend);
        foreach (string text in texts)
        {
            foreach (int keyBytes in TransformConfig.KeySizes)
            {
                byte[] key = Shapes.Bytes(rng, keyBytes);
                byte[] iv = Shapes.Bytes(rng, 16);
                byte[] byStock = LearnSample.EncryptString(Aes.Create, text, key, iv);
                byte[] byCached = LearnSample.EncryptString(cached, text, key, iv);
                Assert.Equal(byStock, byCached);
                Assert.Equal(text, LearnSample.DecryptString(cached, byStock, key, iv));
                Assert.Equal(text, LearnSample.DecryptString(Aes.Create, byCached, key, iv));

                // The wrong key: whatever stock does (almost always bad padding), CachedAes does.
                byte[] wrongKey = Shapes.Bytes(rng, keyBytes);
                Observed s = Side.Call(() => Encoding.UTF8.GetBytes(LearnSample.DecryptString(Aes.Create, byStock, wrongKey, iv)));
                Observed c = Side.Call(() => Encoding.UTF8.GetBytes(LearnSample.DecryptString(cached, byStock, wrongKey, iv)));
                Assert.True(Side.Difference(s, c) is null, $"wrong key, {text.Length} chars: {Side.Difference(s, c)}");
            }
        }
    }

    /// <summary>
    /// Microsoft.Data.SqlClient's Always Encrypted shape, written here from its description: a pool of instances per column
    /// encryption key (made once, keyed once, CBC + PKCS7); per cell an instance is taken, its IV set, then
    /// <c>CreateEncryptor()</c> + TransformBlock over every whole block + TransformFinalBlock over the rest; decryption with
    /// <c>CreateDecryptor()</c> and a CryptoStream in write mode; the instance goes back to the pool.
    /// </summary>
    internal sealed class CellCipherPool : IDisposable
    {
        private readonly ConcurrentQueue<Aes> _pool = new();
        private readonly Func<Aes> _create;
        private readonly byte[] _key;

        public CellCipherPool(Func<Aes> create, byte[] key)
        {
            _create = create;
            _key = key;
        }

        private Aes Rent()
        {
            if (_pool.TryDequeue(out Aes? aes))
            {
                return aes;
            }

            aes = _create();
            aes.Mode = CipherMode.CBC;
            aes.Padding = PaddingMode.PKCS7;
            aes.Key = _key;
            return aes;
        }

        public byte[] Encrypt(byte[] plaintext, byte[] iv)
        {
            Aes aes = Rent();
            try
            {
                aes.IV = iv;
                using ICryptoTransform encryptor = aes.CreateEncryptor();
                int whole = plaintext.Length / 16 * 16;
                byte[] ciphertext = new byte[whole + 16];
                int written = whole > 0 ? encryptor.TransformBlock(plaintext, 0, whole, ciphertext, 0) : 0;
                byte[] last = encryptor.TransformFinalBlock(plaintext, whole, plaintext.Length - whole);
                last.CopyTo(ciphertext, written);
                return ciphertext.AsSpan(0, written + last.Length).ToArray();
            }
            finally
            {
                _pool.Enqueue(aes);
            }
        }

        public byte[] Decrypt(byte[] ciphertext, byte[] iv)
        {
            Aes aes = Rent();
            try
            {
                aes.IV = iv;
                using ICryptoTransform decryptor = aes.CreateDecryptor();
                using var plaintext = new MemoryStream();
                using (var crypto = new CryptoStream(plaintext, decryptor, CryptoStreamMode.Write))
                {
                    crypto.Write(ciphertext, 0, ciphertext.Length);
                    crypto.FlushFinalBlock();
                }

                return plaintext.ToArray();
            }
            finally
            {
                _pool.Enqueue(aes);
            }
        }

        public void Dispose()
        {
            while (_pool.TryDequeue(out Aes? aes))
            {
                aes.Dispose();
            }
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void SqlClient_style_instance_pool_on_four_threads_matches_stock(string backend)
    {
        const int Threads = 4;
        const int CellsPerThread = 250;
        var keyRng = new Random(TransformDifferentialTests.Seed + 32);
        byte[][] keys = [Shapes.Bytes(keyRng, 32), Shapes.Bytes(keyRng, 32)];
        var stockPools = keys.Select(k => new CellCipherPool(Aes.Create, k)).ToArray();
        var cachedPools = keys.Select(k => new CellCipherPool(() => BackendData.Create(backend), k)).ToArray();
        var problems = new ConcurrentQueue<string>();
        int tampered = 0;
        var threads = Enumerable.Range(0, Threads).Select(n => new Thread(() =>
        {
            var rng = new Random(TransformDifferentialTests.Seed + 320 + n);
            for (int cell = 0; cell < CellsPerThread && problems.Count < 20; cell++)
            {
                int k = rng.Next(keys.Length);
                byte[] plaintext = Shapes.Bytes(rng, Shapes.MessageLength(rng));
                byte[] iv = Shapes.Bytes(rng, 16);
                byte[] byStock = stockPools[k].Encrypt(plaintext, iv);
                byte[] byCached = cachedPools[k].Encrypt(plaintext, iv);
                string where = $"thread {n}, cell {cell} ({plaintext.Length} bytes)";
                if (Side.BytesDiffer(byStock, byCached, false) is string differ)
                {
                    problems.Enqueue($"{where}: ciphertext: {differ}");
                }

                if (Side.BytesDiffer(plaintext, cachedPools[k].Decrypt(byStock, iv), false) is string back1)
                {
                    problems.Enqueue($"{where}: CachedAes decrypting stock's cell: {back1}");
                }

                if (Side.BytesDiffer(plaintext, stockPools[k].Decrypt(byCached, iv), false) is string back2)
                {
                    problems.Enqueue($"{where}: stock decrypting CachedAes's cell: {back2}");
                }

                if (cell % 10 == 0)
                {
                    byte[] damaged = (byte[])byStock.Clone();
                    damaged[damaged.Length - 1 - rng.Next(16)] ^= (byte)(1 << rng.Next(8));
                    Observed s = Side.Call(() => stockPools[k].Decrypt(damaged, iv));
                    Observed c = Side.Call(() => cachedPools[k].Decrypt(damaged, iv));
                    Interlocked.Increment(ref tampered);
                    if (Side.Difference(s, c) is string failure)
                    {
                        problems.Enqueue($"{where}: damaged cell: {failure}");
                    }
                }
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        foreach (CellCipherPool pool in stockPools.Concat(cachedPools))
        {
            pool.Dispose();
        }

        Assert.True(problems.IsEmpty, string.Join(Environment.NewLine, problems));
        Assert.Equal(Threads * ((CellsPerThread + 9) / 10), tampered);
    }

    /// <summary>
    /// Transforms made from an instance keep the key, IV, mode, padding and feedback size they were made with: after each
    /// later change to the instance (Key, IV, Mode, Padding, FeedbackSize, GenerateKey, GenerateIV, KeySize, SetKey) and
    /// after its Dispose, every transform still encrypts or decrypts its next message as stock's does; and a disposed
    /// instance still makes working transforms, as stock's does.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Transforms_outlive_their_instance_and_ignore_its_later_changes(string backend, CipherMode mode, int feedback)
    {
        var rng = new Random(TransformDifferentialTests.Seed + 33 + (int)mode + feedback);
        var scripts = new TransformScripts(rng.Next(), () => throw new InvalidOperationException()) { SeparateBuffersOnly = true };
        byte[] key = Shapes.Bytes(rng, 24);
        byte[] iv = Shapes.Bytes(rng, 16);
        using Aes stock = Aes.Create();
        using CachedAes cached = BackendData.Create(backend);
        foreach (SymmetricAlgorithm a in new SymmetricAlgorithm[] { stock, cached })
        {
            a.Mode = mode;
            a.FeedbackSize = feedback;
            a.Padding = PaddingMode.PKCS7;
            a.Key = key;
            a.IV = iv;
        }

        var pairs = new List<TransformPair>();
        foreach (bool encrypt in new[] { true, false })
        {
            var config = new TransformConfig(mode, feedback, PaddingMode.PKCS7, encrypt, 24);
            pairs.Add(new TransformPair(config, key, iv, Make(stock, encrypt, null, null), Make(cached, encrypt, null, null)));
            pairs.Add(new TransformPair(config, key, iv, Make(stock, encrypt, stock.Key, stock.IV), Make(cached, encrypt, cached.Key, cached.IV)));
            byte[] otherKey = Shapes.Bytes(rng, 16);
            byte[] otherIv = Shapes.Bytes(rng, 16);
            pairs.Add(new TransformPair(config with { KeyBytes = 16 }, otherKey, otherIv, Make(stock, encrypt, otherKey, otherIv), Make(cached, encrypt, otherKey, otherIv)));
        }

        byte[] newKey = Shapes.Bytes(rng, 32);
        byte[] newIv = Shapes.Bytes(rng, 16);
        (string Name, Action<SymmetricAlgorithm> Change)[] changes =
        [
            ("nothing yet", _ => { }),
            ("Key set", a => a.Key = newKey),
            ("IV set", a => a.IV = newIv),
            ("Mode changed", a => a.Mode = mode == CipherMode.ECB ? CipherMode.CBC : CipherMode.ECB),
            ("Padding changed", a => a.Padding = PaddingMode.Zeros),
            ("FeedbackSize changed", a => a.FeedbackSize = feedback == 8 ? 128 : 8),
            ("GenerateKey", a => a.GenerateKey()),
            ("GenerateIV", a => a.GenerateIV()),
            ("KeySize set", a => a.KeySize = 128),
            ("SetKey", a => a.SetKey(newKey.AsSpan(0, 16))),
            ("Dispose", a => a.Dispose()),
            ("a one-shot on the disposed instance", a => a.EncryptEcb(new byte[16], PaddingMode.None)),
        ];

        var problems = new List<string>();
        foreach ((string name, Action<SymmetricAlgorithm> change) in changes)
        {
            change(stock);
            change(cached);
            for (int p = 0; p < pairs.Count; p++)
            {
                TransformPair pair = pairs[p];
                byte[] input = scripts.MessageInput(pair.Config with { Padding = PaddingMode.PKCS7 }, pair.ConfigKey, pair.ConfigIv!, out byte[] plaintext, out _);
                if (!pair.Config.Encrypt)
                {
                    input = StockTransforms.Encrypt(pair.Config, PaddingMode.PKCS7, pair.ConfigKey, pair.ConfigIv, plaintext);
                }

                int before = scripts.Failures.Count;
                if (!scripts.OneMessage(pair, input, plaintext, $"after '{name}', transform {p} ({pair.Config})") && scripts.Failures.Count == before)
                {
                    problems.Add($"after '{name}', transform {p}: stock failed a valid message ({input.Length} bytes)");
                }
            }
        }

        // A disposed instance makes transforms again (stock generates a new key and IV on use; here they are explicit).
        foreach (bool encrypt in new[] { true, false })
        {
            var config = new TransformConfig(mode, feedback, PaddingMode.PKCS7, encrypt, 32);
            foreach (SymmetricAlgorithm a in new SymmetricAlgorithm[] { stock, cached })
            {
                a.Mode = mode;
                a.FeedbackSize = feedback;
                a.Padding = PaddingMode.PKCS7;
            }

            using var pair = new TransformPair(config, newKey, newIv, Make(stock, encrypt, newKey, newIv), Make(cached, encrypt, newKey, newIv));
            byte[] plaintext = Shapes.Bytes(rng, 40);
            byte[] input = encrypt ? plaintext : StockTransforms.Encrypt(config, PaddingMode.PKCS7, newKey, newIv, plaintext);
            scripts.OneMessage(pair, input, plaintext, $"transform made by the disposed instance ({config})");
        }

        pairs.ForEach(p => p.Dispose());
        problems.AddRange(scripts.Failures);
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
        Assert.True(scripts.Counts.GetValueOrDefault("messages completed") == (changes.Length * pairs.Count) + 2, "not every message completed");
    }

    private static ICryptoTransform Make(SymmetricAlgorithm a, bool encrypt, byte[]? key, byte[]? iv) => key is null
        ? (encrypt ? a.CreateEncryptor() : a.CreateDecryptor())
        : (encrypt ? a.CreateEncryptor(key, iv) : a.CreateDecryptor(key, iv));

    /// <summary>
    /// One keyed instance shared by four threads, each making its own transforms from it (the instance's key and IV, the
    /// same passed back in, or another IV) and running messages through them; each thread compares with its own stock
    /// instance holding the same key. One transform is used by one thread at a time, as stock's are.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Transforms_from_one_instance_shared_by_four_threads_match_stock(string backend)
    {
        const int Threads = 4;
        const int MessagesPerThread = 150;
        var keyRng = new Random(TransformDifferentialTests.Seed + 34);
        var problems = new ConcurrentQueue<string>();
        foreach ((CipherMode mode, PaddingMode padding) in new[] { (CipherMode.CBC, PaddingMode.PKCS7), (CipherMode.ECB, PaddingMode.PKCS7) })
        {
            byte[] key = Shapes.Bytes(keyRng, 32);
            byte[] iv = Shapes.Bytes(keyRng, 16);
            using CachedAes shared = BackendData.Create(backend, key);
            shared.Mode = mode;
            shared.Padding = padding;
            shared.IV = iv;
            int completed = 0;
            var threads = Enumerable.Range(0, Threads).Select(n => new Thread(() =>
            {
                using Aes stock = TestUtil.Stock(key);
                stock.Mode = mode;
                stock.Padding = padding;
                stock.IV = iv;
                var scripts = new TransformScripts(TransformDifferentialTests.Seed + 340 + n, () => throw new InvalidOperationException());
                for (int m = 0; m < MessagesPerThread && scripts.Failures.Count == 0; m++)
                {
                    var config = new TransformConfig(mode, 128, padding, Encrypt: m % 2 == 0, KeyBytes: 32);
                    using TransformPair pair = scripts.MakePair(config, stock, shared, key, iv, out string how);
                    byte[] input = scripts.MessageInput(config, pair.ConfigKey, pair.ConfigIv!, out byte[] plaintext, out _);
                    scripts.OneMessage(pair, input, plaintext, $"{mode}, thread {n}, message {m}, {how}");
                }

                Interlocked.Add(ref completed, scripts.Counts.GetValueOrDefault("messages completed"));
                foreach (string failure in scripts.Failures)
                {
                    problems.Enqueue(failure);
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            Assert.True(completed > Threads * MessagesPerThread / 2, $"{mode}: only {completed} messages completed");
        }

        Assert.True(problems.IsEmpty, string.Join(Environment.NewLine, problems.Take(20)));
    }
}
