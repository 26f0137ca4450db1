using System;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

// CipherOperation, TestData and CipherCase (the ECB/CBC workload definition, shared with the breakdown harness) are in
// benchmarks/Shared/CipherCase.cs.

/// <summary>The two RFC 5649 key-wrap-with-padding operations.</summary>
public enum KeyWrapOperation
{
    /// <summary><see cref="Aes.EncryptKeyWrapPadded(ReadOnlySpan{byte}, Span{byte})"/>.</summary>
    EncryptKeyWrapPadded,

    /// <summary><see cref="Aes.DecryptKeyWrapPadded(ReadOnlySpan{byte}, Span{byte})"/>.</summary>
    DecryptKeyWrapPadded,
}

/// <summary>One span call measured: its input, a preallocated destination, and stock's expected output.</summary>
public abstract class AesWorkload
{
    private protected AesWorkload((byte[] Input, int DestinationLength, byte[] Expected) call)
    {
        Input = call.Input;
        Destination = new byte[call.DestinationLength];
        Expected = call.Expected;
    }

    private protected byte[] Input { get; }

    private protected byte[] Destination { get; }

    private protected byte[] Expected { get; }

    /// <summary>The operation and its size, for a failed check's message.</summary>
    private protected abstract string Description { get; }

    /// <summary>One span call into the preallocated destination; returns the bytes written.</summary>
    public abstract int Run(Aes aes);

    /// <summary>Runs once on <paramref name="aes"/> and throws unless the output equals stock's.</summary>
    public void Verify(Aes aes, string implementation)
    {
        if (!RunAndCompare(aes))
        {
            throw BenchmarkCheck.Failure($"{implementation} {Description} did not produce stock's output.");
        }
    }

    /// <summary>Checks <paramref name="floor"/> (made for this workload's input) against stock's output.</summary>
    internal void VerifyFloor(NativeFloor floor) => floor.Verify(Expected, Description);

    /// <summary>Runs once on <paramref name="aes"/>; true when the output equals stock's.</summary>
    public bool RunAndCompare(Aes aes)
    {
        Array.Clear(Destination);
        int written = Run(aes);
        return Destination.AsSpan(0, written).SequenceEqual(Expected);
    }
}

/// <summary>
/// One ECB/CBC one-shot call (<see cref="CipherCase"/>: a plaintext of <c>size</c> bytes, or stock's PKCS7 ciphertext
/// of it for the decrypt operations) into a preallocated destination.
/// </summary>
public sealed class CipherWorkload(CipherOperation operation, int size) : AesWorkload(Define(new CipherCase(operation, size)))
{
    public CipherOperation Operation { get; } = operation;

    private protected override string Description => $"{Operation} of {Expected.Length} bytes";

    /// <inheritdoc />
    public override int Run(Aes aes) => Operation switch
    {
        CipherOperation.EncryptEcb => aes.EncryptEcb(Input.AsSpan(), Destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.DecryptEcb => aes.DecryptEcb(Input.AsSpan(), Destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.EncryptCbc => aes.EncryptCbc(Input.AsSpan(), TestData.Iv.AsSpan(), Destination.AsSpan(), PaddingMode.PKCS7),
        CipherOperation.DecryptCbc => aes.DecryptCbc(Input.AsSpan(), TestData.Iv.AsSpan(), Destination.AsSpan(), PaddingMode.PKCS7),
        _ => throw new InvalidOperationException(),
    };

    // The destination is the ciphertext length in both directions: encrypt needs exactly that, and decrypt gets the
    // input length, so neither implementation has to rent a temporary buffer for the final (padding) block.
    private static (byte[], int, byte[]) Define(CipherCase call) => (call.Input, call.Ciphertext.Length, call.Expected);
}

/// <summary>
/// One RFC 5649 call: a plaintext of <c>length</c> bytes (or stock's wrap of it), a preallocated destination of
/// exactly the result length, and stock's expected output.
/// </summary>
public sealed class KeyWrapWorkload(KeyWrapOperation operation, int length) : AesWorkload(Define(operation, length))
{
    public KeyWrapOperation Operation { get; } = operation;

    private protected override string Description => $"{Operation} ({Input.Length} byte input)";

    /// <inheritdoc />
    public override int Run(Aes aes)
    {
        if (Operation == KeyWrapOperation.EncryptKeyWrapPadded)
        {
            aes.EncryptKeyWrapPadded(Input.AsSpan(), Destination.AsSpan());
            return Destination.Length;
        }

        return aes.DecryptKeyWrapPadded(Input.AsSpan(), Destination.AsSpan());
    }

    /// <summary>The native floor of this call (RFC 5649 over one ECB context), checked against stock's output.</summary>
    internal NativeFloor CreateFloor()
    {
        NativeFloor floor = NativeFloor.ForKeyWrap(Operation == KeyWrapOperation.EncryptKeyWrapPadded, padded: true, Input);
        VerifyFloor(floor);
        return floor;
    }

    private static (byte[], int, byte[]) Define(KeyWrapOperation operation, int length)
    {
        byte[] plaintext = TestData.Fill(length, length + 1000);
        using Aes stock = TestData.CreateStockKeyed();
        byte[] wrapped = stock.EncryptKeyWrapPadded(plaintext);

        // Unwrap: source length - 8 is what the core needs; a shorter buffer would make the base class rent one.
        return operation == KeyWrapOperation.EncryptKeyWrapPadded
            ? (plaintext, Aes.GetKeyWrapPaddedLength(length), wrapped)
            : (wrapped, wrapped.Length - 8, plaintext);
    }
}
