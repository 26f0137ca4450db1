using System;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests;

/// <summary>
/// A test-only, allocation-free, invertible 16-byte permutation (not AES, not secure) that counts how
/// the key-wrap code drives the seam. Used where stock AES would hide the code under test's own
/// allocations or call pattern; known-answer correctness is covered with <see cref="StockEcbCipher"/>.
/// </summary>
internal sealed class ToyBlockCipher : BlockCipher
{
    private readonly byte[] _key = new byte[16];
    private readonly bool _encrypting;

    public ToyBlockCipher(byte keySeed, bool encrypting)
    {
        Mode = BlockCipherMode.Ecb;
        Encrypting = encrypting;
        for (int i = 0; i < _key.Length; i++)
        {
            _key[i] = (byte)(keySeed * 31 + i * 17 + 5);
        }

        _encrypting = encrypting;
    }

    public int TransformCalls { get; private set; }

    public int LastInputLength { get; private set; }

    public int ReleaseCalls { get; private set; }

    /// <summary>When non-negative, the call with this zero-based index fails, simulating a native failure.</summary>
    public int FailAtCall { get; set; } = -1;

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        SeamContract.Check(iv, input, output, BlockCipherMode.Ecb);

        if (TransformCalls == FailAtCall)
        {
            Fault();
            return false;
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

        return true;
    }

    public override System.Security.Cryptography.CryptographicException CreateFailure() =>
        new("Simulated native failure.");

    public override void Release() => ReleaseCalls++;

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
