using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.CommonCrypto;

/// <summary>Owns one <c>CCCryptorRef</c>; releasing it calls <c>CCCryptorRelease</c>.</summary>
/// <remarks>
/// The handle is allocated empty before the native create call and receives the native value right after
/// it succeeds (<see cref="Attach"/>), so a created cryptor can never be left without an owner.
/// </remarks>
internal sealed class SafeCCCryptorHandle : SafeHandle
{
    private readonly ICommonCryptoApi _api;

    /// <summary>Creates an empty (invalid) handle whose release goes through <paramref name="api"/>.</summary>
    public SafeCCCryptorHandle(ICommonCryptoApi api)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _api = api;
    }

    /// <inheritdoc />
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>Takes ownership of a cryptor just returned by <c>CCCryptorCreateWithMode</c>.</summary>
    internal void Attach(nint value)
    {
        if (!IsInvalid || IsClosed)
        {
            throw new InvalidOperationException("The cryptor handle is already attached or closed.");
        }

        SetHandle(value);
    }

    /// <inheritdoc />
    protected override bool ReleaseHandle() => _api.Release(handle) == 0;
}
