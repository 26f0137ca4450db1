using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>) and, when it has one, the key object buffer the key lives in:
/// releasing it calls <c>BCryptDestroyKey</c>, then zeroes and frees the buffer. With a buffer of its own, a key can be
/// replaced in place (<see cref="Rekey"/>): the old key is destroyed and the new one made in the same memory, so CNG
/// allocates nothing for it.
/// </summary>
/// <remarks>
/// The key object buffer may be freed only after the key made in it is destroyed (Microsoft Learn,
/// <c>BCryptGenerateSymmetricKey</c>, <c>pbKeyObject</c>): CNG keeps the key's state there. So when
/// <c>BCryptDestroyKey</c> fails, the buffer is abandoned: never freed, zeroed or reused, a leak of one buffer rather
/// than memory CNG may still write into handed back to the allocator (docs/design.md, "Platform contracts").
/// </remarks>
internal sealed unsafe class SafeBCryptKeyHandle : NativeOwnedHandle
{
    private readonly IBCryptApi _api;
    private void* _keyObject;
    private bool _keyObjectAbandoned;

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

    /// <summary>The key object buffer the key is made in, or null when CNG allocates it (or once it was freed).</summary>
    internal IntPtr KeyObject => (IntPtr)_keyObject;

    /// <summary>The size of <see cref="KeyObject"/> (0 when there is none).</summary>
    internal int KeyObjectLength { get; }

    /// <summary>
    /// True once <c>BCryptDestroyKey</c> failed on a key made in <see cref="KeyObject"/>: the buffer is left to CNG for
    /// good (never freed, zeroed or reused).
    /// </summary>
    internal bool KeyObjectAbandoned => _keyObjectAbandoned;

    /// <summary>
    /// Destroys the key and makes one from <paramref name="secret"/> on <paramref name="algorithm"/> in its place (in the
    /// same key object buffer, if the handle has one). The caller is the handle's only user. Returns the failing call's
    /// status and name; the handle then holds no key, and only its release is left. When the destroy fails, no key is
    /// made: the buffer is abandoned (see the remarks).
    /// </summary>
    internal int Rekey(nint algorithm, ReadOnlySpan<byte> secret, out string failedCall)
    {
        Debug.Assert(!_keyObjectAbandoned);
        int status = _api.DestroyKey(handle);
        SetHandle(IntPtr.Zero);
        if (status != 0)
        {
            _keyObjectAbandoned = true;
            failedCall = "BCryptDestroyKey";
            return status;
        }

        failedCall = "BCryptGenerateSymmetricKey";
        return _api.GenerateSymmetricKey(algorithm, secret, this);
    }

    /// <inheritdoc />
    protected override bool ReleaseHandle()
    {
        if (_api.DestroyKey(handle) != 0)
        {
            _keyObjectAbandoned = true;
            return false;
        }

        FreeKeyObject();
        return true;
    }

    /// <summary>
    /// A handle that never held a key, or whose <see cref="Rekey"/> destroyed the old key and then failed to make the new
    /// one, still owns its buffer (an abandoned one stays where it is).
    /// </summary>
    protected override void Dispose(bool disposing)
    {
        base.Dispose(disposing);
        if (IsInvalid)
        {
            FreeKeyObject();
        }
    }

    // Only a buffer that holds no key CNG still has: after a successful destroy, or one no key was ever made in.
    private void FreeKeyObject()
    {
        if (_keyObject is not null && !_keyObjectAbandoned)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(_keyObject, KeyObjectLength));
            NativeMemory.Free(_keyObject);
            _keyObject = null;
        }
    }
}
