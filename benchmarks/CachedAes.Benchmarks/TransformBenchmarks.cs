using System;
using System.IO;
using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CachedCryptography.Benchmarks;

/// <summary>How the code measured by <see cref="TransformShapes"/> uses a transform (AES-256-CBC, PKCS7, one fixed IV).</summary>
public enum TransformShape
{
    /// <summary>A kept instance: <c>using var t = aes.CreateEncryptor();</c> then <c>t.TransformFinalBlock</c>
    /// (IdentityModel's JWE content encryption, SqlClient's Always Encrypted, per message).</summary>
    KeptCreateEncryptor,

    /// <summary>A kept instance: <c>using var t = aes.CreateEncryptor(aes.Key, aes.IV);</c> then <c>TransformFinalBlock</c>
    /// (the Microsoft Learn sample's call; <c>aes.Key</c> and <c>aes.IV</c> are copies).</summary>
    KeptCreateEncryptorKeyIv,

    /// <summary>A kept instance: <c>using var t = aes.CreateDecryptor();</c> then <c>TransformFinalBlock</c> of the ciphertext.</summary>
    KeptCreateDecryptor,

    /// <summary>A kept instance: a <see cref="CryptoStream"/> in write mode over <c>aes.CreateEncryptor()</c> and a
    /// <see cref="MemoryStream"/>, then <c>ToArray()</c>. The transform is not disposed: the Learn sample does not, and
    /// <see cref="CryptoStream"/> never disposes its transform.</summary>
    KeptCryptoStreamWrite,

    /// <summary>As <see cref="KeptCryptoStreamWrite"/>, with the transform disposed after the stream (<c>using</c>).</summary>
    KeptCryptoStreamWriteDisposed,

    /// <summary>A kept instance: a <see cref="CryptoStream"/> in read mode over <c>aes.CreateDecryptor()</c> and a
    /// <see cref="MemoryStream"/> on the ciphertext, read into a buffer (SqlClient's decryption, the Learn sample's).
    /// The transform is not disposed.</summary>
    KeptCryptoStreamRead,

    /// <summary>As <see cref="KeptCryptoStreamRead"/>, with the transform disposed after the stream.</summary>
    KeptCryptoStreamReadDisposed,

    /// <summary>One encryptor made once and kept; each call is one <c>TransformFinalBlock</c> (it returns to its IV after
    /// each, so it can be reused).</summary>
    ReusedTransform,

    /// <summary>A new instance per message: <c>using Aes aes = Create(); aes.Key = key; aes.IV = iv;</c>,
    /// <c>using var t = aes.CreateEncryptor();</c>, <c>TransformFinalBlock</c> (IdentityModel's content encryption).</summary>
    NewInstance,
}

/// <summary>
/// The transform shapes: code that never calls a one-shot, only <c>CreateEncryptor</c>/<c>CreateDecryptor</c>
/// and <c>TransformFinalBlock</c> or a <see cref="CryptoStream"/>, written as real code writes it. Stock <c>Aes.Create()</c>
/// (baseline) against CachedAes, AES-256-CBC with PKCS7; <see cref="Size"/> is the plaintext length. Each method's global
/// setup runs its shape once and checks the output against stock's one-shot result.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByParams)]
[QuickSubset(nameof(Size), 16)]
[QuickSubset(nameof(Shape), TransformShape.KeptCreateEncryptor, TransformShape.KeptCryptoStreamWrite)]
public class TransformShapes
{
    private Func<Aes> _create = null!;
    private Aes? _kept;
    private ICryptoTransform? _reused;
    private CipherCase _call = null!;
    private byte[] _readBuffer = [];

    /// <summary>How the transform is used.</summary>
    [ParamsAllValues]
    public TransformShape Shape { get; set; }

    /// <summary>Plaintext length in bytes.</summary>
    [Params(16, 1024)]
    public int Size { get; set; }

    /// <summary>Prepares stock's instance and checks the shape's output.</summary>
    [GlobalSetup(Target = nameof(Stock))]
    public void SetupStock() => Setup(Aes.Create, "Stock");

    /// <summary>Prepares CachedAes's instance and checks the shape's output.</summary>
    [GlobalSetup(Target = nameof(Cached))]
    public void SetupCached() => Setup(CachedAes.Create, "Cached");

    /// <summary>Disposes the kept transform and instance.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _reused?.Dispose();
        _kept?.Dispose();
    }

    /// <summary>Stock <c>Aes.Create()</c> (baseline).</summary>
    [Benchmark(Baseline = true)]
    public byte[] Stock() => Run();

    /// <summary>CachedAes.</summary>
    [Benchmark]
    public byte[] Cached() => Run();

    private byte[] Run() => Shape switch
    {
        TransformShape.KeptCreateEncryptor => KeptCreateEncryptor(_kept!, _call.Plaintext),
        TransformShape.KeptCreateEncryptorKeyIv => KeptCreateEncryptorKeyIv(_kept!, _call.Plaintext),
        TransformShape.KeptCreateDecryptor => KeptCreateDecryptor(_kept!, _call.Ciphertext),
        TransformShape.KeptCryptoStreamWrite => CryptoStreamWrite(_kept!, _call.Plaintext, disposeTransform: false),
        TransformShape.KeptCryptoStreamWriteDisposed => CryptoStreamWrite(_kept!, _call.Plaintext, disposeTransform: true),
        TransformShape.KeptCryptoStreamRead => CryptoStreamRead(_kept!, _call.Ciphertext, _readBuffer, disposeTransform: false),
        TransformShape.KeptCryptoStreamReadDisposed => CryptoStreamRead(_kept!, _call.Ciphertext, _readBuffer, disposeTransform: true),
        TransformShape.ReusedTransform => _reused!.TransformFinalBlock(_call.Plaintext, 0, _call.Plaintext.Length),
        TransformShape.NewInstance => NewInstance(_create, _call.Plaintext),
        _ => throw new InvalidOperationException(),
    };

    private static byte[] KeptCreateEncryptor(Aes aes, byte[] plaintext)
    {
        using ICryptoTransform encryptor = aes.CreateEncryptor();
        return encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length);
    }

    private static byte[] KeptCreateEncryptorKeyIv(Aes aes, byte[] plaintext)
    {
        using ICryptoTransform encryptor = aes.CreateEncryptor(aes.Key, aes.IV);
        return encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length);
    }

    private static byte[] KeptCreateDecryptor(Aes aes, byte[] ciphertext)
    {
        using ICryptoTransform decryptor = aes.CreateDecryptor();
        return decryptor.TransformFinalBlock(ciphertext, 0, ciphertext.Length);
    }

    private static byte[] CryptoStreamWrite(Aes aes, byte[] plaintext, bool disposeTransform)
    {
        ICryptoTransform encryptor = aes.CreateEncryptor();
        using MemoryStream output = new();
        using (CryptoStream stream = new(output, encryptor, CryptoStreamMode.Write))
        {
            stream.Write(plaintext, 0, plaintext.Length);
        }

        if (disposeTransform)
        {
            encryptor.Dispose();
        }

        return output.ToArray();
    }

    // Reads until the end into the caller's buffer; returns that buffer (the plaintext is its first bytes).
    private static byte[] CryptoStreamRead(Aes aes, byte[] ciphertext, byte[] buffer, bool disposeTransform)
    {
        ICryptoTransform decryptor = aes.CreateDecryptor();
        using (MemoryStream input = new(ciphertext))
        using (CryptoStream stream = new(input, decryptor, CryptoStreamMode.Read))
        {
            int total = 0;
            int read;
            while ((read = stream.Read(buffer, total, buffer.Length - total)) > 0)
            {
                total += read;
            }
        }

        if (disposeTransform)
        {
            decryptor.Dispose();
        }

        return buffer;
    }

    private static byte[] NewInstance(Func<Aes> create, byte[] plaintext)
    {
        using Aes aes = create();
        aes.Key = TestData.Key;
        aes.IV = TestData.Iv;
        using ICryptoTransform encryptor = aes.CreateEncryptor();
        return encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length);
    }

    private void Setup(Func<Aes> create, string name)
    {
        _create = create;
        _call = new CipherCase(CipherOperation.EncryptCbc, Size);
        _readBuffer = new byte[_call.Ciphertext.Length];
        _kept = create();
        _kept.Key = TestData.Key;
        _kept.IV = TestData.Iv;
        if (Shape == TransformShape.ReusedTransform)
        {
            _reused = _kept.CreateEncryptor();
        }

        // Twice: a reused transform must come back to its IV after a final block.
        for (int call = 0; call < 2; call++)
        {
            Array.Clear(_readBuffer);
            byte[] output = Run();
            bool decrypting = Shape is TransformShape.KeptCreateDecryptor or TransformShape.KeptCryptoStreamRead
                or TransformShape.KeptCryptoStreamReadDisposed;
            byte[] expected = decrypting ? _call.Plaintext : _call.Ciphertext;
            bool correct = output == _readBuffer
                ? output.AsSpan(0, expected.Length).SequenceEqual(expected) && output.AsSpan(expected.Length).IndexOfAnyExcept((byte)0) < 0
                : output.AsSpan().SequenceEqual(expected);
            if (!correct)
            {
                throw BenchmarkCheck.Failure($"{name} {Shape} of {Size} bytes did not produce stock's output.");
            }
        }
    }
}
