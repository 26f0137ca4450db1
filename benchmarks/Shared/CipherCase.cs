using System;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

// Compiled into both CachedAes.Benchmarks and CachedAes.Breakdown (a linked source file: neither project references the
// other, and the breakdown has no BenchmarkDotNet dependency, so nothing here may need one).

/// <summary>The four ECB/CBC one-shot operations measured (all with PKCS7 padding).</summary>
public enum CipherOperation
{
    /// <summary><see cref="SymmetricAlgorithm.EncryptEcb(ReadOnlySpan{byte}, Span{byte}, PaddingMode)"/>.</summary>
    EncryptEcb,

    /// <summary><see cref="SymmetricAlgorithm.DecryptEcb(ReadOnlySpan{byte}, Span{byte}, PaddingMode)"/>.</summary>
    DecryptEcb,

    /// <summary><see cref="SymmetricAlgorithm.EncryptCbc(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte}, PaddingMode)"/>.</summary>
    EncryptCbc,

    /// <summary><see cref="SymmetricAlgorithm.DecryptCbc(ReadOnlySpan{byte}, ReadOnlySpan{byte}, Span{byte}, PaddingMode)"/>.</summary>
    DecryptCbc,
}

/// <summary>Deterministic inputs shared by every measurement.</summary>
internal static class TestData
{
    /// <summary>
    /// AES-256: the key size stock <c>Aes.Create()</c> generates by default. The cost a cached handle saves
    /// (context creation plus key schedule) barely depends on the key size.
    /// </summary>
    public const int KeySizeBytes = 32;

    public static byte[] Key { get; } = Fill(KeySizeBytes, 0x11);

    /// <summary>Fixed IV for every CBC call.</summary>
    public static byte[] Iv { get; } = Fill(16, 0x5A);

    /// <summary>A reproducible, non-trivial byte pattern.</summary>
    public static byte[] Fill(int length, int seed)
    {
        byte[] bytes = new byte[length];
        uint state = (uint)seed * 2654435761u + 1u;
        for (int i = 0; i < bytes.Length; i++)
        {
            // xorshift32: cheap, deterministic, not for security.
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            bytes[i] = (byte)state;
        }

        return bytes;
    }

    /// <summary>A stock instance keyed with <see cref="Key"/>, used to prepare inputs and expected outputs.</summary>
    public static Aes CreateStockKeyed()
    {
        Aes aes = Aes.Create();
        aes.SetKey(Key);
        return aes;
    }
}

/// <summary>
/// One ECB/CBC one-shot as every measurement defines it: <see cref="TestData.Key"/> (and <see cref="TestData.Iv"/> for
/// CBC), a plaintext of a given length, and stock's PKCS7 ciphertext of it. The operation's <see cref="Input"/> is the
/// plaintext (encrypt) or that ciphertext (decrypt); its <see cref="Expected"/> output is the other one.
/// </summary>
internal sealed class CipherCase
{
    public CipherCase(CipherOperation operation, int plaintextLength)
    {
        Operation = operation;
        Plaintext = TestData.Fill(plaintextLength, plaintextLength);
        using Aes stock = TestData.CreateStockKeyed();
        Ciphertext = Cbc
            ? stock.EncryptCbc(Plaintext, TestData.Iv, PaddingMode.PKCS7)
            : stock.EncryptEcb(Plaintext, PaddingMode.PKCS7);
        PaddedPlaintext = Cbc
            ? stock.DecryptCbc(Ciphertext, TestData.Iv, PaddingMode.None)
            : stock.DecryptEcb(Ciphertext, PaddingMode.None);
    }

    public CipherOperation Operation { get; }

    public bool Encrypting => Operation is CipherOperation.EncryptEcb or CipherOperation.EncryptCbc;

    public bool Cbc => Operation is CipherOperation.EncryptCbc or CipherOperation.DecryptCbc;

    public byte[] Plaintext { get; }

    /// <summary>Stock's PKCS7 encryption of <see cref="Plaintext"/>.</summary>
    public byte[] Ciphertext { get; }

    /// <summary><see cref="Plaintext"/> with its PKCS7 padding, as stock decrypts <see cref="Ciphertext"/> with padding off: what the layers below the padding transform.</summary>
    public byte[] PaddedPlaintext { get; }

    /// <summary>What the operation takes: the plaintext (encrypt) or stock's ciphertext of it (decrypt).</summary>
    public byte[] Input => Encrypting ? Plaintext : Ciphertext;

    /// <summary>What the operation must give back: stock's ciphertext (encrypt) or the plaintext (decrypt).</summary>
    public byte[] Expected => Encrypting ? Ciphertext : Plaintext;
}
