using System;
using System.Collections.Generic;
using System.IO;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// Random scripts of transform calls, run on stock and on a candidate side by side. Each script makes a transform pair
/// (<c>CreateEncryptor()</c>, <c>CreateEncryptor(aes.Key, aes.IV)</c> or another key and IV), sends one to three messages
/// through it and compares every call. Mismatches are collected in <see cref="Failures"/>; <see cref="Counts"/> says which
/// paths ran, so a test can check that its run covered what it claims.
/// </summary>
internal sealed class TransformScripts
{
    private const int MaxFailures = 20;

    private readonly Random _rng;
    private readonly Func<SymmetricAlgorithm> _candidateFactory;

    public TransformScripts(int seed, Func<SymmetricAlgorithm> candidateFactory)
    {
        _rng = new Random(seed);
        _candidateFactory = candidateFactory;
    }

    public List<string> Failures { get; } = [];

    public Dictionary<string, int> Counts { get; } = new(StringComparer.Ordinal);

    public bool Full => Failures.Count >= MaxFailures;

    /// <summary>
    /// Only separate input and output buffers. In place or overlapping, a decryptor that holds a block back writes that
    /// block's plaintext over input it has not read yet (stock's own behaviour: the message comes out wrong, and
    /// CachedAes must do the same); tests that need every valid message to succeed set this.
    /// </summary>
    public bool SeparateBuffersOnly { get; set; }

    private void Count(string what) => Counts[what] = Counts.GetValueOrDefault(what) + 1;

    private bool Check(string? problem, string where)
    {
        if (problem is null)
        {
            return true;
        }

        if (Failures.Count < MaxFailures)
        {
            Failures.Add($"{where}: {problem}");
        }

        return false;
    }

    /// <summary>Runs <paramref name="scriptsPerConfig"/> scripts for every padding, direction and key size of one mode.</summary>
    public void RunAllConfigs(CipherMode mode, int feedback, int scriptsPerConfig, bool cryptoStream)
    {
        foreach (PaddingMode padding in TransformConfig.Paddings)
        {
            foreach (bool encrypt in new[] { true, false })
            {
                foreach (int keyBytes in TransformConfig.KeySizes)
                {
                    var config = new TransformConfig(mode, feedback, padding, encrypt, keyBytes);
                    using Aes stock = Aes.Create();
                    using SymmetricAlgorithm candidate = _candidateFactory();
                    byte[] key = Shapes.Bytes(_rng, keyBytes);
                    byte[] iv = Shapes.Bytes(_rng, 16);
                    foreach (SymmetricAlgorithm a in new[] { stock, candidate })
                    {
                        config.Apply(a);
                        a.Key = key;
                        a.IV = iv;
                    }

                    for (int i = 0; i < scriptsPerConfig && !Full; i++)
                    {
                        // Now and then the instance gets a new IV or key between transforms.
                        if (_rng.Next(6) == 0)
                        {
                            iv = Shapes.Bytes(_rng, 16);
                            stock.IV = candidate.IV = iv;
                        }

                        if (_rng.Next(10) == 0)
                        {
                            key = Shapes.Bytes(_rng, keyBytes);
                            stock.Key = candidate.Key = key;
                        }

                        string label = $"{config} script {i}";
                        if (cryptoStream)
                        {
                            StreamScript(config, stock, candidate, key, iv, label);
                        }
                        else
                        {
                            BlockScript(config, stock, candidate, key, iv, label);
                        }
                    }
                }
            }
        }
    }

    /// <summary>
    /// Makes a transform pair the way the script's coin says: the instance's own key and IV, the same passed back in
    /// (<c>CreateEncryptor(aes.Key, aes.IV)</c>, the Learn sample's shape), or a different key and IV.
    /// </summary>
    public TransformPair MakePair(TransformConfig config, Aes stock, SymmetricAlgorithm candidate, byte[] key, byte[] iv, out string how)
    {
        int variant = _rng.Next(3);
        byte[] useKey = key;
        byte[] useIv = iv;
        if (variant == 2)
        {
            useKey = Shapes.Bytes(_rng, TransformConfig.KeySizes[_rng.Next(3)]);
            useIv = Shapes.Bytes(_rng, 16);
        }

        how = variant switch { 0 => "Create*()", 1 => "Create*(aes.Key, aes.IV)", _ => $"Create*(other {useKey.Length * 8}-bit key, IV)" };
        ICryptoTransform Make(SymmetricAlgorithm a) => variant switch
        {
            0 => config.Encrypt ? a.CreateEncryptor() : a.CreateDecryptor(),
            1 => config.Encrypt ? a.CreateEncryptor(a.Key, a.IV) : a.CreateDecryptor(a.Key, a.IV),
            _ => config.Encrypt ? a.CreateEncryptor(useKey, useIv) : a.CreateDecryptor(useKey, useIv),
        };

        Count("pair " + how.Split('(')[0] + (variant == 2 ? "(other key)" : variant == 1 ? "(aes.Key, aes.IV)" : "()"));
        return new TransformPair(config, useKey, useIv, Make(stock), Make(candidate));
    }

    public static string Properties(ICryptoTransform t) =>
        $"InputBlockSize {t.InputBlockSize}, OutputBlockSize {t.OutputBlockSize}, CanTransformMultipleBlocks {t.CanTransformMultipleBlocks}, CanReuseTransform {t.CanReuseTransform}";

    /// <summary>The input for one message: plaintext, or stock's ciphertext of one (sometimes damaged: a bad pad, a partial
    /// block, random bytes).</summary>
    public byte[] MessageInput(TransformConfig config, byte[] key, byte[] iv, out byte[] plaintext, out string kind)
    {
        int length = Shapes.MessageLength(_rng);
        bool wholeBlocksOnly = config.Padding == PaddingMode.None && config.ModeName != "CFB8";
        if (wholeBlocksOnly && _rng.Next(8) != 0)
        {
            length -= length % 16;
        }

        plaintext = Shapes.Bytes(_rng, length);
        kind = length % 16 == 0 ? "whole blocks" : "partial block";
        if (config.Encrypt)
        {
            return plaintext;
        }

        if (wholeBlocksOnly)
        {
            plaintext = plaintext.AsSpan(0, length - length % 16).ToArray();
        }

        byte[] ciphertext = StockTransforms.Encrypt(config, config.Padding, key, iv, plaintext);
        kind = "ciphertext";
        switch (_rng.Next(12))
        {
            case 0 when ciphertext.Length > 0:
                ciphertext[ciphertext.Length - 1 - _rng.Next(Math.Min(16, ciphertext.Length))] ^= (byte)(1 << _rng.Next(8));
                kind = "ciphertext with a bit flipped in its last block";
                break;
            case 1 when ciphertext.Length > 0:
                ciphertext = ciphertext.AsSpan(0, ciphertext.Length - _rng.Next(1, Math.Min(16, ciphertext.Length) + 1)).ToArray();
                kind = "truncated ciphertext";
                break;
            case 2:
                _rng.NextBytes(ciphertext);
                kind = "random bytes";
                break;
        }

        return ciphertext;
    }

    /// <summary>TransformBlock in random chunks and layouts, then TransformFinalBlock on the rest; one to three messages.</summary>
    public void BlockScript(TransformConfig config, Aes stock, SymmetricAlgorithm candidate, byte[] key, byte[] iv, string label)
    {
        TransformPair pair = MakePair(config, stock, candidate, key, iv, out string how);
        label = $"{label}, {how}";
        if (!Check(Difference(Properties(pair.Stock), Properties(pair.Candidate)), label + ": properties"))
        {
            pair.Dispose();
            return;
        }

        int messages = _rng.Next(1, 4);
        bool intact = true;
        for (int m = 0; m < messages && intact; m++)
        {
            byte[] input = MessageInput(config, pair.ConfigKey, pair.ConfigIv!, out byte[] plaintext, out string kind);
            string where = $"{label}, message {m} ({input.Length} bytes of {kind})";
            intact = OneMessage(pair, input, plaintext, where);
        }

        // Most transforms are disposed; some are left to the garbage collector, as real code does (the Learn sample).
        if (_rng.Next(8) == 0)
        {
            pair.Stock.Dispose();
            Count("candidate transform left undisposed");
            return;
        }

        pair.Dispose();
        Check(Difference(Properties(pair.Stock), Properties(pair.Candidate)), label + ": properties after Dispose");
        byte[] block = new byte[16];
        Check(Side.Difference(
            Side.Call(pair.Stock, block, null, false, (t, i, _) => t.TransformFinalBlock(i!, 0, 16)),
            Side.Call(pair.Candidate, block, null, false, (t, i, _) => t.TransformFinalBlock(i!, 0, 16))), label + ": TransformFinalBlock after Dispose");
    }

    /// <summary>One message through the pair; false when stock failed it (the pair is then not used again).</summary>
    public bool OneMessage(TransformPair pair, byte[] input, byte[] plaintext, string where)
    {
        TransformConfig config = pair.Config;
        int split = 16 * _rng.Next(0, (input.Length / 16) + 1);
        var stockMessage = new List<byte>();
        var candidateMessage = new List<byte>();
        int position = 0;
        int calls = 0;
        foreach (int chunk in Shapes.Chunks(_rng, split))
        {
            calls++;
            (byte[] buffer, byte[]? output, bool same, int inOffset, int outOffset, string layout) = Layout(input, position, chunk);
            Observed s = Side.Call(pair.Stock, buffer, output, same, (t, i, o) => t.TransformBlock(i!, inOffset, chunk, o!, outOffset));
            Observed c = Side.Call(pair.Candidate, buffer, output, same, (t, i, o) => t.TransformBlock(i!, inOffset, chunk, o!, outOffset));
            Count("TransformBlock " + layout);
            if (s.Returned is int n && n < chunk)
            {
                Count("TransformBlock held back a block");
            }

            if (!Check(Side.Difference(s, c), $"{where}: TransformBlock({chunk} bytes at {inOffset}, {layout}, out at {outOffset}) after {position} bytes"))
            {
                return false;
            }

            if (s.Failed)
            {
                Count("TransformBlock failed on stock: " + s.ErrorType!.Name);
                return false;
            }

            stockMessage.AddRange(s.Output.AsSpan(outOffset, s.Returned!.Value).ToArray());
            candidateMessage.AddRange(c.Output.AsSpan(outOffset, c.Returned!.Value).ToArray());
            position += chunk;
        }

        int rest = input.Length - split;
        int offset = _rng.Next(0, 24);
        byte[] finalBuffer = Shapes.Bytes(_rng, offset + rest + _rng.Next(0, 24));
        input.AsSpan(split).CopyTo(finalBuffer.AsSpan(offset));
        Observed sf = Side.Call(pair.Stock, finalBuffer, null, false, (t, i, _) => t.TransformFinalBlock(i!, offset, rest));
        Observed cf = Side.Call(pair.Candidate, finalBuffer, null, false, (t, i, _) => t.TransformFinalBlock(i!, offset, rest));
        Count(rest == 0 ? "TransformFinalBlock of 0 bytes" : rest % 16 == 0 ? "TransformFinalBlock of whole blocks" : "TransformFinalBlock of a partial block");
        if (!Check(Side.Difference(sf, cf, config.RandomPadding), $"{where}: TransformFinalBlock({rest} bytes) after {split} bytes in {calls} TransformBlock calls"))
        {
            return false;
        }

        if (sf.Failed)
        {
            Count("TransformFinalBlock failed on stock: " + sf.ErrorType!.Name);
            return false;
        }

        stockMessage.AddRange(sf.Result!);
        candidateMessage.AddRange(cf.Result!);
        Count("messages completed");
        if (config.RandomPadding)
        {
            // The last block holds random pad bytes: the candidate's message must still decrypt, with stock, to the plaintext.
            if (!CheckRandomPadded(pair, candidateMessage.ToArray(), plaintext, where))
            {
                return false;
            }
        }
        else if (!Check(Side.BytesDiffer(stockMessage.ToArray(), candidateMessage.ToArray(), randomTail: false), $"{where}: whole message"))
        {
            return false;
        }

        pair.MessageDone();
        return true;
    }

    /// <summary>
    /// Where one TransformBlock call reads and writes: separate buffers at random offsets (output room exactly what stock
    /// needs or more), the same buffer in place, or the same buffer with the output 8 or 16 bytes before or after the input.
    /// </summary>
    private (byte[] Buffer, byte[]? Output, bool Same, int InOffset, int OutOffset, string Name) Layout(byte[] input, int position, int chunk)
    {
        int kind = _rng.Next(10);
        if (kind < 7 || SeparateBuffersOnly)
        {
            int inOffset = _rng.Next(0, 40);
            byte[] buffer = Shapes.Bytes(_rng, inOffset + chunk + _rng.Next(0, 20));
            input.AsSpan(position, chunk).CopyTo(buffer.AsSpan(inOffset));
            int outOffset = _rng.Next(0, 40);
            int slack = _rng.Next(3) == 0 ? 0 : _rng.Next(0, 20);
            return (buffer, Shapes.Canary(outOffset + chunk + slack), false, inOffset, outOffset, slack == 0 ? "separate, exact room" : "separate");
        }

        int shift = kind == 7 ? 0 : (_rng.Next(2) == 0 ? 8 : 16) * (_rng.Next(2) == 0 ? -1 : 1);
        int inAt = 16 + _rng.Next(0, 16);
        int outAt = inAt + shift;
        byte[] shared = Shapes.Bytes(_rng, Math.Max(inAt, outAt) + chunk + _rng.Next(0, 16));
        input.AsSpan(position, chunk).CopyTo(shared.AsSpan(inAt));
        return (shared, null, true, inAt, outAt, shift == 0 ? "in place" : $"overlapping ({shift:+#;-#})");
    }

    /// <summary>CryptoStream in write or read mode over the pair, with random piece sizes and call shapes; one to three messages.</summary>
    public void StreamScript(TransformConfig config, Aes stock, SymmetricAlgorithm candidate, byte[] key, byte[] iv, string label)
    {
        using TransformPair pair = MakePair(config, stock, candidate, key, iv, out string how);
        label = $"{label}, {how}";
        int messages = _rng.Next(1, 4);
        for (int m = 0; m < messages; m++)
        {
            byte[] input = MessageInput(config, pair.ConfigKey, pair.ConfigIv!, out byte[] plaintext, out string kind);
            bool write = _rng.Next(2) == 0;
            string where = $"{label}, message {m} ({input.Length} bytes of {kind}), CryptoStream {(write ? "write" : "read")} mode";
            bool ok = write ? WriteStream(pair, input, plaintext, where) : ReadStream(pair, input, plaintext, where);
            if (!ok)
            {
                return;
            }

            pair.MessageDone();
        }
    }

    private bool WriteStream(TransformPair pair, byte[] input, byte[] plaintext, string where)
    {
        using var stockSink = new MemoryStream();
        using var candidateSink = new MemoryStream();
        var stockStream = new CryptoStream(stockSink, pair.Stock, CryptoStreamMode.Write, leaveOpen: true);
        var candidateStream = new CryptoStream(candidateSink, pair.Candidate, CryptoStreamMode.Write, leaveOpen: true);
        bool random = pair.Config.RandomPadding;
        int position = 0;
        while (position < input.Length)
        {
            int piece = Math.Min(input.Length - position, _rng.Next(4) == 0 ? 1 : _rng.Next(1, 70));
            int how = _rng.Next(4);
            int offset = _rng.Next(0, 8);
            byte[] buffer = Shapes.Bytes(_rng, offset + piece + 3);
            input.AsSpan(position, piece).CopyTo(buffer.AsSpan(offset));
            object? Write(CryptoStream cs)
            {
                switch (how)
                {
                    case 0:
                        cs.Write(buffer, offset, piece);
                        break;
                    case 1:
                        cs.Write(buffer.AsSpan(offset, piece));
                        break;
                    case 2 when piece == 1:
                        cs.WriteByte(buffer[offset]);
                        break;
                    default:
                        cs.WriteAsync(buffer, offset, piece).GetAwaiter().GetResult();
                        break;
                }

                return null;
            }

            Observed s = Side.Call(() => Write(stockStream));
            Observed c = Side.Call(() => Write(candidateStream));
            Count("CryptoStream write call " + how);
            if (!Check(Side.Difference(s, c), $"{where}: write of {piece} bytes after {position}"))
            {
                return false;
            }

            // What has reached the underlying stream so far (blocks held back by the transform or the stream show here).
            if (!random && !Check(Side.BytesDiffer(stockSink.ToArray(), candidateSink.ToArray(), false), $"{where}: stream content after writing {position + piece} bytes"))
            {
                return false;
            }

            position += piece;
        }

        bool viaDispose = _rng.Next(2) == 0;
        Observed sf = Side.Call(() => Finish(stockStream, viaDispose));
        Observed cf = Side.Call(() => Finish(candidateStream, viaDispose));
        Count(viaDispose ? "CryptoStream write finished by Dispose" : "CryptoStream write finished by FlushFinalBlock");
        if (!Check(Side.Difference(sf, cf), $"{where}: {(viaDispose ? "Dispose" : "FlushFinalBlock")}")
            || !Check(Side.BytesDiffer(stockSink.ToArray(), candidateSink.ToArray(), random), $"{where}: stream content at the end"))
        {
            return false;
        }

        if (sf.Failed)
        {
            Count("CryptoStream failed on stock: " + sf.ErrorType!.Name);
            return false;
        }

        Observed sd = Side.Call(() => { stockStream.Dispose(); return null; });
        Observed cd = Side.Call(() => { candidateStream.Dispose(); return null; });
        return Check(Side.Difference(sd, cd), $"{where}: Dispose after the final block")
            && CheckRandomPadded(pair, candidateSink.ToArray(), plaintext, where);
    }

    private static object? Finish(CryptoStream stream, bool viaDispose)
    {
        if (viaDispose)
        {
            stream.Dispose();
        }
        else
        {
            stream.FlushFinalBlock();
        }

        return null;
    }

    private bool ReadStream(TransformPair pair, byte[] input, byte[] plaintext, string where)
    {
        using var stockStream = new CryptoStream(new MemoryStream(input, writable: false), pair.Stock, CryptoStreamMode.Read);
        using var candidateStream = new CryptoStream(new MemoryStream(input, writable: false), pair.Candidate, CryptoStreamMode.Read);
        bool random = pair.Config.RandomPadding;
        var stockRead = new List<byte>();
        var candidateRead = new List<byte>();
        for (int call = 0; call < 10_000; call++)
        {
            int size = _rng.Next(4) == 0 ? 1 : _rng.Next(1, 100);
            int how = _rng.Next(4);
            int offset = _rng.Next(0, 8);
            Observed Read(CryptoStream cs, List<byte> sink)
            {
                byte[] buffer = Shapes.Canary(offset + size + 3);
                Observed o = Side.Call(() => how switch
                {
                    0 => cs.Read(buffer, offset, size),
                    1 => cs.Read(buffer.AsSpan(offset, size)),
                    2 => cs.ReadByte(),
                    _ => cs.ReadAsync(buffer, offset, size).GetAwaiter().GetResult(),
                });
                if (how == 2 && o.Returned is int b)
                {
                    o.Returned = b < 0 ? 0 : 1;
                    buffer[offset] = (byte)Math.Max(b, 0);
                }

                if (o.Returned is int n)
                {
                    sink.AddRange(buffer.AsSpan(offset, n).ToArray());
                }

                o.Output = random ? null : buffer;
                return o;
            }

            Observed s = Read(stockStream, stockRead);
            Observed c = Read(candidateStream, candidateRead);
            Count("CryptoStream read call " + how);
            if (!Check(Side.Difference(s, c), $"{where}: read call {call} ({size} bytes, shape {how}) after {stockRead.Count} bytes"))
            {
                return false;
            }

            if (s.Failed)
            {
                Count("CryptoStream failed on stock: " + s.ErrorType!.Name);
                return false;
            }

            if (s.Returned == 0)
            {
                break;
            }
        }

        return Check(Side.BytesDiffer(stockRead.ToArray(), candidateRead.ToArray(), random), $"{where}: everything read")
            && CheckRandomPadded(pair, candidateRead.ToArray(), plaintext, where);
    }

    private bool CheckRandomPadded(TransformPair pair, byte[] candidateOutput, byte[] plaintext, string where)
    {
        if (!pair.Config.RandomPadding)
        {
            return true;
        }

        Observed back = Side.Call(() => StockTransforms.Run(pair.Config.Opposite, pair.ConfigKey, pair.ConfigIv, candidateOutput));
        return Check(back.Failed ? "stock cannot decrypt it: " + back.Describe() : Side.BytesDiffer(plaintext, back.Result, false),
            $"{where}: the candidate's ISO 10126 ciphertext decrypted with stock");
    }

    private static string? Difference(string stock, string candidate) =>
        stock == candidate ? null : $"stock: {stock}; candidate: {candidate}";
}
