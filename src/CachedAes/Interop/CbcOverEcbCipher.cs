using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;

namespace CachedCryptography.Interop;

/// <summary>
/// A CBC handle composed in managed code over one native ECB handle of the same key and direction: the fallback for a
/// backend whose own CBC handle failed the self-test (<see cref="BackendSelfTest"/>) while its ECB handle passed.
/// </summary>
/// <remarks>
/// Encryption: <c>C[i] = E(P[i] xor C[i-1])</c>, one ECB call per block (the chain is serial). Decryption:
/// <c>P[i] = D(C[i]) xor C[i-1]</c>, one ECB call per chunk of up to <see cref="DecryptChunk"/> bytes, with the chunk's
/// ciphertext kept on the stack because the output may be the input. <c>C[-1]</c> is the IV given to
/// <see cref="BlockCipherHandle.Reset"/>, and consecutive transforms continue the chain, as a native CBC handle does.
/// The chaining value is ciphertext, so nothing secret is left on the stack; it is cleared on release anyway.
/// </remarks>
internal sealed class CbcOverEcbCipher : BlockCipherHandle
{
    private const int DecryptChunk = 256;

    private readonly IBlockCipher _ecb;
    private readonly bool _encrypting;
    private readonly byte[] _chain = new byte[BlockSize];

    /// <summary>Takes ownership of <paramref name="ecb"/> (an ECB handle for the direction <paramref name="encrypting"/>).</summary>
    public CbcOverEcbCipher(IBlockCipher ecb, bool encrypting)
        : base(BlockCipherMode.Cbc)
    {
        ArgumentNullException.ThrowIfNull(ecb);
        _ecb = ecb;
        _encrypting = encrypting;
    }

    /// <inheritdoc />
    protected override void ResetCore(ReadOnlySpan<byte> iv) => iv.CopyTo(_chain);

    /// <inheritdoc />
    protected override void TransformCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (_encrypting)
        {
            Encrypt(input, output);
        }
        else
        {
            Decrypt(input, output);
        }
    }

    /// <inheritdoc />
    protected override void ReleaseCore()
    {
        _ecb.Dispose();
        CryptographicOperations.ZeroMemory(_chain);
    }

    // Input and output are the same memory or disjoint (the seam's contract), so reading block i before writing
    // block i is safe either way.
    private void Encrypt(ReadOnlySpan<byte> input, Span<byte> output)
    {
        for (int i = 0; i < input.Length; i += BlockSize)
        {
            Span<byte> block = output.Slice(i, BlockSize);
            Xor(input.Slice(i, BlockSize), _chain, block);
            _ecb.Transform(block, block);
            block.CopyTo(_chain);
        }
    }

    [SkipLocalsInit] // the ciphertext copy is written before it is read
    private void Decrypt(ReadOnlySpan<byte> input, Span<byte> output)
    {
        Span<byte> ciphertext = stackalloc byte[DecryptChunk];
        for (int start = 0; start < input.Length; start += DecryptChunk)
        {
            int length = Math.Min(DecryptChunk, input.Length - start);
            Span<byte> chunk = ciphertext[..length];
            input.Slice(start, length).CopyTo(chunk);
            Span<byte> plain = output.Slice(start, length);

            _ecb.Transform(chunk, plain);
            Xor(plain[..BlockSize], _chain, plain[..BlockSize]);
            for (int i = BlockSize; i < length; i += BlockSize)
            {
                Xor(plain.Slice(i, BlockSize), chunk.Slice(i - BlockSize, BlockSize), plain.Slice(i, BlockSize));
            }

            chunk[^BlockSize..].CopyTo(_chain);
        }
    }

    private static void Xor(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b, Span<byte> destination)
    {
        for (int i = 0; i < BlockSize; i++)
        {
            destination[i] = (byte)(a[i] ^ b[i]);
        }
    }
}
