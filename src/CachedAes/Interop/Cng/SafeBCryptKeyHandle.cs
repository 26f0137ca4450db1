using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.Cng;

/// <summary>
/// Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>) and, when it has one, the key object buffer the key lives in:
/// releasing it calls <c>BCryptDestroyKey</c>, then zeroes and frees the buffer. With a buffer of its own, a key can be
/// replaced in place (<see cref="Rekey"/>): the old key is destroyed and the new one made in the same memory, so CNG
/// allocates nothing for it.
/// </summary>
internal sealed unsafe class SafeBCryptKeyHandle : NativeOwnedHandle
{
    private readonly IBCryptApi _api;
    private void* _keyObject;

    /// <param name="api">The native layer that destroys the key.</param>
    /// <param name="keyObjectLength">The size of the key object buffer to own (<c>BCRYPT_OBJECT_LENGTH</c>), or 0 to let CNG allocate the key object.</param>
    public SafeBCryptKeyHandle(IBCryptApi api, int keyObjectLength = 0)
    {
        _api = api;
        if (keyObjectLength > 0)
        {
            _keyObject = NativeMemory.AllocZeroed((nuint)keyObjectLength);
            KeyObjectLength = keyObjectLength;
        }
    }

    /// <summary>The key object buffer the key is made in, or null when CNG allocates it.</summary>
    internal IntPtr KeyObject => (IntPtr)_keyObject;

    /// <summary>The size of <see cref="KeyObject"/> (0 when there is none).</summary>
    internal int KeyObjectLength { get; }

    /// <summary>
    /// Destroys the key and makes one from <paramref name="secret"/> on <paramref name="algorithm"/> in its place (in the
    /// same key object buffer, if the handle has one). The caller is the handle's only user. Returns the failing call's
    /// status; the handle then holds no key, and only its release is left.
    /// </summary>
    internal int Rekey(nint algorithm, ReadOnlySpan<byte> secret)
    {
        int status = _api.DestroyKey(handle);
        SetHandle(IntPtr.Zero);
        return status != 0 ? status : _api.GenerateSymmetricKey(algorithm, secret, this);
    }

    /// <inheritdoc />
    protected override bool ReleaseHandle()
    {
        bool destroyed = _api.DestroyKey(handle) == 0;
        FreeKeyObject();
        return destroyed;
    }

    /// <summary>A handle that never held a key (or lost it in a failed <see cref="Rekey"/>) still owns its buffer.</summary>
    protected override void Dispose(bool disposing)
    {
        base.Dispose(disposing);
        if (IsInvalid)
        {
            FreeKeyObject();
        }
    }

    private void FreeKeyObject()
    {
        if (_keyObject is not null)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(_keyObject, KeyObjectLength));
            NativeMemory.Free(_keyObject);
            _keyObject = null;
        }
    }
}
