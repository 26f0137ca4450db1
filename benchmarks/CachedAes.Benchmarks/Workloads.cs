using System;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

/// <summary>The four ECB/CBC one-shot operations the suite measures (all with PKCS7 padding).</summary>
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

/// <summary>The two RFC 5649 key-wrap-with-padding operations.</summary>
public enum KeyWrapOperation
{
    /// <summary><see cref="Aes.EncryptKeyWrapPadded(ReadOnlySpan{byte}, Span{byte})"/>.</summary>
    EncryptKeyWrapPadded,

    /// <summary><see cref="Aes.DecryptKeyWrapPadded(ReadOnlySpan{byte}, Span{byte})"/>.</summary>
    DecryptKeyWrapPadded,
}

/// <summary>Deterministic inputs shared by every benchmark.</summary>
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
/// One ECB/CBC one-shot call: its input (plaintext of <c>size</c> bytes, or stock's PKCS7 ciphertext of such a
/// plaintext for the decrypt operations), a preallocated destination, and stock's expected output.
/// </summary>
internal sealed class CipherWorkload
{
    private readonly byte[] _input;
    private readonly byte[] _destination;
    private readonly byte[] _expected;

    public CipherWorkload(CipherOperation operation, int size)
    {
        Operation = operation;
        byte[] plaintext = TestData.Fill(size, size);
        using Aes stock = TestData.CreateStockKeyed();
        _input = operation switch
        {
            CipherOperation.EncryptEcb or CipherOperation.EncryptCbc => plaintext,
            CipherOperation.DecryptEcb => stock.EncryptEcb(plaintext, PaddingMode.PKCS7),
            CipherOperation.DecryptCbc => stock.EncryptCbc(plaintext, TestData.Iv, PaddingMode.PKCS7),
            _ => throw new ArgumentOutOfRangeException(nameof(operation)),
        };

        // Encrypt: exactly the padded length. Decrypt: the ciphertext length, so neither implementation
        // has to rent a temporary buffer for the final (padding) block.
        _destination = new byte[operation is CipherOperation.EncryptEcb or CipherOperation.EncryptCbc
            ? stock.GetCiphertextLengthEcb(size, PaddingMode.PKCS7)
            : _input.Length];
        _expected = operation switch
        {
            CipherOperation.EncryptEcb => stock.EncryptEcb(plaintext, PaddingMode.PKCS7),
            CipherOperation.EncryptCbc => stock.EncryptCbc(plaintext, TestData.Iv, PaddingMode.PKCS7),
            _ => plaintext,
        };
    }

    public CipherOperation Operation { get; }

    /// <summary>One span one-shot into the preallocated destination; returns the bytes written.</summary>
    public int Run(Aes aes) => Operation switch
    {
        CipherOperation.EncryptEcb => aes.EncryptEcb(_input.AsSpan(), _destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.DecryptEcb => aes.DecryptEcb(_input.AsSpan(), _destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.EncryptCbc => aes.EncryptCbc(_input.AsSpan(), TestData.Iv.AsSpan(), _destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.DecryptCbc => aes.DecryptCbc(_input.AsSpan(), TestData.Iv.AsSpan(), _destination.AsSpan(), PaddingMode.PKCS7),
        _ => throw new InvalidOperationException(),
    };

    /// <summary>Runs once on <paramref name="aes"/> and throws unless the output equals stock's.</summary>
    public void Verify(Aes aes, string implementation)
    {
        if (!RunAndCompare(aes))
        {
            throw BenchmarkCheck.Failure($"{implementation} {Operation} of {_expected.Length} bytes did not produce stock's output.");
        }
    }

    /// <summary>Runs once on <paramref name="aes"/>; true when the output equals stock's.</summary>
    public bool RunAndCompare(Aes aes)
    {
        Array.Clear(_destination);
        int written = Run(aes);
        return _destination.AsSpan(0, written).SequenceEqual(_expected);
    }
}

/// <summary>
/// One RFC 5649 call: a plaintext of <c>length</c> bytes (or stock's wrap of it), a preallocated destination of
/// exactly the result length, and stock's expected output.
/// </summary>
internal sealed class KeyWrapWorkload
{
    private readonly byte[] _input;
    private readonly byte[] _destination;
    private readonly byte[] _expected;

    public KeyWrapWorkload(KeyWrapOperation operation, int length)
    {
        Operation = operation;
        byte[] plaintext = TestData.Fill(length, length + 1000);
        using Aes stock = TestData.CreateStockKeyed();
        byte[] wrapped = stock.EncryptKeyWrapPadded(plaintext);
        (_input, _expected) = operation == KeyWrapOperation.EncryptKeyWrapPadded
            ? (plaintext, wrapped)
            : (wrapped, plaintext);

        // Unwrap: source length - 8 is what the core needs; a shorter buffer would make the base class rent one.
        _destination = new byte[operation == KeyWrapOperation.EncryptKeyWrapPadded
            ? Aes.GetKeyWrapPaddedLength(length)
            : wrapped.Length - 8];
    }

    public KeyWrapOperation Operation { get; }

    /// <summary>One span call into the preallocated destination; returns the bytes written.</summary>
    public int Run(Aes aes)
    {
        if (Operation == KeyWrapOperation.EncryptKeyWrapPadded)
        {
            aes.EncryptKeyWrapPadded(_input.AsSpan(), _destination.AsSpan());
            return _destination.Length;
        }

        return aes.DecryptKeyWrapPadded(_input.AsSpan(), _destination.AsSpan());
    }

    /// <summary>Runs once on <paramref name="aes"/> and throws unless the output equals stock's.</summary>
    public void Verify(Aes aes, string implementation)
    {
        Array.Clear(_destination);
        int written = Run(aes);
        if (!_destination.AsSpan(0, written).SequenceEqual(_expected))
        {
            throw BenchmarkCheck.Failure($"{implementation} {Operation} ({_input.Length} byte input) did not produce stock's output.");
        }
    }
}
