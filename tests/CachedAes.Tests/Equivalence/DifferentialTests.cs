using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;
using Xunit.Abstractions;

namespace CachedCryptography.Tests;

/// <summary>
/// Random differential tests against stock <see cref="Aes.Create()"/> with a fixed seed: every one-shot overload family,
/// mode, padding, key size and buffer layout, comparing bytes, return values and exceptions.
/// </summary>
public class DifferentialTests
{
    private const int Seed = 0x5EED_AE5;
    private const int Cases = 20_000;
    private const int MaxLength = 1100;

    private readonly ITestOutputHelper _output;

    public DifferentialTests(ITestOutputHelper output) => _output = output;

    internal enum Family
    {
        ByteArray,     // byte[] allocating
        SpanAlloc,     // ReadOnlySpan allocating
        SpanDest,      // span destination, int-returning
        Try,           // Try..., bool + bytesWritten
    }

    internal enum Layout
    {
        Separate,
        InPlace,
        Overlap,
    }

    internal sealed class Case
    {
        public int Index;
        public int KeyIndex;
        public CipherMode Mode;
        public bool Encrypt;
        public PaddingMode Padding;
        public int Feedback;
        public Family Family;
        public Layout Layout;
        public int OverlapDelta;
        public byte[] Input = [];
        public byte[] Iv = [];
        public int DestLength;
        public string InputKind = "";

        // The buffer the call writes into: the separate destination, or the shared array.
        public byte[] Buffer = [];
        public int InOffset;
        public int OutOffset;

        public override string ToString() =>
            $"case #{Index} (seed 0x{Seed:x}): key#{KeyIndex} {Mode} {(Encrypt ? "encrypt" : "decrypt")} {Padding} fb={Feedback} " +
            $"{Family} {Layout}{(Layout == Layout.Overlap ? $"({OverlapDelta:+#;-#;0})" : "")} input={Input.Length} ({InputKind}) dest={DestLength} iv={Iv.Length}";
    }

    internal sealed class Outcome
    {
        public Exception? Error;
        public bool? TryResult;
        public int? Returned;
        public byte[]? Allocated;
        public byte[] Buffer = [];
    }

    private static readonly int[] s_keySizes = [16, 24, 32];

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Random_one_shots_match_stock(string backend)
    {
        using CachedAes cached = BackendData.Create(backend);
        RunDifferential(backend, cached, Cases);
    }

    /// <summary>
    /// The shapes where stock's failure paths differ by length and layout: a short destination (up to one block short)
    /// for ciphertexts around stock's 128-byte stack limit and above, and partially overlapping buffers. After every
    /// failure (bad padding, destination too small) the caller's buffer must hold exactly the bytes stock leaves.
    /// </summary>
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Failed_decrypts_leave_the_callers_buffer_exactly_as_stock_does(string backend)
    {
        var rng = new Random(Seed + 1);
        byte[] key = TestUtil.Random(rng, 32);
        using CachedAes cached = BackendData.Create(backend, key);
        using Aes stock = TestUtil.Stock(key);
        var failures = new List<string>();
        int index = 0;
        int failedCalls = 0;
        foreach (CipherMode mode in new[] { CipherMode.ECB, CipherMode.CBC })
        {
            foreach (int length in new[] { 112, 128, 144, 160, 208, 256, 272, 400, 1024 })
            {
                foreach (bool validPadding in new[] { true, false })
                {
                    foreach (int shortBy in new[] { 0, 1, 8, 15, 16 })
                    {
                        foreach ((Layout layout, int delta) in new[] { (Layout.Separate, 0), (Layout.InPlace, 0), (Layout.Overlap, 8), (Layout.Overlap, -8), (Layout.Overlap, 16), (Layout.Overlap, -16) })
                        {
                            var c = new Case { Index = index++, Mode = mode, Encrypt = false, Padding = PaddingMode.PKCS7, Family = Family.Try, Layout = layout, OverlapDelta = delta, Iv = TestUtil.Random(rng, 16) };

                            // A ciphertext whose plaintext has a 1..15-byte pad block, or (invalid) random last bytes.
                            byte[] pt = TestUtil.Random(rng, length - 1 - rng.Next(15));
                            c.Input = mode == CipherMode.ECB ? stock.EncryptEcb(pt, PaddingMode.PKCS7) : stock.EncryptCbc(pt, c.Iv, PaddingMode.PKCS7);
                            if (!validPadding)
                            {
                                c.Input = mode == CipherMode.ECB ? stock.EncryptEcb(TestUtil.Random(rng, c.Input.Length), PaddingMode.None) : stock.EncryptCbc(TestUtil.Random(rng, c.Input.Length), c.Iv, PaddingMode.None);
                            }

                            c.InputKind = validPadding ? "ciphertext" : "random padding";
                            c.DestLength = (validPadding ? pt.Length : c.Input.Length) - shortBy;
                            Place(c);
                            Outcome expected = Run(stock, c);
                            Outcome actual = Run(cached, c);
                            failedCalls += expected.Error is not null || expected.TryResult == false ? 1 : 0;
                            if (Compare(stock, c, expected, actual) is string problem)
                            {
                                failures.Add($"{c}: {problem}");
                            }
                        }
                    }
                }
            }
        }

        Assert.True(failures.Count == 0, string.Join(Environment.NewLine, failures.GetRange(0, Math.Min(25, failures.Count))));
        Assert.True(failedCalls > index / 3, $"only {failedCalls} of {index} cases failed on stock: the shapes are not exercised");
    }

    /// <summary>Self-check of the harness: stock against a second stock instance must produce no mismatch.</summary>
    [Fact]
    public void Harness_finds_no_difference_between_two_stock_instances()
    {
        using Aes other = Aes.Create();
        RunDifferential("stock-vs-stock", other, 3_000);
    }

    private void RunDifferential(string backend, SymmetricAlgorithm cached, int cases)
    {
        var rng = new Random(Seed);
        var keys = new List<byte[]>();
        foreach (int size in s_keySizes)
        {
            for (int i = 0; i < 3; i++)
            {
                keys.Add(TestUtil.Random(rng, size));
            }
        }

        using Aes stock = Aes.Create();
        int keyIndex = -1;
        var failures = new List<string>();
        var stats = new Dictionary<string, int>(StringComparer.Ordinal);
        var sw = Stopwatch.StartNew();

        for (int n = 0; n < cases && failures.Count < 25; n++)
        {
            // Keep the key most of the time so the cached handles are reused; change it now and then.
            if (keyIndex < 0 || rng.Next(20) == 0)
            {
                keyIndex = rng.Next(keys.Count);
                cached.Key = keys[keyIndex];
                stock.Key = keys[keyIndex];
            }

            Case c = MakeCase(rng, stock, n, keyIndex);
            Outcome expected = Run(stock, c);
            Outcome actual = Run(cached, c);
            string? problem = Compare(stock, c, expected, actual);
            if (problem is not null)
            {
                failures.Add($"{c}: {problem}");
            }

            string bucket = expected.Error?.GetType().Name ?? (expected.TryResult == false ? "false" : "ok");
            stats[bucket] = stats.GetValueOrDefault(bucket) + 1;
        }

        _output.WriteLine($"{backend}: {cases} cases in {sw.ElapsedMilliseconds} ms; stock outcomes: " +
            string.Join(", ", stats));
        if (failures.Count > 0)
        {
            Assert.Fail($"{failures.Count} mismatches with stock (first ones):{Environment.NewLine}" +
                string.Join(Environment.NewLine, failures));
        }

        // Enough of each outcome that the run covers the success and failure paths.
        Assert.True(stats.GetValueOrDefault("ok") > cases / 2, "too few successful cases");
        Assert.True(stats.GetValueOrDefault("CryptographicException") > cases / 200, "too few CryptographicException cases");
        Assert.True(stats.GetValueOrDefault("false") > cases / 200, "too few destination-too-small cases");
    }

    private static Case MakeCase(Random rng, Aes stock, int index, int keyIndex)
    {
        var c = new Case { Index = index, KeyIndex = keyIndex };
        int m = rng.Next(10);
        c.Mode = m < 4 ? CipherMode.ECB : m < 8 || !BackendData.StockCfbWorks ? CipherMode.CBC : CipherMode.CFB;
        c.Encrypt = rng.Next(2) == 0;
        c.Padding = rng.Next(60) == 0 ? (PaddingMode)(rng.Next(2) == 0 ? 0 : 6) : (PaddingMode)(1 + rng.Next(5));
        c.Feedback = rng.Next(2) == 0 ? 8 : 128;
        if (rng.Next(60) == 0)
        {
            c.Feedback = new[] { 0, 7, 16, 64, 136, 256, -8 }[rng.Next(7)];
        }

        c.Family = (Family)rng.Next(4);
        c.Iv = TestUtil.Random(rng, rng.Next(200) == 0 ? new[] { 0, 8, 15, 17, 32 }[rng.Next(5)] : 16);

        // Lengths 0..1100, biased towards small and block-edge values.
        int len = rng.Next(4) switch
        {
            0 => rng.Next(MaxLength + 1),
            1 => rng.Next(70),
            2 => 16 * rng.Next(5) + new[] { -1, 0, 0, 1 }[rng.Next(4)],
            _ => 16 * rng.Next(MaxLength / 16 + 1),
        };
        len = Math.Clamp(len, 0, MaxLength);

        int? resultLength = null;
        if (c.Encrypt)
        {
            c.Input = TestUtil.Random(rng, len);
            c.InputKind = "random plaintext";
            resultLength = CiphertextLength(stock, c, len);
        }
        else if (rng.Next(5) == 0)
        {
            c.Input = TestUtil.Random(rng, len);
            c.InputKind = "random bytes";
        }
        else
        {
            // A real ciphertext of a random plaintext, usually with the same padding, sometimes with another one.
            PaddingMode encPadding = rng.Next(8) == 0 ? (PaddingMode)(1 + rng.Next(5)) : c.Padding;
            if (encPadding is < PaddingMode.None or > PaddingMode.ISO10126)
            {
                encPadding = PaddingMode.PKCS7;
            }

            byte[] pt = TestUtil.Random(rng, len);
            byte[]? ct = TryStockEncrypt(stock, c, pt, encPadding);
            if (ct is null)
            {
                // Not encryptable as asked (e.g. None with a partial block, bad feedback or IV): use the plaintext bytes.
                c.Input = pt;
                c.InputKind = "random bytes";
            }
            else
            {
                c.Input = ct;
                c.InputKind = encPadding == c.Padding ? "ciphertext" : $"ciphertext with {encPadding}";
                if (encPadding == c.Padding && c.Padding is not PaddingMode.Zeros and not PaddingMode.None)
                {
                    resultLength = pt.Length;
                }
            }
        }

        int baseLength = c.Encrypt ? resultLength ?? c.Input.Length : c.Input.Length;
        var choices = new List<int> { baseLength, baseLength, baseLength - 1, baseLength + 1, baseLength + 17, baseLength - 16, baseLength - 17 };
        if (resultLength is int r)
        {
            choices.Add(r);
            choices.Add(r);
            choices.Add(r - 1);
        }

        c.DestLength = Math.Max(0, choices[rng.Next(choices.Count)]);

        int l = rng.Next(8);
        c.Layout = c.Family is Family.ByteArray or Family.SpanAlloc || l < 4 ? Layout.Separate : l < 6 ? Layout.InPlace : Layout.Overlap;
        c.OverlapDelta = c.Layout == Layout.Overlap ? new[] { 8, -8, 16, -16, 1, 24 }[rng.Next(6)] : 0;
        Place(c);
        return c;
    }

    // Lays out the caller's buffer: a separate destination, or input and destination in one array at OverlapDelta.
    private static void Place(Case c)
    {
        const int margin = 40;
        if (c.Layout == Layout.Separate)
        {
            c.Buffer = TestUtil.Filled(c.DestLength);
            return;
        }

        c.InOffset = margin;
        c.OutOffset = margin + c.OverlapDelta;
        int size = Math.Max(c.InOffset + c.Input.Length, c.OutOffset + c.DestLength) + margin;
        c.Buffer = TestUtil.Filled(size);
        c.Input.CopyTo(c.Buffer, c.InOffset);
    }

    private static int? CiphertextLength(Aes stock, Case c, int len)
    {
        try
        {
            return c.Mode switch
            {
                CipherMode.ECB => stock.GetCiphertextLengthEcb(len, c.Padding),
                CipherMode.CBC => stock.GetCiphertextLengthCbc(len, c.Padding),
                _ => stock.GetCiphertextLengthCfb(len, c.Padding, c.Feedback),
            };
        }
        catch (ArgumentException)
        {
            return null;
        }
    }

    private static byte[]? TryStockEncrypt(Aes stock, Case c, byte[] pt, PaddingMode padding)
    {
        try
        {
            return c.Mode switch
            {
                CipherMode.ECB => stock.EncryptEcb(pt, padding),
                CipherMode.CBC => stock.EncryptCbc(pt, c.Iv, padding),
                _ => stock.EncryptCfb(pt, c.Iv, padding, c.Feedback),
            };
        }
        catch (Exception e) when (e is ArgumentException or CryptographicException)
        {
            return null;
        }
    }

    internal static Outcome Run(SymmetricAlgorithm alg, Case c)
    {
        var o = new Outcome { Buffer = (byte[])c.Buffer.Clone() };
        byte[] inputArray;
        ReadOnlySpan<byte> input;
        Span<byte> dest;
        if (c.Layout == Layout.Separate)
        {
            inputArray = (byte[])c.Input.Clone();
            input = inputArray;
            dest = o.Buffer;
        }
        else
        {
            inputArray = c.Input;
            input = o.Buffer.AsSpan(c.InOffset, c.Input.Length);
            dest = o.Buffer.AsSpan(c.OutOffset, c.DestLength);
        }

        byte[] iv = (byte[])c.Iv.Clone();
        try
        {
            int written;
            switch (c.Mode, c.Encrypt, c.Family)
            {
                case (CipherMode.ECB, true, Family.ByteArray): o.Allocated = alg.EncryptEcb(inputArray, c.Padding); break;
                case (CipherMode.ECB, true, Family.SpanAlloc): o.Allocated = alg.EncryptEcb(input, c.Padding); break;
                case (CipherMode.ECB, true, Family.SpanDest): o.Returned = alg.EncryptEcb(input, dest, c.Padding); break;
                case (CipherMode.ECB, true, Family.Try): o.TryResult = alg.TryEncryptEcb(input, dest, c.Padding, out written); o.Returned = written; break;
                case (CipherMode.ECB, false, Family.ByteArray): o.Allocated = alg.DecryptEcb(inputArray, c.Padding); break;
                case (CipherMode.ECB, false, Family.SpanAlloc): o.Allocated = alg.DecryptEcb(input, c.Padding); break;
                case (CipherMode.ECB, false, Family.SpanDest): o.Returned = alg.DecryptEcb(input, dest, c.Padding); break;
                case (CipherMode.ECB, false, Family.Try): o.TryResult = alg.TryDecryptEcb(input, dest, c.Padding, out written); o.Returned = written; break;

                case (CipherMode.CBC, true, Family.ByteArray): o.Allocated = alg.EncryptCbc(inputArray, iv, c.Padding); break;
                case (CipherMode.CBC, true, Family.SpanAlloc): o.Allocated = alg.EncryptCbc(input, iv, c.Padding); break;
                case (CipherMode.CBC, true, Family.SpanDest): o.Returned = alg.EncryptCbc(input, iv, dest, c.Padding); break;
                case (CipherMode.CBC, true, Family.Try): o.TryResult = alg.TryEncryptCbc(input, iv, dest, out written, c.Padding); o.Returned = written; break;
                case (CipherMode.CBC, false, Family.ByteArray): o.Allocated = alg.DecryptCbc(inputArray, iv, c.Padding); break;
                case (CipherMode.CBC, false, Family.SpanAlloc): o.Allocated = alg.DecryptCbc(input, iv, c.Padding); break;
                case (CipherMode.CBC, false, Family.SpanDest): o.Returned = alg.DecryptCbc(input, iv, dest, c.Padding); break;
                case (CipherMode.CBC, false, Family.Try): o.TryResult = alg.TryDecryptCbc(input, iv, dest, out written, c.Padding); o.Returned = written; break;

                case (CipherMode.CFB, true, Family.ByteArray): o.Allocated = alg.EncryptCfb(inputArray, iv, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, true, Family.SpanAlloc): o.Allocated = alg.EncryptCfb(input, iv, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, true, Family.SpanDest): o.Returned = alg.EncryptCfb(input, iv, dest, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, true, Family.Try): o.TryResult = alg.TryEncryptCfb(input, iv, dest, out written, c.Padding, c.Feedback); o.Returned = written; break;
                case (CipherMode.CFB, false, Family.ByteArray): o.Allocated = alg.DecryptCfb(inputArray, iv, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, false, Family.SpanAlloc): o.Allocated = alg.DecryptCfb(input, iv, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, false, Family.SpanDest): o.Returned = alg.DecryptCfb(input, iv, dest, c.Padding, c.Feedback); break;
                case (CipherMode.CFB, false, Family.Try): o.TryResult = alg.TryDecryptCfb(input, iv, dest, out written, c.Padding, c.Feedback); o.Returned = written; break;
                default: throw new InvalidOperationException("unreachable");
            }
        }
#pragma warning disable CA1031 // the exception is the observed outcome
        catch (Exception e)
#pragma warning restore CA1031
        {
            o.Error = e;
        }

        if (!c.Iv.AsSpan().SequenceEqual(iv))
        {
            o.Error ??= new InvalidOperationException("the caller's IV array was modified");
        }

        if (c.Layout == Layout.Separate && !c.Input.AsSpan().SequenceEqual(inputArray))
        {
            o.Error ??= new InvalidOperationException("the caller's separate input array was modified");
        }

        return o;
    }

    private static readonly HashSet<string> s_listedMessages = new(StringComparer.Ordinal)
    {
        TestUtil.IncompleteBlockMessage,
        TestUtil.BadPaddingMessage,
        TestUtil.DestinationTooShortMessage,
    };

    private static string? Compare(Aes stock, Case c, Outcome expected, Outcome actual)
    {
        if (expected.Error is InvalidOperationException)
        {
            return "stock itself misbehaved: " + expected.Error.Message;
        }

        if (expected.Error is not null || actual.Error is not null)
        {
            if (expected.Error is null)
            {
                return $"stock succeeded, CachedAes threw {actual.Error}";
            }

            if (actual.Error is null)
            {
                return $"stock threw {expected.Error.GetType().Name} '{expected.Error.Message}', CachedAes did not";
            }

            if (expected.Error.GetType() != actual.Error.GetType())
            {
                return $"exception type: stock {expected.Error.GetType().Name} '{expected.Error.Message}', CachedAes {actual.Error}";
            }

            if (s_listedMessages.Contains(expected.Error.Message) && expected.Error.Message != actual.Error.Message)
            {
                return $"message: stock '{expected.Error.Message}', CachedAes '{actual.Error.Message}'";
            }

            if (expected.Error is ArgumentException ea && ((ArgumentException)actual.Error).ParamName != ea.ParamName)
            {
                return $"ParamName: stock '{ea.ParamName}', CachedAes '{((ArgumentException)actual.Error).ParamName}'";
            }

            return NoNewData(c, actual) ?? SameBuffer(expected, actual, "after the exception");
        }

        if (expected.TryResult != actual.TryResult || expected.Returned != actual.Returned)
        {
            return $"result: stock ({expected.TryResult}, {expected.Returned}), CachedAes ({actual.TryResult}, {actual.Returned})";
        }

        if (expected.TryResult == false)
        {
            return NoNewData(c, actual) ?? SameBuffer(expected, actual, "after returning false");
        }

        if (c.Encrypt && c.Padding == PaddingMode.ISO10126)
        {
            return CompareIso10126(stock, c, expected, actual);
        }

        if (expected.Allocated is not null && !expected.Allocated.AsSpan().SequenceEqual(actual.Allocated))
        {
            return $"bytes: stock {TestUtil.Hex(expected.Allocated)}, CachedAes {TestUtil.Hex(actual.Allocated ?? [])}";
        }

        int diff = expected.Buffer.AsSpan().CommonPrefixLength(actual.Buffer);
        return diff == expected.Buffer.Length
            ? null
            : $"caller buffer differs from stock's at byte {diff} (result written {expected.Returned})";
    }

    /// <summary>After a failure the caller's buffer holds exactly what stock leaves in it (which bytes are zeroed, which are kept).</summary>
    private static string? SameBuffer(Outcome expected, Outcome actual, string when)
    {
        int same = expected.Buffer.AsSpan().CommonPrefixLength(actual.Buffer);
        return same == expected.Buffer.Length
            ? null
            : $"{when}, caller buffer byte {same} is 0x{actual.Buffer[same]:x2}, stock leaves 0x{expected.Buffer[same]:x2}";
    }

    /// <summary>After a failure the buffer may hold only what it held before or zeros.</summary>
    private static string? NoNewData(Case c, Outcome actual)
    {
        for (int i = 0; i < actual.Buffer.Length; i++)
        {
            if (actual.Buffer[i] != c.Buffer[i] && actual.Buffer[i] != 0)
            {
                return $"after the failure, caller buffer byte {i} is 0x{actual.Buffer[i]:x2} (was 0x{c.Buffer[i]:x2})";
            }
        }

        return null;
    }

    /// <summary>
    /// ISO 10126 pad bytes are random: compare everything else. Both results are decrypted raw (no padding) by stock and
    /// compared except for the random pad bytes; the buffer bytes outside the result must be identical.
    /// </summary>
    private static string? CompareIso10126(Aes stock, Case c, Outcome expected, Outcome actual)
    {
        byte[] stockCt, cachedCt;
        if (expected.Allocated is not null)
        {
            stockCt = expected.Allocated;
            cachedCt = actual.Allocated ?? [];
            if (stockCt.Length != cachedCt.Length)
            {
                return $"length: stock {stockCt.Length}, CachedAes {cachedCt.Length}";
            }
        }
        else
        {
            int start = c.Layout == Layout.Separate ? 0 : c.OutOffset;
            int len = expected.Returned!.Value;
            stockCt = expected.Buffer.AsSpan(start, len).ToArray();
            cachedCt = actual.Buffer.AsSpan(start, len).ToArray();
            for (int i = 0; i < expected.Buffer.Length; i++)
            {
                if ((i < start || i >= start + len) && expected.Buffer[i] != actual.Buffer[i])
                {
                    return $"caller buffer byte {i} outside the result differs from stock's";
                }
            }
        }

        byte[] a = RawDecrypt(stock, c, stockCt);
        byte[] b = RawDecrypt(stock, c, cachedCt);
        int ptLen = c.Input.Length;
        for (int i = 0; i < a.Length; i++)
        {
            bool randomPad = i >= ptLen && i < a.Length - 1;
            if (!randomPad && a[i] != b[i])
            {
                return $"ISO10126: decrypted byte {i} differs (stock 0x{a[i]:x2}, CachedAes 0x{b[i]:x2})";
            }
        }

        return null;
    }

    private static byte[] RawDecrypt(Aes stock, Case c, byte[] ct) => c.Mode switch
    {
        CipherMode.ECB => stock.DecryptEcb(ct, PaddingMode.None),
        CipherMode.CBC => stock.DecryptCbc(ct, c.Iv, PaddingMode.None),
        _ => stock.DecryptCfb(ct, c.Iv, PaddingMode.None, c.Feedback),
    };
}
