using System;
using System.Threading;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// Wraps a backend: after <see cref="HoldNext"/>, the next transform of that mode and direction signals and then
/// waits for <see cref="Release"/> before it runs, so the test decides when the handle is given back.
/// </summary>
internal sealed class GatedBackend(FaultInjectingBackend inner) : CipherBackend, IDisposable
{
    private readonly ManualResetEventSlim _held = new();
    private readonly ManualResetEventSlim _release = new();
    private int _toHold;
    private BlockCipherMode _mode;
    private bool _encrypting;

    public FaultInjectingBackend Faults => inner;

    public override CachedAesBackend Kind => inner.Kind;

    public override string Description => inner.Description + ", gated";

    /// <summary>Holds the next <paramref name="calls"/> transforms of this mode and direction until <see cref="Release"/>.</summary>
    public void HoldNext(BlockCipherMode mode, bool encrypting, int calls = 1)
    {
        _held.Reset();
        _release.Reset();
        _mode = mode;
        _encrypting = encrypting;
        Volatile.Write(ref _toHold, calls);
    }

    /// <summary>Waits until every call asked for is held.</summary>
    public void WaitUntilHeld() => Assert.True(_held.Wait(TimeSpan.FromSeconds(30)), "the held calls never started");

    public void Release() => _release.Set();

    public void Dispose()
    {
        _held.Dispose();
        _release.Dispose();
    }

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new Handle(this, inner.Create(mode, encrypting, key));

    private void MaybeHold(BlockCipherMode mode, bool encrypting)
    {
        if (mode != _mode || encrypting != _encrypting)
        {
            return;
        }

        int remaining = Volatile.Read(ref _toHold);
        while (remaining > 0)
        {
            int seen = Interlocked.CompareExchange(ref _toHold, remaining - 1, remaining);
            if (seen == remaining)
            {
                if (remaining == 1)
                {
                    _held.Set(); // the last of them: every held call is inside its transform, its handle reserved
                }

                Assert.True(_release.Wait(TimeSpan.FromSeconds(30)), "the held call was never released");
                return;
            }

            remaining = seen;
        }
    }

    private sealed class Handle(GatedBackend owner, BlockCipher inner) : ForwardingCipher(inner)
    {
        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            owner.MaybeHold(Mode, Encrypting);
            return base.TryTransform(iv, input, output);
        }
    }
}
