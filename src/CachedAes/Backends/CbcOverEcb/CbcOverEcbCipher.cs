using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.CbcOverEcb;

/// <summary>
/// A CBC handle composed in managed code over one native ECB handle of the same key and direction: the fallback for a
/// backend whose own CBC handle failed the self-test (<c>Selection/SelfTest.cs</c>) while its ECB handle passed.
/// </summary>
/// <remarks>
/// Encryption: <c>C[i] = E(P[i] xor C[i-1])</c>, one ECB call per block (the chain is serial). Decryption:
/// <c>P[i] = D(C[i]) xor C[i-1]</c>, one ECB call per chunk of up to <see cref="DecryptChunk"/> bytes, with the chunk's
/// ciphertext kept on the stack because the output may be the input. <c>C[-1]</c> is the message's IV. The chaining
/// values are ciphertext, so nothing secret is kept.
/// </remarks>
internal sealed class CbcOverEcbCipher : BlockCipher
{
    private const int DecryptChunk = 256;

    private readonly BlockCipher _ecb;

    /// <summary>Takes ownership of <paramref name="ecb"/> (an ECB handle for the direction <paramref name="encrypting"/>).</summary>
    public CbcOverEcbCipher(BlockCipher ecb, bool encrypting)
    {
        ArgumentNullException.ThrowIfNull(ecb);
        _ecb = ecb;
        Mode = BlockCipherMode.Cbc;
        Encrypting = encrypting;
    }

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        bool done = Encrypting ? Encrypt(iv, input, output) : Decrypt(iv, input, output);
        if (!done)
        {
            Fault();
        }

        return done;
    }

    /// <summary>The ECB handle's failure: every native call this handle makes is the ECB handle's.</summary>
    public override CryptographicException CreateFailure() => _ecb.CreateFailure();

    public override void Release() => _ecb.Release();

    protected override bool TryRekeyCore(ReadOnlySpan<byte> key) => _ecb.TryRekey(key) || FaultWith(_ecb);

    // Input and output are the same memory or disjoint (the seam's contract), so reading block i before writing
    // block i is safe either way.
    private bool Encrypt(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Vector128<byte> chain = Load(iv);
        for (int i = 0; i < input.Length; i += BlockSize)
        {
            Span<byte> block = output.Slice(i, BlockSize);
            (Load(input.Slice(i, BlockSize)) ^ chain).StoreUnsafe(ref MemoryMarshal.GetReference(block));
            if (!_ecb.TryTransform(default, block, block))
            {
                return false;
            }

            chain = Load(block);
        }

        return true;
    }

    [SkipLocalsInit] // the ciphertext copy is written before it is read
    private bool Decrypt(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Span<byte> ciphertext = stackalloc byte[DecryptChunk];
        Vector128<byte> chain = Load(iv);
        for (int start = 0; start < input.Length; start += DecryptChunk)
        {
            int length = Math.Min(DecryptChunk, input.Length - start);
            Span<byte> chunk = ciphertext[..length];
            input.Slice(start, length).CopyTo(chunk);
            Span<byte> plain = output.Slice(start, length);
            if (!_ecb.TryTransform(default, chunk, plain))
            {
                return false;
            }

            for (int i = 0; i < length; i += BlockSize)
            {
                Span<byte> block = plain.Slice(i, BlockSize);
                (Load(block) ^ chain).StoreUnsafe(ref MemoryMarshal.GetReference(block));
                chain = Load(chunk.Slice(i, BlockSize));
            }
        }

        return true;
    }

    // A failed re-key of the ECB handle faults this one too when it faulted the ECB handle (a native failure, described by
    // the ECB handle); one it merely could not do leaves both usable. Returns false.
    private bool FaultWith(BlockCipher ecb)
    {
        if (ecb.IsFaulted)
        {
            Fault();
        }

        return false;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector128<byte> Load(ReadOnlySpan<byte> block) => Vector128.LoadUnsafe(ref MemoryMarshal.GetReference(block));
}
