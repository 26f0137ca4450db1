using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// One CNG AES key (<c>BCRYPT_KEY_HANDLE</c>) for one mode and one direction, padding off, and, once it has one, the key
/// object buffer the key lives in: <see cref="Release"/> (or <see cref="Dispose"/>) calls <c>BCryptDestroyKey</c>, then
/// zeroes and frees the buffer.
/// </summary>
/// <remarks>
/// <para>CNG starts every call at the IV buffer it is given and overwrites that buffer with the chaining value.
/// Each CBC message therefore copies the caller's IV to the stack and passes that copy, never a caller buffer. ECB
/// passes a NULL IV. (The copy is on the calling thread's stack, not in this object: a handle keyed once, as a new
/// instance per message makes, allocates no room for it, and two threads using two handles never share its cache
/// line.)</para>
/// <para><b>One object per key.</b> The handle owns its key itself, with no separate owner object: a new instance per
/// message makes one object for its key, not two (docs/benchmarks-per-message.md, "The Windows rows in one place").</para>
/// <para><b>Key object buffer.</b> A key's first keying passes no buffer (NULL and 0: CNG allocates the key object and
/// frees it with the key), as stock .NET does; only a key change (<see cref="Rekey"/>) makes the new key in a buffer of
/// this object's own, allocated at the first key change and kept for the later ones, so that from then on CNG allocates
/// nothing for a key. Most handles are keyed once (a new instance per message makes one key, one call, and gives the
/// handle back): a buffer of their own would cost them an allocation, a zeroing and a free that CNG's own allocation of
/// the key object does not save (measured under Wine: docs/benchmarks-per-message.md, "The CNG backend under Wine").</para>
/// <para>The key object buffer may be freed only after the key made in it is destroyed (Microsoft Learn,
/// <c>BCryptGenerateSymmetricKey</c>, <c>pbKeyObject</c>): CNG keeps the key's state there. So when
/// <c>BCryptDestroyKey</c> fails on a key made in the buffer, the buffer is abandoned: never freed, zeroed or reused, a
/// leak of one buffer rather than memory CNG may still write into handed back to the allocator (docs/design.md,
/// "Platform contracts"). A key whose object CNG allocated leaves nothing of this object's own behind when its destroy
/// fails.</para>
/// <para><b>Ownership, no finalizer.</b> A plain object, like an OpenSSL context: its one owner frees it, the key epoch
/// whose slot holds it, the call that leased it, or, while it is made or tested, the code that made it (which disposes it
/// on every path). When an epoch is dropped without being released, the sweep of dropped keys gives the epoch's handles
/// back, and so destroys this key (src/CachedAes/Ownership/Reclaimer.cs). A
/// <see cref="System.Runtime.InteropServices.SafeHandle"/> per key would register one finalizable object per key, which
/// the runtime serializes across threads, and finalize each dropped key on its own (docs/design-notes.md, "Key memory
/// reused").</para>
/// <para>The native layer is injected (<see cref="ICngApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed unsafe class CngCipher : BlockCipher, IDisposable
{
    private readonly ICngApi _api;
    private readonly nint _algorithm;
    private readonly int _rekeyObjectLength;
    private nint _handle;
    private void* _keyObject;
    private bool _keyObjectAbandoned;
    private bool _disposed;

    /// <summary>
    /// A handle with no key yet, for keys made on <paramref name="algorithm"/> (an AES algorithm handle already set to
    /// <paramref name="mode"/>); <see cref="ICngApi.GenerateSymmetricKey"/> attaches its first key. Nothing is allocated
    /// here but this object.
    /// </summary>
    /// <param name="api">The native layer.</param>
    /// <param name="algorithm">The algorithm handle its keys (the first, and each key change's) are made on.</param>
    /// <param name="rekeyObjectLength">
    /// The size of the key object buffer that a key change makes the new key in (<c>BCRYPT_OBJECT_LENGTH</c>), allocated at
    /// the first <see cref="Rekey"/>; 0 to let CNG allocate every key object.
    /// </param>
    /// <param name="mode">ECB or CBC.</param>
    /// <param name="encrypting">True for an encryption handle.</param>
    internal CngCipher(ICngApi api, nint algorithm, int rekeyObjectLength, BlockCipherMode mode, bool encrypting)
    {
        _api = api;
        _algorithm = algorithm;
        _rekeyObjectLength = rekeyObjectLength;
        Mode = mode;
        Encrypting = encrypting;
    }

    /// <summary>
    /// The key object buffer the next key is made in, or null when CNG allocates it (before the first key change, without
    /// an object length, or once the buffer was freed).
    /// </summary>
    internal IntPtr KeyObject => (IntPtr)_keyObject;

    /// <summary>The size of <see cref="KeyObject"/> (0 when there is none).</summary>
    internal int KeyObjectLength => _keyObject is null ? 0 : _rekeyObjectLength;

    /// <summary>
    /// True once <c>BCryptDestroyKey</c> failed on a key made in <see cref="KeyObject"/>: the buffer is left to CNG for
    /// good (never freed, zeroed or reused).
    /// </summary>
    internal bool KeyObjectAbandoned => _keyObjectAbandoned;

    /// <summary>True while no key is attached (before <see cref="Attach"/>, after a failed <see cref="Rekey"/> or <see cref="Dispose"/>).</summary>
    internal bool IsInvalid => _handle == 0;

    /// <summary>The raw key handle, for a call made by the one user of this key.</summary>
    internal nint Handle => _handle;

    /// <summary>
    /// A handle keyed with <paramref name="key"/> (16, 24 or 32 bytes, passed to CNG as it is: no copy is made) on
    /// <paramref name="algorithm"/>, in a key object CNG allocates; a key change makes the new key in a buffer of
    /// <paramref name="keyObjectLength"/> bytes that the handle owns from then on (0: CNG allocates every key object).
    /// </summary>
    /// <exception cref="CryptographicException"><c>BCryptGenerateSymmetricKey</c> failed.</exception>
    internal static CngCipher Create(ICngApi api, nint algorithm, int keyObjectLength, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        // The owner exists before the key does, so that taking ownership of the new key cannot fail.
        var cipher = new CngCipher(api, algorithm, keyObjectLength, mode, encrypting);
        int status;
        try
        {
            status = api.GenerateSymmetricKey(algorithm, key, cipher);
        }
        catch
        {
            cipher.Dispose();
            throw;
        }

        if (status != 0 || cipher.IsInvalid)
        {
            cipher.Dispose();
            throw status != 0
                ? new CryptographicException(BCrypt.Failure("BCryptGenerateSymmetricKey", status))
                : Errors.NoNativeHandle("BCryptGenerateSymmetricKey", "key handle");
        }

        return cipher;
    }

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

    [SkipLocalsInit] // the IV copy is written before it is read
    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        // CBC: the message starts at a copy of its IV (CNG overwrites the buffer). ECB: no IV, passed as NULL.
        Span<byte> ivCopy = stackalloc byte[BlockSize];
        ivCopy = Mode == BlockCipherMode.Cbc ? ivCopy : default;
        iv.CopyTo(ivCopy);

        // The raw handle: this object owns it, and only the one caller holding this handle uses it.
        int status = Encrypting
            ? _api.Encrypt(_handle, input, ivCopy, output, out int written)
            : _api.Decrypt(_handle, input, ivCopy, output, out written);
        if (status == 0 && written == input.Length)
        {
            return true;
        }

        string function = Encrypting ? "BCryptEncrypt" : "BCryptDecrypt";
        return Fail(status != 0 ? BCrypt.Failure(function, status) : Errors.ShortNativeOutput(function, (ulong)written, input.Length));
    }

    /// <inheritdoc cref="Dispose"/>
    public override void Release() => Dispose();

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
            CryptographicOperations.ZeroMemory(new Span<byte>(_keyObject, _rekeyObjectLength));
            NativeMemory.Free(_keyObject);
            _keyObject = null;
        }
    }

    /// <summary>
    /// Destroys the key and makes one from <paramref name="secret"/> in its place, on the handle's algorithm, in the
    /// buffer of this object's own (allocated now if this is the first key change and the object length is known; where
    /// it cannot be allocated, CNG allocates the key object as for the first key). The caller is the key's only user.
    /// Returns the failing call's status and name; the key then holds nothing, and only <see cref="Dispose"/> is left.
    /// When the destroy fails, no key is made, and a buffer the old key lived in is abandoned (see the remarks).
    /// </summary>
    internal int Rekey(ReadOnlySpan<byte> secret, out string failedCall)
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
        return _api.GenerateSymmetricKey(_algorithm, secret, this);
    }

    /// <summary>
    /// Replaces the key: <c>BCryptDestroyKey</c>, then <c>BCryptGenerateSymmetricKey</c> into the handle's own key object
    /// buffer (made at the first key change when CNG said how large a key object is; from then on CNG allocates nothing
    /// for a key), so the old key's schedule is gone with the old key.
    /// </summary>
    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        int status = Rekey(key, out string failedCall);
        if (status == 0 && !IsInvalid)
        {
            return true;
        }

        return Fail(status != 0 ? BCrypt.Failure(failedCall, status) : Errors.NoNativeHandle(failedCall, "key handle").Message);
    }

    // Once per handle, at its first key change: out of the re-key's line. Without memory for it, the key goes on in objects
    // CNG allocates (a re-key reports failures by status, never by an exception).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void AllocateKeyObject()
    {
        try
        {
            _keyObject = NativeMemory.AllocZeroed((nuint)_rekeyObjectLength);
        }
        catch (OutOfMemoryException)
        {
            _keyObject = null;
        }
    }
}
