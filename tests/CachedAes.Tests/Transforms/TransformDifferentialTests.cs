using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;
using Xunit.Abstractions;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// CreateEncryptor/CreateDecryptor transforms against stock's, side by side, with a fixed seed: every mode (ECB, CBC, CFB8,
/// CFB128), padding, direction and key size, over every backend (today CachedAes returns stock transforms, so the backend
/// rows run the same code; once transforms run on the cache each row exercises its backend). Every call is compared:
/// return values, exceptions, returned bytes, and the caller's buffers. Bad input, client shapes and lifetimes are in
/// <see cref="TransformBadInputTests"/> and <see cref="TransformClientPatternTests"/>.
/// </summary>
public class TransformDifferentialTests
{
    internal const int Seed = 0x7A4E_5F17;

    // Scripts per (padding, direction, key size) and row: 30 configurations per row.
    private const int BlockScripts = 12;
    private const int StreamScripts = 8;

    private readonly ITestOutputHelper _output;

    public TransformDifferentialTests(ITestOutputHelper output) => _output = output;

    /// <summary>Backend × mode rows (CFB rows only where stock CFB works).</summary>
    public static TheoryData<string, CipherMode, int> BackendModes()
    {
        var data = new TheoryData<string, CipherMode, int>();
        foreach (string backend in BackendData.All)
        {
            foreach ((CipherMode mode, int feedback) in TransformConfig.Modes(BackendData.StockCfbWorks))
            {
                data.Add(backend, mode, feedback);
            }
        }

        return data;
    }

    private static int RowSeed(CipherMode mode, int feedback, int salt) => Seed + (1000 * (int)mode) + feedback + salt;

    private void Report(string what, TransformScripts scripts, Stopwatch clock)
    {
        _output.WriteLine($"{what}: {clock.ElapsedMilliseconds} ms; " +
            string.Join(", ", scripts.Counts.OrderBy(p => p.Key, StringComparer.Ordinal).Select(p => $"{p.Key}: {p.Value}")));
        Assert.True(scripts.Failures.Count == 0, $"{scripts.Failures.Count} differences from stock (first ones):{Environment.NewLine}" +
            string.Join(Environment.NewLine, scripts.Failures));
    }

    private static int Count(TransformScripts scripts, string prefix) =>
        scripts.Counts.Where(p => p.Key.StartsWith(prefix, StringComparison.Ordinal)).Sum(p => p.Value);

    /// <summary>
    /// TransformBlock in random chunks (one block, many, everything; separate buffers at random offsets with exact or
    /// spare output room, in place, overlapping by 8 or 16 bytes), then TransformFinalBlock on 0..n bytes, one to three
    /// messages per transform (reuse after TransformFinalBlock), transforms made with the instance's key, with
    /// <c>(aes.Key, aes.IV)</c> and with another key; valid and damaged ciphertexts; properties before and after Dispose.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Random_TransformBlock_and_TransformFinalBlock_sequences_match_stock(string backend, CipherMode mode, int feedback)
    {
        var clock = Stopwatch.StartNew();
        var scripts = new TransformScripts(RowSeed(mode, feedback, 0), () => BackendData.Create(backend));
        scripts.RunAllConfigs(mode, feedback, BlockScripts, cryptoStream: false);
        Report($"{backend} {mode}{feedback}", scripts, clock);

        // The run covered what the summary says it does.
        Assert.True(Count(scripts, "messages completed") > 300, "too few messages completed");
        Assert.True(Count(scripts, "TransformBlock held back") > 20, "no decryptor held a block back");
        Assert.True(Count(scripts, "TransformBlock in place") > 20 && Count(scripts, "TransformBlock overlapping") > 20, "too few in-place or overlapping calls");
        Assert.True(Count(scripts, "TransformBlock separate, exact room") > 20, "too few calls with exactly the output room stock needs");
        Assert.True(Count(scripts, "TransformFinalBlock of 0 bytes") > 20 && Count(scripts, "TransformFinalBlock of a partial block") > 20, "too few empty or partial final blocks");
        Assert.True(Count(scripts, "TransformFinalBlock failed on stock: CryptographicException") > 10, "too few failing final blocks (bad padding, partial blocks)");
        Assert.True(Count(scripts, "pair Create*(other key)") > 20 && Count(scripts, "pair Create*(aes.Key, aes.IV)") > 20 && Count(scripts, "pair Create*()") > 20,
            "too few transforms of one of the three creation shapes");
    }

    /// <summary>
    /// CryptoStream in write mode (Write of arrays and spans, WriteByte, WriteAsync in random pieces, then FlushFinalBlock or
    /// Dispose; the underlying stream compared after every write, so held-back blocks show) and read mode (Read, span Read,
    /// ReadByte, ReadAsync with random buffer sizes; every count compared), one to three messages per transform.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Random_CryptoStream_reads_and_writes_match_stock(string backend, CipherMode mode, int feedback)
    {
        var clock = Stopwatch.StartNew();
        var scripts = new TransformScripts(RowSeed(mode, feedback, 77), () => BackendData.Create(backend));
        scripts.RunAllConfigs(mode, feedback, StreamScripts, cryptoStream: true);
        Report($"{backend} {mode}{feedback} CryptoStream", scripts, clock);
        Assert.True(Count(scripts, "CryptoStream write call") > 300 && Count(scripts, "CryptoStream read call") > 300, "too few stream calls");
        Assert.True(Count(scripts, "CryptoStream write finished by Dispose") > 20 && Count(scripts, "CryptoStream write finished by FlushFinalBlock") > 20, "too few finishes of one kind");
        Assert.True(Count(scripts, "CryptoStream failed on stock") > 10, "too few failing streams (bad padding, partial blocks)");
    }

    /// <summary>
    /// A decryptor fed one block at a time: what each TransformBlock returns (a decryptor that removes padding holds the
    /// last block back, 0 bytes for the first block), and what TransformFinalBlock then returns, compared with stock; and
    /// stock itself does what docs/stock-compatibility.md says.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendModes))]
    public void Decryptor_holds_back_the_last_block_as_stock_does(string backend, CipherMode mode, int feedback)
    {
        var rng = new Random(RowSeed(mode, feedback, 5));
        var problems = new List<string>();
        foreach (PaddingMode padding in TransformConfig.Paddings)
        {
            var config = new TransformConfig(mode, feedback, padding, Encrypt: false, KeyBytes: 32);
            byte[] key = Shapes.Bytes(rng, 32);
            byte[] iv = Shapes.Bytes(rng, 16);
            using CachedAes cached = BackendData.Create(backend, key);
            config.Apply(cached);
            cached.IV = iv;
            foreach (int blocks in new[] { 1, 2, 3, 6 })
            {
                byte[] plaintext = Shapes.Bytes(rng, (16 * blocks) + rng.Next(15));
                byte[] ciphertext = StockTransforms.Encrypt(config, padding == PaddingMode.None ? PaddingMode.Zeros : padding, key, iv, plaintext);
                using ICryptoTransform stock = StockTransforms.Create(config, key, iv);
                using ICryptoTransform candidate = cached.CreateDecryptor();
                var stockCounts = new List<int>();
                var candidateCounts = new List<int>();
                byte[] stockOut = new byte[16];
                byte[] candidateOut = new byte[16];
                for (int b = 0; b < ciphertext.Length / 16; b++)
                {
                    stockCounts.Add(stock.TransformBlock(ciphertext, 16 * b, 16, stockOut, 0));
                    candidateCounts.Add(candidate.TransformBlock(ciphertext, 16 * b, 16, candidateOut, 0));
                    if (!stockOut.AsSpan().SequenceEqual(candidateOut))
                    {
                        problems.Add($"{config}, {blocks} blocks: output of TransformBlock #{b} differs");
                    }
                }

                int whole = ciphertext.Length / 16 * 16;
                int stockFinal = stock.TransformFinalBlock(ciphertext, whole, ciphertext.Length - whole).Length;
                int candidateFinal = candidate.TransformFinalBlock(ciphertext, whole, ciphertext.Length - whole).Length;
                string s = $"[{string.Join(", ", stockCounts)}] then {stockFinal}";
                string c = $"[{string.Join(", ", candidateCounts)}] then {candidateFinal}";
                if (s != c)
                {
                    problems.Add($"{config}, {ciphertext.Length} bytes one block at a time: stock {s}, candidate {c}");
                }

                // Stock as documented: the first block is held back exactly when padding is removed, and released by the next.
                int expectedFirst = config.RemovesPadding ? 0 : 16;
                Assert.True(stockCounts[0] == expectedFirst, $"stock {config}: first TransformBlock returned {stockCounts[0]}, docs/stock-compatibility.md says {expectedFirst}");
                Assert.All(stockCounts.Skip(1), n => Assert.Equal(16, n));
            }
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    /// <summary>
    /// Many transforms alive at once from one instance (more than a per-processor handle set holds), encryptors and
    /// decryptors of the instance's key and of other keys, used interleaved block by block: each keeps its own chain.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Many_live_transforms_from_one_instance_used_interleaved_match_stock(string backend)
    {
        var rng = new Random(Seed + 11);
        var problems = new List<string>();
        foreach ((CipherMode mode, PaddingMode padding) in new[] { (CipherMode.CBC, PaddingMode.PKCS7), (CipherMode.ECB, PaddingMode.None), (CipherMode.CBC, PaddingMode.None) })
        {
            byte[] key = Shapes.Bytes(rng, 32);
            byte[] iv = Shapes.Bytes(rng, 16);
            using Aes stock = TestUtil.Stock(key);
            using CachedAes cached = BackendData.Create(backend, key);
            foreach (SymmetricAlgorithm a in new SymmetricAlgorithm[] { stock, cached })
            {
                a.Mode = mode;
                a.Padding = padding;
                a.IV = iv;
            }

            int live = (2 * Environment.ProcessorCount) + 5;
            var pairs = new List<(TransformPair Pair, byte[] Input, int Position)>();
            var scripts = new TransformScripts(rng.Next(), () => throw new InvalidOperationException());
            for (int i = 0; i < live; i++)
            {
                var config = new TransformConfig(mode, 128, padding, Encrypt: i % 2 == 0, KeyBytes: 32);
                TransformPair pair = scripts.MakePair(config, stock, cached, key, iv, out _);
                byte[] plaintext = Shapes.Bytes(rng, 16 * rng.Next(2, 12));
                byte[] input = config.Encrypt ? plaintext : StockTransforms.Encrypt(config, padding, pair.ConfigKey, pair.ConfigIv, plaintext);
                pairs.Add((pair, input, 0));
            }

            // Round-robin in random order: one block per turn, the last one through TransformFinalBlock; then reuse once.
            for (int round = 0; round < 2; round++)
            {
                var order = Enumerable.Range(0, pairs.Count).ToList();
                while (order.Count > 0)
                {
                    int pick = order[rng.Next(order.Count)];
                    (TransformPair pair, byte[] input, int position) = pairs[pick];
                    int remaining = input.Length - position;
                    Observed s, c;
                    if (remaining > 16)
                    {
                        s = Side.Call(pair.Stock, input, new byte[16], false, (t, i, o) => t.TransformBlock(i!, position, 16, o!, 0));
                        c = Side.Call(pair.Candidate, input, new byte[16], false, (t, i, o) => t.TransformBlock(i!, position, 16, o!, 0));
                        pairs[pick] = (pair, input, position + 16);
                    }
                    else
                    {
                        s = Side.Call(pair.Stock, input, null, false, (t, i, _) => t.TransformFinalBlock(i!, position, remaining));
                        c = Side.Call(pair.Candidate, input, null, false, (t, i, _) => t.TransformFinalBlock(i!, position, remaining));
                        pair.MessageDone();
                        pairs[pick] = (pair, input, 0);
                        order.Remove(pick);
                    }

                    if (Side.Difference(s, c) is string problem)
                    {
                        problems.Add($"{mode} {padding}, transform {pick} of {live}, round {round}, at byte {position}: {problem}");
                        order.Remove(pick);
                    }
                }
            }

            foreach ((TransformPair pair, _, _) in pairs)
            {
                pair.Dispose();
            }
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems.Take(20)));
    }

    /// <summary>Self-check of the harness: stock against a second stock <see cref="Aes"/> gives no difference.</summary>
    [Fact]
    public void Harness_finds_no_difference_between_two_stock_instances()
    {
        foreach ((CipherMode mode, int feedback) in TransformConfig.Modes(BackendData.StockCfbWorks))
        {
            if (mode == CipherMode.CBC && !BackendData.StockCbcTransformsReusable)
            {
                continue; // both sides are stock: a reused stock CBC transform is wrong here (see BackendData)
            }

            var blocks = new TransformScripts(RowSeed(mode, feedback, 0), Aes.Create);
            blocks.RunAllConfigs(mode, feedback, 3, cryptoStream: false);
            var streams = new TransformScripts(RowSeed(mode, feedback, 77), Aes.Create);
            streams.RunAllConfigs(mode, feedback, 3, cryptoStream: true);
            Assert.True(blocks.Failures.Count + streams.Failures.Count == 0, string.Join(Environment.NewLine, blocks.Failures.Concat(streams.Failures)));
        }
    }

    /// <summary>Self-check of the harness: each deliberate defect in otherwise stock transforms is reported.</summary>
    [Theory]
    [InlineData(TransformMutation.FlippedFinalBit)]
    [InlineData(TransformMutation.WritesPastOutput)]
    [InlineData(TransformMutation.ReportsHeldBackBlockAsWritten)]
    [InlineData(TransformMutation.WrongParamName)]
    [InlineData(TransformMutation.WrongInputBlockSize)]
    [InlineData(TransformMutation.NoResetAfterFinal)]
    public void Harness_reports_a_defective_transform(TransformMutation mutation)
    {
        // CBC where stock's CBC transforms can be reused (the mutants wrap stock's), ECB elsewhere.
        CipherMode mode = BackendData.StockCbcTransformsReusable ? CipherMode.CBC : CipherMode.ECB;
        var blocks = new TransformScripts(RowSeed(mode, 128, 0), () => new MutantAes(mutation));
        blocks.RunAllConfigs(mode, 128, 3, cryptoStream: false);
        var streams = new TransformScripts(RowSeed(mode, 128, 77), () => new MutantAes(mutation));
        streams.RunAllConfigs(mode, 128, 3, cryptoStream: true);
        var badInput = new List<string>();
        if (mutation == TransformMutation.WrongParamName)
        {
            using var candidate = new MutantAes(mutation);
            TransformBadInputTests.CompareBadCalls(candidate, new TransformConfig(mode, 128, PaddingMode.PKCS7, true, 16), new Random(1), badInput);
        }

        int found = blocks.Failures.Count + streams.Failures.Count + badInput.Count;
        _output.WriteLine($"{mutation}: {found} differences; first: {blocks.Failures.Concat(streams.Failures).Concat(badInput).FirstOrDefault()}");
        Assert.True(found > 0, $"the harness did not notice {mutation}");
    }
}
