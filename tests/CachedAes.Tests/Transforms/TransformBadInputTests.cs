using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// Every bad input to a transform and to CreateEncryptor/CreateDecryptor, run on stock and CachedAes side by side: the
/// exception type, its parameter name, what was returned and every byte of the caller's buffers afterwards must be stock's.
/// Nothing here says what CachedAes should throw: stock on the same input says it.
/// </summary>
public class TransformBadInputTests
{
    private delegate object? BadCall(ICryptoTransform t, byte[]? input, byte[]? output);

    /// <summary>Backend × mode rows, as <see cref="TransformDifferentialTests.BackendModes"/>.</summary>
    public static TheoryData<string, CipherMode, int> BackendModes() => TransformDifferentialTests.BackendModes();

    // Bad TransformBlock calls: (name, input length or -1 for null, output length or -1 for null, the call).
    private static readonly (string Name, int In, int Out, BadCall Call)[] s_badBlockCalls =
    [
        ("TransformBlock(null input)", -1, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
        ("TransformBlock(null output)", 64, -1, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
        ("TransformBlock(null input, null output)", -1, -1, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
        ("TransformBlock(inputOffset -1)", 64, 64, (t, i, o) => t.TransformBlock(i!, -1, 16, o!, 0)),
        ("TransformBlock(inputOffset past the end)", 64, 64, (t, i, o) => t.TransformBlock(i!, 65, 16, o!, 0)),
        ("TransformBlock(inputOffset at the end, count 16)", 64, 64, (t, i, o) => t.TransformBlock(i!, 64, 16, o!, 0)),
        ("TransformBlock(inputOffset int.MaxValue)", 64, 64, (t, i, o) => t.TransformBlock(i!, int.MaxValue, 16, o!, 0)),
        ("TransformBlock(inputCount -16)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, -16, o!, 0)),
        ("TransformBlock(inputCount 0)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 0, o!, 0)),
        ("TransformBlock(inputCount 1)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 1, o!, 0)),
        ("TransformBlock(inputCount 15)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 15, o!, 0)),
        ("TransformBlock(inputCount 17)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 17, o!, 0)),
        ("TransformBlock(inputCount 40)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 40, o!, 0)),
        ("TransformBlock(offset + count past the end)", 64, 64, (t, i, o) => t.TransformBlock(i!, 56, 16, o!, 0)),
        ("TransformBlock(inputCount int.MaxValue)", 64, 64, (t, i, o) => t.TransformBlock(i!, 16, int.MaxValue, o!, 0)),
        ("TransformBlock(inputCount int.MinValue)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, int.MinValue, o!, 0)),
        ("TransformBlock(partial and past the end)", 64, 64, (t, i, o) => t.TransformBlock(i!, 60, 5, o!, 0)),
        ("TransformBlock(outputOffset -1)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, -1)),
        ("TransformBlock(outputOffset past the end)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 65)),
        ("TransformBlock(outputOffset at the end)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 64)),
        ("TransformBlock(outputOffset int.MaxValue)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, int.MaxValue)),
        ("TransformBlock(output one byte short)", 64, 31, (t, i, o) => t.TransformBlock(i!, 0, 32, o!, 0)),
        ("TransformBlock(output one block for two)", 64, 16, (t, i, o) => t.TransformBlock(i!, 0, 32, o!, 0)),
        ("TransformBlock(output room short at an offset)", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 32, o!, 40)),
        ("TransformBlock(empty output)", 64, 0, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
        ("TransformBlock(empty input)", 0, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
    ];

    private static readonly (string Name, int In, BadCall Call)[] s_badFinalCalls =
    [
        ("TransformFinalBlock(null)", -1, (t, i, _) => t.TransformFinalBlock(i!, 0, 0)),
        ("TransformFinalBlock(null, 0, 16)", -1, (t, i, _) => t.TransformFinalBlock(i!, 0, 16)),
        ("TransformFinalBlock(offset -1)", 64, (t, i, _) => t.TransformFinalBlock(i!, -1, 16)),
        ("TransformFinalBlock(count -1)", 64, (t, i, _) => t.TransformFinalBlock(i!, 0, -1)),
        ("TransformFinalBlock(count int.MinValue)", 64, (t, i, _) => t.TransformFinalBlock(i!, 0, int.MinValue)),
        ("TransformFinalBlock(offset + count past the end)", 64, (t, i, _) => t.TransformFinalBlock(i!, 56, 16)),
        ("TransformFinalBlock(offset past the end, count 0)", 64, (t, i, _) => t.TransformFinalBlock(i!, 65, 0)),
        ("TransformFinalBlock(offset int.MaxValue)", 64, (t, i, _) => t.TransformFinalBlock(i!, int.MaxValue, 0)),
        ("TransformFinalBlock(count int.MaxValue)", 64, (t, i, _) => t.TransformFinalBlock(i!, 16, int.MaxValue)),
        ("TransformFinalBlock(empty array, count 1)", 0, (t, i, _) => t.TransformFinalBlock(i!, 0, 1)),
    ];

    private static byte[]? Buffer(int length, byte fill) => length < 0 ? null : TestUtil.Filled(length, fill);

    private static ICryptoTransform Make(SymmetricAlgorithm a, TransformConfig config, bool explicitKey) => explicitKey
        ? (config.Encrypt ? a.CreateEncryptor(a.Key, a.IV) : a.CreateDecryptor(a.Key, a.IV))
        : (config.Encrypt ? a.CreateEncryptor() : a.CreateDecryptor());

    /// <summary>
    /// Every bad TransformBlock and TransformFinalBlock call, on a fresh transform and in the middle of a message (a decryptor
    /// then holds a block back), each compared with stock; then the message is finished (bad arguments change nothing), then
    /// every call after Dispose. Used by the theory below and by the harness self-check.
    /// </summary>
    internal static void CompareBadCalls(SymmetricAlgorithm candidate, TransformConfig config, Random rng, List<string> problems)
    {
        byte[] key = Shapes.Bytes(rng, config.KeyBytes);
        byte[] iv = Shapes.Bytes(rng, 16);
        using Aes stock = Aes.Create();
        foreach (SymmetricAlgorithm a in new[] { stock, candidate })
        {
            config.Apply(a);
            a.Key = key;
            a.IV = iv;
        }

        byte[] plaintext = Shapes.Bytes(rng, 45);
        if (config.Padding == PaddingMode.None && config.ModeName != "CFB8")
        {
            plaintext = plaintext.AsSpan(0, 32).ToArray();
        }

        byte[] message = config.Encrypt ? plaintext : StockTransforms.Encrypt(config, config.Padding, key, iv, plaintext);
        foreach (bool midMessage in new[] { false, true })
        {
            bool explicitKey = rng.Next(2) == 0;
            var pair = new TransformPair(config, key, iv, Make(stock, config, explicitKey), Make(candidate, config, explicitKey));
            string state = $"{config}, {(midMessage ? "after TransformBlock of 32 bytes" : "fresh transform")}";
            int done = 0;
            if (midMessage)
            {
                Add(problems, state + ": TransformBlock(32)", Side.Difference(
                    Side.Call(pair.Stock, message, new byte[32], false, (t, i, o) => t.TransformBlock(i!, 0, 32, o!, 0)),
                    Side.Call(pair.Candidate, message, new byte[32], false, (t, i, o) => t.TransformBlock(i!, 0, 32, o!, 0))));
                done = 32;
            }

            foreach ((string name, int inLength, int outLength, BadCall call) in s_badBlockCalls)
            {
                byte[]? input = Buffer(inLength, 0x3C);
                if (input is not null)
                {
                    message.AsSpan(done, Math.Min(input.Length, message.Length - done)).CopyTo(input);
                }

                Observed s = Side.Call(pair.Stock, input, Buffer(outLength, TestUtil.Canary), false, (t, i, o) => call(t, i, o));
                Observed c = Side.Call(pair.Candidate, input, Buffer(outLength, TestUtil.Canary), false, (t, i, o) => call(t, i, o));
                Add(problems, $"{state}: {name}", Side.Difference(s, c));
                if (!s.Failed)
                {
                    problems.Add($"{state}: {name}: stock accepted it ({s.Describe()}); the list expects only bad calls");
                }
            }

            foreach ((string name, int inLength, BadCall call) in s_badFinalCalls)
            {
                byte[]? input = Buffer(inLength, 0x3C);
                Observed s = Side.Call(pair.Stock, input, null, false, (t, i, o) => call(t, i, o));
                Observed c = Side.Call(pair.Candidate, input, null, false, (t, i, o) => call(t, i, o));
                Add(problems, $"{state}: {name}", Side.Difference(s, c));
                if (!s.Failed)
                {
                    problems.Add($"{state}: {name}: stock accepted it ({s.Describe()}); the list expects only bad calls");
                }
            }

            // Argument errors leave the transform as it was: the message finishes as stock's does.
            Add(problems, $"{state}: finishing the message after the bad calls", Side.Difference(
                Side.Call(pair.Stock, message, null, false, (t, i, _) => t.TransformFinalBlock(i!, done, i!.Length - done)),
                Side.Call(pair.Candidate, message, null, false, (t, i, _) => t.TransformFinalBlock(i!, done, i!.Length - done)),
                config.RandomPadding));

            // Use after Dispose (argument checks come first on stock); a second Dispose is harmless.
            pair.Dispose();
            (string Name, int In, int Out, BadCall Call)[] afterDispose =
            [
                ("TransformBlock after Dispose", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
                ("TransformBlock(null) after Dispose", -1, 64, (t, i, o) => t.TransformBlock(i!, 0, 16, o!, 0)),
                ("TransformBlock(inputCount 5) after Dispose", 64, 64, (t, i, o) => t.TransformBlock(i!, 0, 5, o!, 0)),
                ("TransformFinalBlock after Dispose", 64, -1, (t, i, _) => t.TransformFinalBlock(i!, 0, 16)),
                ("TransformFinalBlock(0 bytes) after Dispose", 64, -1, (t, i, _) => t.TransformFinalBlock(i!, 0, 0)),
                ("TransformFinalBlock(null) after Dispose", -1, -1, (t, i, _) => t.TransformFinalBlock(i!, 0, 16)),
                ("properties after Dispose", 0, -1, (t, _, _) => System.Text.Encoding.UTF8.GetBytes(TransformScripts.Properties(t))),
                ("second Dispose", 0, -1, (t, _, _) => { t.Dispose(); return null; }),
            ];
            foreach ((string name, int inLength, int outLength, BadCall call) in afterDispose)
            {
                byte[]? input = Buffer(inLength, 0x3C);
                Add(problems, $"{state}: {name}", Side.Difference(
                    Side.Call(pair.Stock, input, Buffer(outLength, TestUtil.Canary), false, (t, i, o) => call(t, i, o)),
                    Side.Call(pair.Candidate, input, Buffer(outLength, TestUtil.Canary), false, (t, i, o) => call(t, i, o))));
            }
        }
    }

    private static void Add(List<string> problems, string where, string? problem)
    {
        if (problem is not null)
        {
            problems.Add($"{where}: {problem}");
        }
    }

    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Bad_TransformBlock_and_TransformFinalBlock_arguments_and_use_after_Dispose_fail_as_stock_does(string backend, CipherMode mode, int feedback)
    {
        var rng = new Random(TransformDifferentialTests.Seed + 21);
        var problems = new List<string>();
        foreach (PaddingMode padding in TransformConfig.Paddings)
        {
            foreach (bool encrypt in new[] { true, false })
            {
                using CachedAes cached = BackendData.Create(backend);
                CompareBadCalls(cached, new TransformConfig(mode, feedback, padding, encrypt, TransformConfig.KeySizes[rng.Next(3)]), rng, problems);
            }
        }

        Assert.True(problems.Count == 0, $"{problems.Count} differences from stock:{Environment.NewLine}{string.Join(Environment.NewLine, problems.Take(30))}");
    }

    /// <summary>
    /// Final blocks stock rejects: partial blocks (None, and any padding on decrypt outside CFB8), and decrypted padding that
    /// is wrong for the mode (a zero or too-large pad length, PKCS7 bytes that differ, ANSI X9.23 bytes that are not zero),
    /// through TransformFinalBlock alone and after TransformBlock held a block back. The TransformBlock output is compared
    /// byte for byte (what stock leaves there), and the exception.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Partial_blocks_and_bad_padding_fail_as_stock_does(string backend, CipherMode mode, int feedback)
    {
        var rng = new Random(TransformDifferentialTests.Seed + 22);
        var problems = new List<string>();
        int stockFailures = 0;
        foreach (PaddingMode padding in TransformConfig.Paddings)
        {
            foreach (bool encrypt in new[] { true, false })
            {
                var config = new TransformConfig(mode, feedback, padding, encrypt, 32);
                byte[] key = Shapes.Bytes(rng, 32);
                byte[] iv = Shapes.Bytes(rng, 16);
                using CachedAes cached = BackendData.Create(backend, key);
                config.Apply(cached);
                cached.IV = iv;

                var inputs = new List<(string Name, byte[] Input)>();
                foreach (int length in new[] { 1, 15, 17, 31, 33, 47 })
                {
                    inputs.Add(($"{length} random bytes", Shapes.Bytes(rng, length)));
                }

                if (!encrypt)
                {
                    // Last plaintext blocks whose padding is wrong for one mode or another, encrypted without padding.
                    byte[][] tails =
                    [
                        [.. Enumerable.Repeat((byte)0x41, 15), 0x00],
                        [.. Enumerable.Repeat((byte)0x41, 15), 0x11],
                        [.. Enumerable.Repeat((byte)0x41, 15), 0xFF],
                        [.. Enumerable.Repeat((byte)0x41, 11), 0x05, 0x05, 0x05, 0x04, 0x05],
                        [.. Enumerable.Repeat((byte)0x41, 11), 0x05, 0x05, 0x05, 0x05, 0x05],
                        [.. Enumerable.Repeat((byte)0x41, 11), 0x00, 0x00, 0x00, 0x00, 0x05],
                        [.. Enumerable.Repeat((byte)0x41, 11), 0x00, 0x01, 0x00, 0x00, 0x05],
                        [.. Enumerable.Repeat((byte)0x10, 16)],
                        [.. Enumerable.Repeat((byte)0x00, 15), 0x10],
                    ];
                    foreach (byte[] tail in tails)
                    {
                        byte[] padded = [.. Shapes.Bytes(rng, 32), .. tail];
                        inputs.Add(($"ciphertext of a last block ending {Convert.ToHexString(tail, 11, 5)}", StockTransforms.Encrypt(config, PaddingMode.None, key, iv, padded)));
                    }
                }

                foreach ((string name, byte[] input) in inputs)
                {
                    foreach (bool viaBlocks in new[] { false, true })
                    {
                        int before = viaBlocks ? (input.Length - 1) / 16 * 16 : 0;
                        if (viaBlocks && before == 0)
                        {
                            continue;
                        }

                        using var pair = new TransformPair(config, key, iv, StockTransforms.Create(config, key, iv), cached.CreateDecryptorOrEncryptor(config));
                        string where = $"{config}, {name}{(viaBlocks ? $", {before} bytes through TransformBlock first" : "")}";
                        if (viaBlocks)
                        {
                            Add(problems, where + ": TransformBlock", Side.Difference(
                                Side.Call(pair.Stock, input, TestUtil.Filled(before + 16), false, (t, i, o) => t.TransformBlock(i!, 0, before, o!, 0)),
                                Side.Call(pair.Candidate, input, TestUtil.Filled(before + 16), false, (t, i, o) => t.TransformBlock(i!, 0, before, o!, 0))));
                        }

                        Observed s = Side.Call(pair.Stock, input, null, false, (t, i, _) => t.TransformFinalBlock(i!, before, i!.Length - before));
                        Observed c = Side.Call(pair.Candidate, input, null, false, (t, i, _) => t.TransformFinalBlock(i!, before, i!.Length - before));
                        stockFailures += s.Failed ? 1 : 0;
                        Add(problems, where + ": TransformFinalBlock", Side.Difference(s, c, config.RandomPadding));
                    }
                }
            }
        }

        Assert.True(problems.Count == 0, $"{problems.Count} differences from stock:{Environment.NewLine}{string.Join(Environment.NewLine, problems.Take(30))}");
        Assert.True(stockFailures > 20, $"only {stockFailures} of the inputs failed on stock");
    }

    /// <summary>
    /// After TransformFinalBlock failed (bad padding, a partial block), the same transform is used for the next message.
    /// Stock does not return to the IV on that failure (a held-back block and the chaining state survive into the next
    /// message: docs/stock-compatibility.md, "Transforms"): whatever stock does, CachedAes does the same.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Reuse_after_a_failed_TransformFinalBlock_matches_stock(string backend, CipherMode mode, int feedback)
    {
        var rng = new Random(TransformDifferentialTests.Seed + 23);
        var problems = new List<string>();
        int failedFirst = 0;
        foreach (PaddingMode padding in TransformConfig.Paddings)
        {
            foreach (bool encrypt in new[] { true, false })
            {
                var config = new TransformConfig(mode, feedback, padding, encrypt, 16);
                byte[] key = Shapes.Bytes(rng, 16);
                byte[] iv = Shapes.Bytes(rng, 16);
                using CachedAes cached = BackendData.Create(backend, key);
                config.Apply(cached);
                cached.IV = iv;
                foreach (int split in new[] { 0, 32 })
                {
                    // First message: 32 good bytes, then a last block stock rejects (partial, or a wrong pad length).
                    byte[] bad = encrypt
                        ? Shapes.Bytes(rng, 45)
                        : [.. StockTransforms.Encrypt(config, PaddingMode.None, key, iv, [.. Shapes.Bytes(rng, 47), 0x00]), .. Shapes.Bytes(rng, config.ModeName == "CFB8" ? 0 : 3)];
                    byte[] good = encrypt ? Shapes.Bytes(rng, 40) : StockTransforms.Encrypt(config, padding == PaddingMode.None ? PaddingMode.Zeros : padding, key, iv, Shapes.Bytes(rng, 40));
                    using var pair = new TransformPair(config, key, iv, StockTransforms.Create(config, key, iv), cached.CreateDecryptorOrEncryptor(config));
                    string where = $"{config}, first message through TransformBlock({split}) + TransformFinalBlock";
                    if (split > 0)
                    {
                        Add(problems, where + ": TransformBlock", Side.Difference(
                            Side.Call(pair.Stock, bad, new byte[split], false, (t, i, o) => t.TransformBlock(i!, 0, split, o!, 0)),
                            Side.Call(pair.Candidate, bad, new byte[split], false, (t, i, o) => t.TransformBlock(i!, 0, split, o!, 0))));
                    }

                    Observed s = Side.Call(pair.Stock, bad, null, false, (t, i, _) => t.TransformFinalBlock(i!, split, i!.Length - split));
                    Observed c = Side.Call(pair.Candidate, bad, null, false, (t, i, _) => t.TransformFinalBlock(i!, split, i!.Length - split));
                    Add(problems, where + ": TransformFinalBlock", Side.Difference(s, c, config.RandomPadding));
                    if (!s.Failed)
                    {
                        continue;
                    }

                    failedFirst++;
                    foreach (int goodSplit in new[] { 0, 16 })
                    {
                        Add(problems, $"{where} failed; next message", Side.Difference(
                            Side.Call(pair.Stock, good, new byte[64], false, (t, i, o) => goodSplit == 0 ? 0 : t.TransformBlock(i!, 0, goodSplit, o!, 0)),
                            Side.Call(pair.Candidate, good, new byte[64], false, (t, i, o) => goodSplit == 0 ? 0 : t.TransformBlock(i!, 0, goodSplit, o!, 0))));
                        Add(problems, $"{where} failed; next message's final block", Side.Difference(
                            Side.Call(pair.Stock, good, null, false, (t, i, _) => t.TransformFinalBlock(i!, goodSplit, i!.Length - goodSplit)),
                            Side.Call(pair.Candidate, good, null, false, (t, i, _) => t.TransformFinalBlock(i!, goodSplit, i!.Length - goodSplit)),
                            config.RandomPadding));
                    }
                }
            }
        }

        Assert.True(problems.Count == 0, $"{problems.Count} differences from stock:{Environment.NewLine}{string.Join(Environment.NewLine, problems.Take(30))}");
        Assert.True(failedFirst > 4, $"only {failedFirst} first messages failed on stock");
    }

    /// <summary>
    /// CreateEncryptor/CreateDecryptor argument errors (both overloads, both directions, every mode): null key, key sizes
    /// other than 16/24/32, IV sizes other than 16 (ECB included), a null IV where the mode needs one, CFB feedback sizes
    /// other than 8 and 128, and the order of the checks when several arguments are bad; a call stock accepts must give a
    /// transform that encrypts as stock's does.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void CreateEncryptor_and_CreateDecryptor_arguments_are_checked_as_stock_does(string backend)
    {
        var problems = new List<string>();
        var rng = new Random(TransformDifferentialTests.Seed + 24);
        var modes = TransformConfig.Modes(BackendData.StockCfbWorks).ToList();
        if (BackendData.StockCfbWorks)
        {
            modes.AddRange([(CipherMode.CFB, 16), (CipherMode.CFB, 64), (CipherMode.CFB, 120)]);
        }

        (string Name, byte[]? Key, byte[]? Iv)[] arguments =
        [
            ("null key", null, new byte[16]),
            ("null key and IV", null, null),
            ("0-byte key", [], new byte[16]),
            ("8-byte key", new byte[8], new byte[16]),
            ("15-byte key", new byte[15], new byte[16]),
            ("17-byte key", new byte[17], new byte[16]),
            ("20-byte key", new byte[20], new byte[16]),
            ("33-byte key", new byte[33], new byte[16]),
            ("64-byte key", new byte[64], new byte[16]),
            ("0-byte IV", new byte[16], []),
            ("8-byte IV", new byte[16], new byte[8]),
            ("15-byte IV", new byte[24], new byte[15]),
            ("17-byte IV", new byte[32], new byte[17]),
            ("32-byte IV", new byte[16], new byte[32]),
            ("null IV", new byte[32], null),
            ("bad key and bad IV", new byte[15], new byte[15]),
            ("bad key and null IV", new byte[15], null),
            ("null key and bad IV", null, new byte[3]),
            ("good 128-bit key and IV", Shapes.Bytes(rng, 16), Shapes.Bytes(rng, 16)),
            ("good 256-bit key and IV", Shapes.Bytes(rng, 32), Shapes.Bytes(rng, 16)),
        ];

        int stockFailures = 0;
        foreach ((CipherMode mode, int feedback) in modes)
        {
            foreach (bool encrypt in new[] { true, false })
            {
                using Aes stock = Aes.Create();
                using CachedAes cached = BackendData.Create(backend);
                foreach (SymmetricAlgorithm a in new SymmetricAlgorithm[] { stock, cached })
                {
                    a.Mode = mode;
                    a.FeedbackSize = feedback;
                    a.Padding = PaddingMode.PKCS7;
                }

                string where = $"{mode}{feedback} {(encrypt ? "CreateEncryptor" : "CreateDecryptor")}";
                foreach ((string name, byte[]? key, byte[]? iv) in arguments)
                {
                    stockFailures += CompareCreation($"{where}({name})", problems,
                        a => encrypt ? a.CreateEncryptor(key!, iv) : a.CreateDecryptor(key!, iv), stock, cached, key);
                }

                // The parameterless overloads on an instance whose key and IV are generated lazily.
                stockFailures += CompareCreation($"{where}() with a lazily generated key", problems,
                    a => encrypt ? a.CreateEncryptor() : a.CreateDecryptor(), stock, cached, null);
            }
        }

        Assert.True(problems.Count == 0, $"{problems.Count} differences from stock:{Environment.NewLine}{string.Join(Environment.NewLine, problems.Take(40))}");
        Assert.True(stockFailures > 15 * modes.Count, $"only {stockFailures} creations failed on stock over {modes.Count} modes");
    }

    // Returns 1 when stock threw. When both made a transform, a message through each must agree (where the key is known).
    private static int CompareCreation(string where, List<string> problems, Func<SymmetricAlgorithm, ICryptoTransform> create, Aes stock, CachedAes cached, byte[]? key)
    {
        ICryptoTransform? stockTransform = null;
        ICryptoTransform? cachedTransform = null;
        Observed s = Side.Call(() => { stockTransform = create(stock); return null; });
        Observed c = Side.Call(() => { cachedTransform = create(cached); return null; });
        try
        {
            Add(problems, where, Side.Difference(s, c));
            if (stockTransform is null || cachedTransform is null)
            {
                return s.Failed ? 1 : 0;
            }

            Add(problems, where + ": properties", TransformScripts.Properties(stockTransform) == TransformScripts.Properties(cachedTransform)
                ? null
                : $"stock {TransformScripts.Properties(stockTransform)}, candidate {TransformScripts.Properties(cachedTransform)}");
            if (key is not null)
            {
                byte[] data = new byte[48];
                Add(problems, where + ": a message through the new transforms", Side.Difference(
                    Side.Call(stockTransform, data, null, false, (t, i, _) => t.TransformFinalBlock(i!, 0, 48)),
                    Side.Call(cachedTransform, data, null, false, (t, i, _) => t.TransformFinalBlock(i!, 0, 48))));
            }

            return 0;
        }
        finally
        {
            stockTransform?.Dispose();
            cachedTransform?.Dispose();
        }
    }
}

/// <summary>Small helper: the transform of the configured direction from the instance's own key and IV.</summary>
internal static class TransformCreation
{
    public static ICryptoTransform CreateDecryptorOrEncryptor(this SymmetricAlgorithm aes, TransformConfig config) =>
        config.Encrypt ? aes.CreateEncryptor() : aes.CreateDecryptor();
}
