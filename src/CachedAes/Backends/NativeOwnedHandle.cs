using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Backends;

/// <summary>
/// A <see cref="SafeHandle"/> that is allocated empty before the native call that creates the object and receives the
/// native value right after the call succeeds (<see cref="Attach"/>), so a created object can never be left without an
/// owner, not even if the allocation of the owner would fail. Each platform's subclass says how the object is freed.
/// </summary>
internal abstract class NativeOwnedHandle : SafeHandle
{
    protected NativeOwnedHandle()
        : base(IntPtr.Zero, ownsHandle: true)
    {
    }

    /// <inheritdoc />
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>Takes ownership of a native object just returned by its create call.</summary>
    /// <exception cref="InvalidOperationException">A value is already attached, or the handle is closed.</exception>
    internal void Attach(nint value)
    {
        if (!IsInvalid || IsClosed)
        {
            throw new InvalidOperationException("The native handle is already attached or closed.");
        }

        SetHandle(value);
    }
}
