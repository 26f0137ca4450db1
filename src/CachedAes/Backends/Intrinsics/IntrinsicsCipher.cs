using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Intrinsics;

/// <summary>
/// A handle of the CPU intrinsics backend: one key's round keys for one direction (the encryption schedule, or the
/// decryption schedule for a decrypting handle), in native memory, and the mode. It keeps no other state: a CBC message
/// starts at the IV it is given and chains only within the call.
/// </summary>
/// <remarks>
/// <para><b>Ownership</b> (docs/design-notes.md, "Ownership"). This object is plain, not finalizable, and owns
/// its native schedule directly. Its owner (the key epoch whose slot holds it, or the call that leased it) gives it up
/// with <see cref="Release"/> (also when its epoch was dropped: src/CachedAes/Ownership/HandleSlots.cs), which
/// zeroes the round keys and frees the memory at once. The round keys are never on the managed heap: <see cref="AesSchedule{T}"/> writes them
/// straight into the native block, and the block loops read them from there.</para>
/// <para><b>Failures.</b> The instructions cannot fail, so <see cref="TryTransform"/> always returns true and the handle
/// is never faulted.</para>
/// </remarks>
internal sealed unsafe class IntrinsicsCipher<T> : BlockCipher
    where T : struct, IAesInstructions
{
    private readonly IntrinsicsBackend<T> _backend;
    private byte* _schedule;
    private int _rounds;

    /// <summary>A handle keyed with <paramref name="key"/> (16, 24 or 32 bytes: checked by <see cref="CipherBackend.Create"/>).</summary>
    internal IntrinsicsCipher(IntrinsicsBackend<T> backend, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        Debug.Assert(IsKeySize(key.Length));
        _backend = backend;
        Mode = mode;
        Encrypting = encrypting;

        // Nothing can fail between the allocation and the end of the constructor, so the memory always reaches its owner.
        // Bytes past the last round key (AES-128 and AES-192 use 176 and 208 of the 240) are never written or read;
        // Free zeroes the whole block.
        _schedule = (byte*)NativeMemory.AlignedAlloc(AesSchedule<T>.MaxBytes, 16);
        backend.OnScheduleAllocated();
        _rounds = AesSchedule<T>.Expand(key, _schedule, forDecryption: !encrypting);
    }

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Debug.Assert(_schedule != null);
        Debug.Assert(input.Length > 0 && input.Length % BlockSize == 0 && output.Length == input.Length);
        Debug.Assert(iv.Length == (Mode == BlockCipherMode.Cbc ? BlockSize : 0));
        Debug.Assert(!input.Overlaps(output, out int offset) || offset == 0);

        int blocks = input.Length / BlockSize;
        fixed (byte* source = input)
        fixed (byte* destination = output)
        {
            if (Mode == BlockCipherMode.Ecb)
            {
                if (Encrypting)
                {
                    AesBlocks<T>.EncryptEcb(_schedule, _rounds, source, destination, blocks);
                }
                else
                {
                    AesBlocks<T>.DecryptEcb(_schedule, _rounds, source, destination, blocks);
                }
            }
            else
            {
                Vector128<byte> start = Vector128.Create(iv);
                if (Encrypting)
                {
                    AesBlocks<T>.EncryptCbc(_schedule, _rounds, start, source, destination, blocks);
                }
                else
                {
                    AesBlocks<T>.DecryptCbc(_schedule, _rounds, start, source, destination, blocks);
                }
            }
        }

        return true;
    }

    /// <summary>The whole round-key block as it is now (a test seam: what a re-key leaves behind).</summary>
    internal ReadOnlySpan<byte> RoundKeyMemory => new(_schedule, AesSchedule<T>.MaxBytes);

    /// <summary>
    /// Expands <paramref name="key"/> into the same memory, after zeroing all of it: a shorter key has fewer round keys,
    /// and the old key's last ones must not stay behind.
    /// </summary>
    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        Debug.Assert(_schedule != null);
        CryptographicOperations.ZeroMemory(new Span<byte>(_schedule, AesSchedule<T>.MaxBytes));
        _rounds = AesSchedule<T>.Expand(key, _schedule, forDecryption: !Encrypting);
        return true;
    }

    /// <summary>Zeroes the round keys and frees their memory.</summary>
    public override void Release() => Free();


    private void Free()
    {
        byte* schedule = _schedule;
        _schedule = null;
        if (schedule != null)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(schedule, AesSchedule<T>.MaxBytes));
            NativeMemory.AlignedFree(schedule);
            _backend.OnScheduleFreed();
        }
    }
}
