using System;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// Wraps any backend and makes a chosen <see cref="BlockCipher.TryTransform"/> call fail the way a native failure
/// does (false, then a <see cref="CryptographicException"/> from <see cref="BlockCipher.CreateFailure"/>), so that the
/// platform-neutral failure handling runs over every real and simulated backend.
/// </summary>
internal sealed class FaultInjectingBackend(CipherBackend inner) : CipherBackend
{
    public const string Message = "Injected native failure.";

    private int _failNext;

    public override CachedAesBackend Kind => inner.Kind;

    public override string Description => inner.Description + ", with injected failures";

    /// <summary>Makes the next TryTransform on any handle of this backend fail.</summary>
    public void FailNextTransform() => Volatile.Write(ref _failNext, 1);

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new Cipher(this, inner.Create(mode, encrypting, key));

    private bool TakeFailure() => Interlocked.Exchange(ref _failNext, 0) == 1;

    // Release is forwarded as is: the inner handle never saw the injected failure, so it is released (or pooled) as a
    // healthy one.
    private sealed class Cipher(FaultInjectingBackend owner, BlockCipher inner) : ForwardingCipher(inner)
    {
        private bool _injected;

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (owner.TakeFailure())
            {
                // Like a native call that failed part way: some output may already be written.
                output[..Math.Min(16, output.Length)].Fill(0xEE);
                _injected = true;
                Fault();
                return false;
            }

            return base.TryTransform(iv, input, output);
        }

        public override CryptographicException CreateFailure() => _injected ? new CryptographicException(Message) : base.CreateFailure();
    }
}
