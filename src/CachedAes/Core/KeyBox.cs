using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// One AES key in unmanaged memory that the GC never moves or copies, zeroed when released. Each key change makes a
/// new box, so the box's identity tells handles made with this key apart from handles made with any other.
/// </summary>
/// <remarks>
/// Being a <see cref="SafeHandle"/>, the box stays readable for a caller that holds a reference
/// (<see cref="TryAddRef"/>) even when its owner disposes it at the same moment; the memory is zeroed and
/// freed when the last reference goes. A box that is never disposed is zeroed by its finalizer.
/// </remarks>
internal sealed unsafe class KeyBox : SafeHandle
{
    private readonly int _length;

    public KeyBox(ReadOnlySpan<byte> key)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _length = key.Length;
        void* memory = NativeMemory.Alloc((nuint)Math.Max(1, key.Length));
        SetHandle((IntPtr)memory);
        key.CopyTo(new Span<byte>(memory, key.Length));
    }

    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>
    /// The key bytes. Valid only while the caller holds a reference (<see cref="TryAddRef"/>) or otherwise
    /// knows the box cannot be released.
    /// </summary>
    public ReadOnlySpan<byte> DangerousSpan => new((void*)handle, _length);

    /// <summary>Takes a reference that keeps the key readable; false if the box is already disposed.</summary>
    public bool TryAddRef()
    {
        bool added = false;
        try
        {
            DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            // Another thread replaced and disposed this key after the caller read it: the caller reads the new one.
        }

        return added;
    }

    protected override bool ReleaseHandle()
    {
        CryptographicOperations.ZeroMemory(new Span<byte>((void*)handle, _length));
        NativeMemory.Free((void*)handle);
        return true;
    }
}
