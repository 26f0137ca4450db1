using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// An AES key in unmanaged memory that the GC never moves or copies, zeroed when released.
/// Being a <see cref="SafeHandle"/>, a reader in <see cref="Use{TState, TResult}"/> holds a reference that keeps
/// the memory alive even if the owner disposes the box at the same time.
/// </summary>
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

    /// <summary>Key length in bytes.</summary>
    public int Length => _length;

    /// <summary>Runs <paramref name="action"/> over the key bytes while holding a reference to them.</summary>
    public TResult Use<TState, TResult>(TState state, Func<TState, ReadOnlySpan<byte>, TResult> action)
        where TState : allows ref struct
    {
        bool added = false;
        try
        {
            DangerousAddRef(ref added);
            return action(state, new ReadOnlySpan<byte>((void*)handle, _length));
        }
        finally
        {
            if (added)
            {
                DangerousRelease();
            }
        }
    }

    /// <summary>
    /// The key bytes, for callers that already own the box exclusively (under the instance's guard).
    /// The span is valid only until the box is disposed.
    /// </summary>
    public ReadOnlySpan<byte> DangerousSpan => new((void*)handle, _length);

    protected override bool ReleaseHandle()
    {
        CryptographicOperations.ZeroMemory(new Span<byte>((void*)handle, _length));
        NativeMemory.Free((void*)handle);
        return true;
    }
}
