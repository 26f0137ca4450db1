using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// The object in a slot that a caller has reserved (<see cref="HandleSlots.Busy"/>): a <see cref="BlockCipher"/> only so
/// that a slot can hold it; every member throws, since a reserved slot's marker is never used as a handle.
/// </summary>
internal sealed class BusyMarker : BlockCipher
{
    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output) =>
        throw new InvalidOperationException("The busy marker is not a handle.");

    public override CryptographicException CreateFailure() =>
        throw new InvalidOperationException("The busy marker is not a handle.");

    public override void Release() =>
        throw new InvalidOperationException("The busy marker is not a handle.");
}
