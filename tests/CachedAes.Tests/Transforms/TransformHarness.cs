using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Transforms;

/// <summary>What a transform is made for: mode (with CFB's feedback size), padding, direction and key size.</summary>
internal readonly record struct TransformConfig(CipherMode Mode, int Feedback, PaddingMode Padding, bool Encrypt, int KeyBytes)
{
    /// <summary>ISO 10126 encryption pads with random bytes: those outputs can only be compared up to the last block.</summary>
    public bool RandomPadding => Encrypt && Padding == PaddingMode.ISO10126;

    /// <summary>A decryptor that removes padding holds the last whole block back in TransformBlock.</summary>
    public bool RemovesPadding => !Encrypt && Padding is PaddingMode.PKCS7 or PaddingMode.ANSIX923 or PaddingMode.ISO10126;

    public string ModeName => Mode == CipherMode.CFB ? $"CFB{Feedback}" : Mode.ToString();

    public TransformConfig Opposite => this with { Encrypt = !Encrypt };

    public override string ToString() => $"{ModeName} {Padding} {(Encrypt ? "encrypt" : "decrypt")} AES-{KeyBytes * 8}";

    /// <summary>Sets mode, padding and feedback size (not the key) on an instance.</summary>
    public void Apply(SymmetricAlgorithm aes)
    {
        aes.Mode = Mode;
        aes.Padding = Padding;
        aes.FeedbackSize = Feedback;
    }

    /// <summary>The four shapes CachedAes must handle: ECB and CBC (cached), CFB8 and CFB128 (stock's).</summary>
    public static (CipherMode Mode, int Feedback)[] Modes(bool withCfb) => withCfb
        ? [(CipherMode.ECB, 128), (CipherMode.CBC, 128), (CipherMode.CFB, 8), (CipherMode.CFB, 128)]
        : [(CipherMode.ECB, 128), (CipherMode.CBC, 128)];

    public static readonly PaddingMode[] Paddings =
        [PaddingMode.None, PaddingMode.PKCS7, PaddingMode.Zeros, PaddingMode.ANSIX923, PaddingMode.ISO10126];

    public static readonly int[] KeySizes = [16, 24, 32];
}

/// <summary>What one call did: its return value or exception, and the caller's buffers afterwards.</summary>
internal sealed class Observed
{
    public Type? ErrorType { get; set; }

    public string? ParamName { get; set; }

    public string? Message { get; set; }

    public int? Returned { get; set; }

    public byte[]? Result { get; set; }

    public byte[]? Input { get; set; }

    public byte[]? Output { get; set; }

    public bool Failed => ErrorType is not null;

    public string Describe() => ErrorType is not null
        ? $"{ErrorType.Name}(ParamName: {ParamName ?? "null"}) \"{Message}\""
        : Returned is int n ? $"returned {n}" : Result is not null ? $"returned {Result.Length} bytes" : "completed";
}

/// <summary>
/// Runs the same call on stock's transform and on the candidate's (CachedAes's), each on its own copy of the caller's
/// buffers, and says how the two differ: exception type and parameter name, return value, returned bytes, and every byte
/// of the input and output buffers afterwards. Nothing about the candidate is hard-coded: stock is the oracle.
/// </summary>
internal static class Side
{
    public static Observed Call(ICryptoTransform transform, byte[]? input, byte[]? output, bool sameBuffer, Func<ICryptoTransform, byte[]?, byte[]?, object?> call)
    {
        byte[]? inCopy = (byte[]?)input?.Clone();
        byte[]? outCopy = sameBuffer ? inCopy : (byte[]?)output?.Clone();
        Observed observed = Call(() => call(transform, inCopy, outCopy));
        observed.Input = inCopy;
        observed.Output = outCopy;
        return observed;
    }

    public static Observed Call(Func<object?> call)
    {
        var observed = new Observed();
        try
        {
            switch (call())
            {
                case int n:
                    observed.Returned = n;
                    break;
                case byte[] bytes:
                    observed.Result = bytes;
                    break;
            }
        }
        catch (Exception e)
        {
            Record(observed, e);
        }

        return observed;
    }

    public static void Record(Observed observed, Exception e)
    {
        observed.ErrorType = e.GetType();
        observed.ParamName = (e as ArgumentException)?.ParamName;
        observed.Message = e.Message;
    }

    /// <summary>
    /// Null when the candidate did what stock did; otherwise the first difference. With <paramref name="randomTail"/> (ISO
    /// 10126 encryption) the returned bytes may differ in their last 16 bytes, where stock's own output is random.
    /// </summary>
    public static string? Difference(Observed stock, Observed candidate, bool randomTail = false)
    {
        if (stock.ErrorType != candidate.ErrorType)
        {
            return $"stock: {stock.Describe()}; candidate: {candidate.Describe()}";
        }

        if (stock.ParamName != candidate.ParamName)
        {
            return $"ParamName: stock {stock.ParamName ?? "null"}, candidate {candidate.ParamName ?? "null"} ({stock.ErrorType?.Name})";
        }

        if (stock.Returned != candidate.Returned)
        {
            return $"returned: stock {stock.Returned}, candidate {candidate.Returned}";
        }

        if ((stock.Result is null) != (candidate.Result is null))
        {
            return $"returned bytes: stock {(stock.Result is null ? "none" : "some")}, candidate {(candidate.Result is null ? "none" : "some")}";
        }

        if (stock.Result is not null && BytesDiffer(stock.Result, candidate.Result!, randomTail) is string resultProblem)
        {
            return "returned bytes: " + resultProblem;
        }

        if (BytesDiffer(stock.Output, candidate.Output, randomTail: false) is string outputProblem)
        {
            return "output buffer afterwards: " + outputProblem;
        }

        return BytesDiffer(stock.Input, candidate.Input, randomTail: false) is string inputProblem ? "input buffer afterwards: " + inputProblem : null;
    }

    public static string? BytesDiffer(byte[]? stock, byte[]? candidate, bool randomTail)
    {
        if (stock is null || candidate is null)
        {
            return stock == candidate ? null : "one side has no buffer";
        }

        if (stock.Length != candidate.Length)
        {
            return $"length: stock {stock.Length}, candidate {candidate.Length}";
        }

        int compared = randomTail ? Math.Max(0, stock.Length - 16) : stock.Length;
        for (int i = 0; i < compared; i++)
        {
            if (stock[i] != candidate[i])
            {
                return $"byte {i} of {stock.Length}: stock 0x{stock[i]:x2}, candidate 0x{candidate[i]:x2}";
            }
        }

        return null;
    }
}

/// <summary>
/// A stock transform and the candidate's, made for the same key, IV and settings, used side by side. Where stock's own
/// transform cannot be reused for a second message on this platform (<see cref="BackendData.StockCbcTransformsReusable"/>,
/// false under Wine 8.0, whose CBC keeps its chaining state in the key), the stock side is replaced by a new stock
/// transform for the same key and IV after each message; by stock's contract that is the same thing.
/// </summary>
internal sealed class TransformPair : IDisposable
{
    private readonly TransformConfig _config;
    private readonly byte[] _key;
    private readonly byte[]? _iv;
    private readonly bool _recreateStock;

    public TransformPair(TransformConfig config, byte[] key, byte[]? iv, ICryptoTransform stock, ICryptoTransform candidate)
    {
        _config = config;
        _key = (byte[])key.Clone();
        _iv = (byte[]?)iv?.Clone();
        _recreateStock = config.Mode == CipherMode.CBC && !BackendData.StockCbcTransformsReusable;
        Stock = stock;
        Candidate = candidate;
    }

    public ICryptoTransform Stock { get; private set; }

    public ICryptoTransform Candidate { get; }

    public TransformConfig Config => _config;

    /// <summary>The key the transforms were made for.</summary>
    public byte[] ConfigKey => _key;

    /// <summary>The IV the transforms were made for (ignored by ECB).</summary>
    public byte[]? ConfigIv => _iv;

    /// <summary>Call after every TransformFinalBlock that completed on both sides.</summary>
    public void MessageDone()
    {
        if (_recreateStock)
        {
            Stock.Dispose();
            Stock = StockTransforms.Create(_config, _key, _iv);
        }
    }

    public void Dispose()
    {
        Stock.Dispose();
        Candidate.Dispose();
    }
}

/// <summary>Stock transforms and stock ciphertexts, made directly on stock <see cref="Aes"/>.</summary>
internal static class StockTransforms
{
    public static ICryptoTransform Create(TransformConfig config, byte[] key, byte[]? iv)
    {
        using Aes aes = Aes.Create();
        config.Apply(aes);
        return config.Encrypt ? aes.CreateEncryptor(key, iv) : aes.CreateDecryptor(key, iv);
    }

    /// <summary>One whole message through a fresh stock transform.</summary>
    public static byte[] Run(TransformConfig config, byte[] key, byte[]? iv, byte[] input)
    {
        using ICryptoTransform t = Create(config, key, iv);
        return t.TransformFinalBlock(input, 0, input.Length);
    }

    /// <summary>Stock's ciphertext of <paramref name="plaintext"/> with the settings of <paramref name="config"/> and a
    /// padding of its own (for example None, to make a ciphertext whose padding is wrong on purpose).</summary>
    public static byte[] Encrypt(TransformConfig config, PaddingMode padding, byte[] key, byte[]? iv, byte[] plaintext) =>
        Run(config with { Encrypt = true, Padding = padding }, key, iv, plaintext);
}

/// <summary>Random data and buffer shapes.</summary>
internal static class Shapes
{
    public static byte[] Bytes(Random rng, int length)
    {
        byte[] b = new byte[length];
        rng.NextBytes(b);
        return b;
    }

    /// <summary>A message length: mostly short (what tokens and records are), sometimes up to a few hundred bytes.</summary>
    public static int MessageLength(Random rng) => rng.Next(10) switch
    {
        < 5 => rng.Next(0, 49),
        < 8 => rng.Next(49, 201),
        _ => rng.Next(201, 700),
    };

    /// <summary>Splits <paramref name="total"/> (whole blocks) into TransformBlock chunks: single blocks, everything, or random.</summary>
    public static List<int> Chunks(Random rng, int total)
    {
        var chunks = new List<int>();
        while (total > 0)
        {
            int blocks = total / 16;
            int chunk = rng.Next(10) switch
            {
                < 4 => 16,
                < 6 => total,
                _ => 16 * rng.Next(1, blocks + 1),
            };
            chunks.Add(chunk);
            total -= chunk;
        }

        return chunks;
    }

    public static byte[] Canary(int length) => TestUtil.Filled(length);
}
