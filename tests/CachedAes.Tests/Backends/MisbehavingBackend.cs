using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A backend over another one that misbehaves on demand, to prove the self-test notices: <see cref="Corrupt"/> decides,
/// per transform, whether to flip the first output byte (with no error, like a platform bug), and <see cref="FailCreate"/>
/// whether creating a handle throws. Its live-handle count (the base class's) shows whether the self-test releases what
/// it makes.
/// </summary>
internal sealed class MisbehavingBackend(CipherBackend inner) : CipherBackend
{
    /// <summary>(mode, encrypting, key, zero-based transform number on this handle) → corrupt this transform's output.</summary>
    public Func<BlockCipherMode, bool, byte[], int, bool> Corrupt { get; init; } = (_, _, _, _) => false;

    /// <summary>(mode, encrypting) → creating the handle throws <see cref="CryptographicException"/>.</summary>
    public Func<BlockCipherMode, bool, bool> FailCreate { get; init; } = (_, _) => false;

    /// <summary>How many handles were made.</summary>
    public int Created => Creations;

    public override CachedAesBackend Kind => inner.Kind;

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        if (FailCreate(mode, encrypting))
        {
            throw new CryptographicException($"Injected failure creating a {mode} handle.");
        }

        return new Handle(this, inner.Create(mode, encrypting, key), key.ToArray());
    }

    private sealed class Handle : BlockCipher
    {
        private readonly MisbehavingBackend _owner;
        private readonly BlockCipher _inner;
        private readonly byte[] _key;
        private int _transforms;

        public Handle(MisbehavingBackend owner, BlockCipher inner, byte[] key)
            : base(owner)
        {
            _owner = owner;
            _inner = inner;
            _key = key;
            Mode = inner.Mode;
            Encrypting = inner.Encrypting;
        }

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (!_inner.TryTransform(iv, input, output))
            {
                Fault();
                return false;
            }

            if (_owner.Corrupt(Mode, Encrypting, _key, _transforms++))
            {
                output[0] ^= 0x80;
            }

            return true;
        }

        public override CryptographicException CreateFailure() => _inner.CreateFailure();

        protected override void ReleaseCore() => _inner.Release();
    }
}
