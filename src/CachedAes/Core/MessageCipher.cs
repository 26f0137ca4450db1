using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using CachedCryptography.Interop;

namespace CachedCryptography.Core;

/// <summary>
/// Runs one whole ECB or CBC message (whole blocks, padding already handled) on the cached handles,
/// choosing per message between the CBC handle restarted at the caller's IV and, for short messages on
/// backends where that restart is expensive, CBC chained in managed code over the ECB handle. Both give
/// identical bytes; the choice is the backend's (<see cref="CipherBackend.ShortCbcEncryptBlocks"/>).
/// </summary>
internal readonly ref struct MessageCipher
{
    private const int BlockSize = SymmetricPadding.BlockSize;

    private readonly HandleCache _cache;
    private readonly KeyBox _key;
    private readonly ReadOnlySpan<byte> _iv;
    private readonly BlockCipherMode _mode;
    private readonly bool _encrypting;

    public MessageCipher(HandleCache cache, KeyBox key, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> iv)
    {
        Debug.Assert(mode == BlockCipherMode.Ecb ? iv.IsEmpty : iv.Length == BlockSize);
        _cache = cache;
        _key = key;
        _mode = mode;
        _encrypting = encrypting;
        _iv = iv;
    }

    /// <summary>
    /// The same message continued from a later point: for CBC, <paramref name="previousCiphertextBlock"/>
    /// becomes the IV (the chaining value there); ECB has no chaining and ignores it.
    /// </summary>
    public MessageCipher ContinueAfter(ReadOnlySpan<byte> previousCiphertextBlock) =>
        _mode == BlockCipherMode.Ecb ? this : new(_cache, _key, _mode, _encrypting, previousCiphertextBlock);

    /// <summary>
    /// Transforms <paramref name="input"/> (whole blocks) into the same-length <paramref name="output"/>.
    /// The two may overlap in any way.
    /// </summary>
    public void Run(ReadOnlySpan<byte> input, Span<byte> output)
    {
        Debug.Assert(input.Length % BlockSize == 0 && output.Length == input.Length);
        if (input.IsEmpty)
        {
            return;
        }

        // Native APIs allow exact in-place work but not partial overlap: move the input into place first.
        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            input.CopyTo(output);
            input = output;
        }

        int blocks = input.Length / BlockSize;

        if (_mode == BlockCipherMode.Ecb)
        {
            _cache.Get(BlockCipherMode.Ecb, _encrypting, _key).Transform(input, output);
        }
        else if (_encrypting && blocks <= _cache.Backend.ShortCbcEncryptBlocks)
        {
            CbcEncryptOverEcb(_cache.Get(BlockCipherMode.Ecb, encrypting: true, _key), _iv, input, output);
        }
        else if (!_encrypting && blocks <= _cache.Backend.ShortCbcDecryptBlocks)
        {
            CbcDecryptOverEcb(_cache.Get(BlockCipherMode.Ecb, encrypting: false, _key), _iv, input, output);
        }
        else
        {
            IBlockCipher cbc = _cache.Get(BlockCipherMode.Cbc, _encrypting, _key);
            cbc.Reset(_iv);
            cbc.Transform(input, output);
        }
    }

    // C[i] = E(P[i] xor C[i-1]), C[-1] = IV; one native call per block (the chain is serial anyway).
    private static void CbcEncryptOverEcb(IBlockCipher ecb, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        ReadOnlySpan<byte> previous = iv;
        for (int i = 0; i < input.Length; i += BlockSize)
        {
            Span<byte> block = output.Slice(i, BlockSize);
            Xor(input.Slice(i, BlockSize), previous, block);
            ecb.Transform(block, block);
            previous = block;
        }
    }

    // P[i] = D(C[i]) xor C[i-1]: one native call for the whole message, then the XOR chain. The ciphertext
    // is kept on the stack because the output may be the input (short messages only, so the copy is small).
    [SkipLocalsInit] // the stack copy is written before it is read
    private static void CbcDecryptOverEcb(IBlockCipher ecb, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Debug.Assert(input.Length <= MaxStackCiphertext);
        Span<byte> ciphertext = stackalloc byte[MaxStackCiphertext];
        ciphertext = ciphertext[..input.Length];
        input.CopyTo(ciphertext);

        ecb.Transform(ciphertext, output);
        Xor(output[..BlockSize], iv, output[..BlockSize]);
        for (int i = BlockSize; i < input.Length; i += BlockSize)
        {
            Span<byte> block = output.Slice(i, BlockSize);
            Xor(block, ciphertext.Slice(i - BlockSize, BlockSize), block);
        }
    }

    /// <summary>Upper bound for <see cref="CipherBackend.ShortCbcDecryptBlocks"/> times the block size.</summary>
    public const int MaxStackCiphertext = 512;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Xor(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b, Span<byte> destination)
    {
        Debug.Assert(a.Length == BlockSize && b.Length == BlockSize && destination.Length == BlockSize);
        Vector128<byte> x = Vector128.LoadUnsafe(ref MemoryMarshal.GetReference(a));
        Vector128<byte> y = Vector128.LoadUnsafe(ref MemoryMarshal.GetReference(b));
        (x ^ y).StoreUnsafe(ref MemoryMarshal.GetReference(destination));
    }
}
