using System;
using System.Security.Cryptography;

namespace CachedCryptography.Interop;

/// <summary>
/// A backend whose ECB handles are another backend's, and whose CBC handles are <see cref="CbcOverEcbCipher"/> over
/// that backend's ECB handles: what selection uses when a backend's ECB passes the self-test and its CBC does not.
/// </summary>
internal sealed class CbcOverEcbBackend : CipherBackend
{
    public CbcOverEcbBackend(CipherBackend inner)
    {
        ArgumentNullException.ThrowIfNull(inner);
        Inner = inner;
    }

    /// <summary>The backend whose ECB handles are used.</summary>
    public CipherBackend Inner { get; }

    /// <inheritdoc />
    public override CachedAesBackend Kind => Inner.Kind;

    /// <inheritdoc />
    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        BlockCipher ecb = Inner.Create(BlockCipherMode.Ecb, encrypting, key);
        return mode == BlockCipherMode.Ecb ? new EcbCipher(this, ecb) : new CbcOverEcbCipher(this, ecb, encrypting);
    }

    /// <summary>The inner backend's ECB handle, counted as this backend's (so its live-handle count stays whole).</summary>
    private sealed class EcbCipher : BlockCipher
    {
        private readonly BlockCipher _ecb;

        public EcbCipher(CipherBackend backend, BlockCipher ecb)
            : base(backend)
        {
            _ecb = ecb;
            Mode = BlockCipherMode.Ecb;
            Encrypting = ecb.Encrypting;
        }

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (_ecb.TryTransform(iv, input, output))
            {
                return true;
            }

            Fault();
            return false;
        }

        public override CryptographicException CreateFailure() => _ecb.CreateFailure();

        protected override void ReleaseCore() => _ecb.Release();
    }
}
