using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>) and, when it has one, the key object buffer the key lives in:
/// <see cref="Dispose"/> calls <c>BCryptDestroyKey</c>, then zeroes and frees the buffer. With a buffer of its own, a
/// key can be replaced in place (<see cref="Rekey"/>): the old key is destroyed and the new one made in the same memory,
/// so CNG allocates nothing for it.
/// </summary>
/// <remarks>
/// <para><b>No finalizer.</b> A plain object, like an OpenSSL context: its one owner frees it, a <see cref="CngCipher"/>
/// that is itself owned by a key epoch's slot, by the call that leased it, or, while it is made or tested, by the code
/// that made it (which disposes it on every path). When an epoch is dropped without being released, the sweep of dropped
/// keys gives the epoch's handles back, and so destroys this key (src/CachedAes/Ownership/Reclaimer.cs). A
/// <see cref="System.Runtime.InteropServices.SafeHandle"/> per key would register one finalizable object per key, which
/// the runtime serializes across threads, and finalize each dropped key on its own (docs/design-notes.md, "Key memory
/// reused").</para>
/// <para>The key object buffer may be freed only after the key made in it is destroyed (Microsoft Learn,
/// <c>BCryptGenerateSymmetricKey</c>, <c>pbKeyObject</c>): CNG keeps the key's state there. So when
/// <c>BCryptDestroyKey</c> fails, the buffer is abandoned: never freed, zeroed or reused, a leak of one buffer rather
/// than memory CNG may still write into handed back to the allocator (docs/design.md, "Platform contracts").</para>
/// </remarks>
internal sealed unsafe class BCryptKey : IDisposable
{
    private readonly IBCryptApi _api;
    private nint _handle;
    private void* _keyObject;
    private bool _keyObjectAbandoned;
    private bool _disposed;

    /// <param name="api">The native layer that destroys the key.</param>
    /// <param name="keyObjectLength">The size of the key object buffer to own (<c>BCRYPT_OBJECT_LENGTH</c>), or 0 to let CNG allocate the key object.</param>
    public BCryptKey(IBCryptApi api, int keyObjectLength = 0)
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

    /// <summary>True while no key is attached (before <see cref="Attach"/>, after a failed <see cref="Rekey"/> or <see cref="Dispose"/>).</summary>
    public bool IsInvalid => _handle == 0;

    /// <summary>The raw key handle, for a call made by the one user of this key.</summary>
    internal nint Handle => _handle;

    /// <summary>Takes ownership of a key just returned by <c>BCryptGenerateSymmetricKey</c>.</summary>
    /// <exception cref="InvalidOperationException">A key is already attached, or the key was disposed.</exception>
    internal void Attach(nint value)
    {
        if (_handle != 0 || _disposed)
        {
            throw new InvalidOperationException("A key is already attached, or the key was disposed.");
        }

        _handle = value;
    }

    /// <summary>
    /// Destroys the key and makes one from <paramref name="secret"/> on <paramref name="algorithm"/> in its place (in the
    /// same key object buffer, if it has one). The caller is the key's only user. Returns the failing call's status and
    /// name; the key then holds nothing, and only <see cref="Dispose"/> is left. When the destroy fails, no key is made:
    /// the buffer is abandoned (see the remarks).
    /// </summary>
    internal int Rekey(nint algorithm, ReadOnlySpan<byte> secret, out string failedCall)
    {
        Debug.Assert(!_keyObjectAbandoned && !_disposed);
        int status = _api.DestroyKey(_handle);
        _handle = 0;
        if (status != 0)
        {
            _keyObjectAbandoned = true;
            failedCall = "BCryptDestroyKey";
            return status;
        }

        failedCall = "BCryptGenerateSymmetricKey";
        return _api.GenerateSymmetricKey(algorithm, secret, this);
    }

    /// <summary>Destroys the key (if one is attached) and frees its buffer (unless CNG may still use it). Idempotent.</summary>
    public void Dispose()
    {
        _disposed = true;
        nint handle = _handle;
        _handle = 0;
        if (handle != 0 && _api.DestroyKey(handle) != 0)
        {
            _keyObjectAbandoned = true;
        }

        // Only a buffer that holds no key CNG still has: after a successful destroy, or one no key was ever made in.
        if (_keyObject is not null && !_keyObjectAbandoned)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(_keyObject, KeyObjectLength));
            NativeMemory.Free(_keyObject);
            _keyObject = null;
        }
    }
}
