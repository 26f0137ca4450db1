using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.Cng;

/// <summary>Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>); releasing it calls <c>BCryptDestroyKey</c>.</summary>
/// <remarks>
/// The handle is allocated empty before the native create call and receives the native value right after
/// it succeeds (<see cref="Attach"/>), so a created key can never be left without an owner.
/// </remarks>
internal sealed class SafeBCryptKeyHandle : SafeHandle
{
    private readonly IBCryptApi _api;

    /// <summary>Creates an empty (invalid) handle whose release goes through <paramref name="api"/>.</summary>
    public SafeBCryptKeyHandle(IBCryptApi api)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _api = api;
    }

    /// <inheritdoc />
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>Takes ownership of a native key handle just returned by <c>BCryptGenerateSymmetricKey</c>.</summary>
    internal void Attach(nint value)
    {
        if (!IsInvalid || IsClosed)
        {
            throw new InvalidOperationException("The key handle is already attached or closed.");
        }

        SetHandle(value);
    }

    /// <inheritdoc />
    protected override bool ReleaseHandle() => _api.DestroyKey(handle) == 0;
}
