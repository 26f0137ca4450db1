using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A backend over another one that misbehaves on demand, to prove the self-test notices: <see cref="Corrupt"/> decides,
/// per transform, whether to flip the first output byte (with no error, like a platform bug), and <see cref="FailCreate"/>
/// whether creating a handle throws. It counts live handles so tests can check the self-test releases what it makes.
/// </summary>
internal sealed class MisbehavingBackend(CipherBackend inner) : CipherBackend
{
    private int _live;

    /// <summary>(mode, encrypting, key, zero-based transform number on this handle) → corrupt this transform's output.</summary>
    public Func<BlockCipherMode, bool, byte[], int, bool> Corrupt { get; init; } = (_, _, _, _) => false;

    /// <summary>(mode, encrypting) → creating the handle throws <see cref="CryptographicException"/>.</summary>
    public Func<BlockCipherMode, bool, bool> FailCreate { get; init; } = (_, _) => false;

    public int LiveHandles => _live;

    public int Created { get; private set; }

    public override CachedAesBackend Kind => inner.Kind;

    public override int ShortCbcEncryptBlocks => inner.ShortCbcEncryptBlocks;

    public override int ShortCbcDecryptBlocks => inner.ShortCbcDecryptBlocks;

    public override IBlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        if (FailCreate(mode, encrypting))
        {
            throw new CryptographicException($"Injected failure creating a {mode} handle.");
        }

        IBlockCipher handle = inner.Create(mode, encrypting, key);
        Created++;
        _live++;
        return new Handle(this, handle, mode, encrypting, key.ToArray());
    }

    private sealed class Handle(MisbehavingBackend owner, IBlockCipher inner, BlockCipherMode mode, bool encrypting, byte[] key) : IBlockCipher
    {
        private int _transforms;
        private bool _disposed;

        public bool IsFaulted => inner.IsFaulted;

        public void Reset(ReadOnlySpan<byte> iv) => inner.Reset(iv);

        public void Transform(ReadOnlySpan<byte> input, Span<byte> output)
        {
            inner.Transform(input, output);
            if (owner.Corrupt(mode, encrypting, key, _transforms++) && !input.IsEmpty)
            {
                output[0] ^= 0x80;
            }
        }

        public void Dispose()
        {
            if (!_disposed)
            {
                _disposed = true;
                owner._live--;
                inner.Dispose();
            }
        }
    }
}
