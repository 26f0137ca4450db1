using System;
using CachedCryptography.Interop;

namespace CachedCryptography.Tests;

/// <summary>
/// A test-only, allocation-free, invertible 16-byte permutation (not AES, not secure) that counts how
/// the key-wrap code drives the seam. Used where stock AES would hide the code under test's own
/// allocations or call pattern; known-answer correctness is covered with <see cref="StockEcbCipher"/>.
/// </summary>
internal sealed class ToyBlockCipher : IBlockCipher
{
    private readonly byte[] _key = new byte[16];
    private readonly bool _encrypting;

    public ToyBlockCipher(byte keySeed, bool encrypting)
    {
        for (int i = 0; i < _key.Length; i++)
        {
            _key[i] = (byte)(keySeed * 31 + i * 17 + 5);
        }

        _encrypting = encrypting;
    }

    public int TransformCalls { get; private set; }

    public int LastInputLength { get; private set; }

    public int DisposeCalls { get; private set; }

    public int ResetCalls { get; private set; }

    /// <summary>When non-negative, the call with this zero-based index throws, simulating a native failure.</summary>
    public int FailAtCall { get; set; } = -1;

    public bool IsFaulted { get; private set; }

    public void Transform(ReadOnlySpan<byte> input, Span<byte> output)
    {
        SeamContract.Check(input, output);

        if (TransformCalls == FailAtCall)
        {
            IsFaulted = true;
            throw new System.Security.Cryptography.CryptographicException("Simulated native failure.");
        }

        TransformCalls++;
        LastInputLength = input.Length;
        input.CopyTo(output);

        for (int offset = 0; offset < input.Length; offset += 16)
        {
            Span<byte> x = output.Slice(offset, 16);

            if (_encrypting)
            {
                Encrypt(x);
            }
            else
            {
                Decrypt(x);
            }
        }
    }

    public void Reset(ReadOnlySpan<byte> iv) => ResetCalls++;

    public void Dispose() => DisposeCalls++;

    private void Encrypt(Span<byte> x)
    {
        for (int round = 0; round < 4; round++)
        {
            for (int i = 0; i < 16; i++)
            {
                x[i] ^= (byte)(_key[i] + round);
            }

            for (int i = 1; i < 16; i++)
            {
                x[i] += x[i - 1];
            }

            x[0] += x[15];
        }
    }

    private void Decrypt(Span<byte> x)
    {
        for (int round = 3; round >= 0; round--)
        {
            x[0] -= x[15];

            for (int i = 15; i >= 1; i--)
            {
                x[i] -= x[i - 1];
            }

            for (int i = 0; i < 16; i++)
            {
                x[i] ^= (byte)(_key[i] + round);
            }
        }
    }
}
