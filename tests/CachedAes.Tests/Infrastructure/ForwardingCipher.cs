using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// A handle that forwards to the handle of a wrapped backend, for the test backends that decorate another one (counting,
/// injecting failures, misbehaving): same mode and direction, every call passed on, and faulted when the wrapped handle
/// fails. A decorator overrides only what it adds.
/// </summary>
internal abstract class ForwardingCipher : BlockCipher
{
    protected ForwardingCipher(BlockCipher wrapped)
    {
        Wrapped = wrapped;
        Mode = wrapped.Mode;
        Encrypting = wrapped.Encrypting;
    }

    /// <summary>The wrapped backend's handle.</summary>
    public BlockCipher Wrapped { get; }

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (Wrapped.TryTransform(iv, input, output))
        {
            return true;
        }

        Fault();
        return false;
    }

    public override CryptographicException CreateFailure() => Wrapped.CreateFailure();

    public override void Release() => Wrapped.Release();

    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        if (Wrapped.TryRekey(key))
        {
            return true;
        }

        if (Wrapped.IsFaulted)
        {
            Fault();
        }

        return false;
    }
}
