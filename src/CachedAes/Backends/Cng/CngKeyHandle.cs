using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>) and, once it has one, the key object buffer the key lives in:
/// <see cref="Dispose"/> calls <c>BCryptDestroyKey</c>, then zeroes and frees the buffer. A key's first keying passes
/// no buffer (NULL and 0: CNG allocates the key object and frees it with the key), as stock .NET does; only a key change
/// (<see cref="Rekey"/>) makes the new key in a buffer of this object's own, allocated at the first key change and kept
/// for the later ones, so that from then on CNG allocates nothing for a key.
/// </summary>
/// <remarks>
/// <para><b>Why not a buffer from the start.</b> Most handles are keyed once: a new instance per message makes one key,
/// one call, and gives the handle back. A buffer of its own would cost such a handle an allocation, a zeroing and a free
/// that CNG's own allocation of the key object does not save (measured under Wine: docs/benchmarks-per-message.md, "The
/// CNG backend under Wine"). A handle that is re-keyed is one that lives on, and the buffer pays for itself from its
/// second key change.</para>
/// <para><b>No finalizer.</b> A plain object, like an OpenSSL context: its one owner frees it, a <see cref="CngCipher"/>
/// that is itself owned by a key epoch's slot, by the call that leased it, or, while it is made or tested, by the code
/// that made it (which disposes it on every path). When an epoch is dropped without being released, the sweep of dropped
/// keys gives the epoch's handles back, and so destroys this key (src/CachedAes/Ownership/Reclaimer.cs). A
/// <see cref="System.Runtime.InteropServices.SafeHandle"/> per key would register one finalizable object per key, which
/// the runtime serializes across threads, and finalize each dropped key on its own (docs/design-notes.md, "Key memory
/// reused").</para>
/// <para>The key object buffer may be freed only after the key made in it is destroyed (Microsoft Learn,
/// <c>BCryptGenerateSymmetricKey</c>, <c>pbKeyObject</c>): CNG keeps the key's state there. So when
/// <c>BCryptDestroyKey</c> fails on a key made in the buffer, the buffer is abandoned: never freed, zeroed or reused, a
/// leak of one buffer rather than memory CNG may still write into handed back to the allocator (docs/design.md,
/// "Platform contracts"). A key whose object CNG allocated leaves nothing of this object's own behind when its destroy
/// fails.</para>
/// </remarks>
internal sealed unsafe class CngKeyHandle : IDisposable
{
    private readonly ICngApi _api;
    private readonly int _rekeyObjectLength;
    private nint _handle;
    private void* _keyObject;
    private int _keyObjectLength;
    private bool _keyObjectAbandoned;
    private bool _disposed;

    /// <param name="api">The native layer that destroys the key.</param>
    /// <param name="rekeyObjectLength">
    /// The size of the key object buffer that a key change makes the new key in (<c>BCRYPT_OBJECT_LENGTH</c>), allocated at
    /// the first <see cref="Rekey"/>; 0 to let CNG allocate every key object. Nothing is allocated here.
    /// </param>
    public CngKeyHandle(ICngApi api, int rekeyObjectLength = 0)
    {
        _api = api;
        _rekeyObjectLength = rekeyObjectLength;
    }

    /// <summary>
    /// The key object buffer the next key is made in, or null when CNG allocates it (before the first key change, without
    /// an object length, or once the buffer was freed).
    /// </summary>
    internal IntPtr KeyObject => (IntPtr)_keyObject;

    /// <summary>The size of <see cref="KeyObject"/> (0 when there is none).</summary>
    internal int KeyObjectLength => _keyObjectLength;

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
    /// Destroys the key and makes one from <paramref name="secret"/> on <paramref name="algorithm"/> in its place, in the
    /// buffer of this object's own (allocated now if this is the first key change and the object length is known; where
    /// it cannot be allocated, CNG allocates the key object as for the first key). The caller is the key's only user.
    /// Returns the failing call's status and name; the key then holds nothing, and only <see cref="Dispose"/> is left.
    /// When the destroy fails, no key is made, and a buffer the old key lived in is abandoned (see the remarks).
    /// </summary>
    internal int Rekey(nint algorithm, ReadOnlySpan<byte> secret, out string failedCall)
    {
        Debug.Assert(!_keyObjectAbandoned && !_disposed);
        int status = _api.DestroyKey(_handle);
        _handle = 0;
        if (status != 0)
        {
            _keyObjectAbandoned = _keyObject is not null;
            failedCall = "BCryptDestroyKey";
            return status;
        }

        if (_keyObject is null && _rekeyObjectLength > 0)
        {
            AllocateKeyObject();
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
        if (handle != 0 && _api.DestroyKey(handle) != 0 && _keyObject is not null)
        {
            _keyObjectAbandoned = true;
        }

        // Only a buffer that holds no key CNG still has: after a successful destroy, or one no key was ever made in.
        if (_keyObject is not null && !_keyObjectAbandoned)
        {
            CryptographicOperations.ZeroMemory(new Span<byte>(_keyObject, _keyObjectLength));
            NativeMemory.Free(_keyObject);
            _keyObject = null;
            _keyObjectLength = 0;
        }
    }

    // Once per handle, at its first key change: out of the re-key's line. Without memory for it, the key goes on in objects
    // CNG allocates (a re-key reports failures by status, never by an exception).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void AllocateKeyObject()
    {
        try
        {
            _keyObject = NativeMemory.AllocZeroed((nuint)_rekeyObjectLength);
            _keyObjectLength = _rekeyObjectLength;
        }
        catch (OutOfMemoryException)
        {
            _keyObject = null;
        }
    }
}
