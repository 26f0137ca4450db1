using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A backend over another one that misbehaves on demand, to prove the self-test notices: <see cref="Corrupt"/> decides,
/// per transform, whether to flip the first output byte (with no error, like a platform bug), <see cref="FailCreate"/>
/// whether creating a handle throws, <see cref="StaleRekey"/> makes a re-key report success and keep the old key, and
/// <see cref="AfterRekey"/> does something to the wrapped handle after each successful re-key. Its counts show whether
/// the self-test releases what it makes.
/// </summary>
internal sealed class MisbehavingBackend(CipherBackend inner) : CipherBackend
{
    /// <summary>(mode, encrypting, key, zero-based transform number on this handle) → corrupt this transform's output.</summary>
    public Func<BlockCipherMode, bool, byte[], int, bool> Corrupt { get; init; } = (_, _, _, _) => false;

    /// <summary>(mode, encrypting) → creating the handle throws <see cref="CryptographicException"/>.</summary>
    public Func<BlockCipherMode, bool, bool> FailCreate { get; init; } = (_, _) => false;

    /// <summary>When true, a re-key reports success without re-keying: the handle keeps its old key.</summary>
    public bool StaleRekey { get; init; }

    /// <summary>Runs on the wrapped handle after each re-key that succeeded (for example, to leave its library's IV elsewhere).</summary>
    public Action<BlockCipher>? AfterRekey { get; init; }

    private int _created;
    private int _live;

    /// <summary>How many handles were made.</summary>
    public int Created => System.Threading.Volatile.Read(ref _created);

    /// <summary>How many handles were made and not yet released.</summary>
    public int LiveHandles => System.Threading.Volatile.Read(ref _live);

    public override CachedAesBackend Kind => inner.Kind;

    public override string Description => inner.Description + ", misbehaving on demand";

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        if (FailCreate(mode, encrypting))
        {
            throw new CryptographicException($"Injected failure creating a {mode} handle.");
        }

        var handle = new Handle(this, inner.Create(mode, encrypting, key), key.ToArray());
        System.Threading.Interlocked.Increment(ref _created);
        System.Threading.Interlocked.Increment(ref _live);
        return handle;
    }

    private sealed class Handle(MisbehavingBackend owner, BlockCipher inner, byte[] key) : ForwardingCipher(inner)
    {
        private int _transforms;

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (!base.TryTransform(iv, input, output))
            {
                return false;
            }

            if (owner.Corrupt(Mode, Encrypting, key, _transforms++))
            {
                output[0] ^= 0x80;
            }

            return true;
        }

        public override void Release()
        {
            System.Threading.Interlocked.Decrement(ref owner._live);
            base.Release();
        }

        protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
        {
            if (owner.StaleRekey)
            {
                return true;
            }

            if (!base.TryRekeyCore(key))
            {
                return false;
            }

            owner.AfterRekey?.Invoke(Wrapped);
            return true;
        }
    }
}
