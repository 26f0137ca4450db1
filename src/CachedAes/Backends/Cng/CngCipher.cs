using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// One CNG AES key for one mode and one direction, padding off.
/// </summary>
/// <remarks>
/// <para>CNG starts every call at the IV buffer it is given and overwrites that buffer with the chaining value.
/// Each CBC message therefore copies the caller's IV to the stack and passes that copy, never a caller buffer. ECB
/// passes a NULL IV. (The copy is on the calling thread's stack, not in this object: a handle keyed once, as a new
/// instance per message makes, allocates no room for it, and two threads using two handles never share its cache
/// line.)</para>
/// <para><b>Ownership.</b> The key handle, and the key object buffer the key lives in, belong to a
/// <see cref="CngKeyHandle"/> of this object's own (no finalizer), freed by <see cref="Release"/>, also when the key epoch
/// holding this handle was dropped (by the reclaimer of dropped keys, src/CachedAes/Ownership/Reclaimer.cs).</para>
/// <para>The native layer is injected (<see cref="ICngApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CngCipher : BlockCipher
{
    private readonly ICngApi _api;
    private readonly CngKeyHandle _key;
    private readonly nint _algorithm;
    private nint _rawKey;

    private CngCipher(ICngApi api, nint algorithm, CngKeyHandle key, BlockCipherMode mode, bool encrypting)
    {
        _api = api;
        _algorithm = algorithm;
        _key = key;
        _rawKey = key.Handle;
        Mode = mode;
        Encrypting = encrypting;
    }

    /// <summary>
    /// Creates a key on <paramref name="algorithm"/> (an AES algorithm handle already set to <paramref name="mode"/>) in a key
    /// object CNG allocates; a key change makes the new key in a buffer of <paramref name="keyObjectLength"/> bytes that the
    /// handle owns from then on (0: CNG allocates every key object; see <see cref="CngKeyHandle"/>).
    /// </summary>
    /// <exception cref="CryptographicException"><c>BCryptGenerateSymmetricKey</c> failed.</exception>
    internal static CngCipher Create(ICngApi api, nint algorithm, int keyObjectLength, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        CngKeyHandle handle = GenerateKey(api, algorithm, keyObjectLength, key);
        return new CngCipher(api, algorithm, handle, mode, encrypting);
    }

    /// <summary>
    /// A CNG key handle for <paramref name="key"/> (16, 24 or 32 bytes, passed to CNG as it is: no copy is made) on
    /// <paramref name="algorithm"/>, in a key object CNG allocates; <paramref name="keyObjectLength"/> is what a later
    /// <see cref="CngKeyHandle.Rekey"/> makes its own buffer of (see <see cref="Create"/>).
    /// </summary>
    /// <exception cref="CryptographicException"><c>BCryptGenerateSymmetricKey</c> failed.</exception>
    internal static CngKeyHandle GenerateKey(ICngApi api, nint algorithm, int keyObjectLength, ReadOnlySpan<byte> key)
    {
        var handle = new CngKeyHandle(api, keyObjectLength);
        int status;
        try
        {
            status = api.GenerateSymmetricKey(algorithm, key, handle);
        }
        catch
        {
            handle.Dispose();
            throw;
        }

        if (status != 0 || handle.IsInvalid)
        {
            handle.Dispose();
            throw status != 0
                ? new CryptographicException(BCrypt.Failure("BCryptGenerateSymmetricKey", status))
                : Errors.NoNativeHandle("BCryptGenerateSymmetricKey", "key handle");
        }

        return handle;
    }

    [SkipLocalsInit] // the IV copy is written before it is read
    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        // CBC: the message starts at a copy of its IV (CNG overwrites the buffer). ECB: no IV, passed as NULL.
        Span<byte> ivCopy = stackalloc byte[BlockSize];
        ivCopy = Mode == BlockCipherMode.Cbc ? ivCopy : default;
        iv.CopyTo(ivCopy);

        // The raw handle: this object owns it through _key, and only the one caller holding this handle uses it.
        int status = Encrypting
            ? _api.Encrypt(_rawKey, input, ivCopy, output, out int written)
            : _api.Decrypt(_rawKey, input, ivCopy, output, out written);
        if (status == 0 && written == input.Length)
        {
            return true;
        }

        string function = Encrypting ? "BCryptEncrypt" : "BCryptDecrypt";
        return Fail(status != 0 ? BCrypt.Failure(function, status) : Errors.ShortNativeOutput(function, (ulong)written, input.Length));
    }

    public override void Release() => _key.Dispose();

    /// <summary>
    /// Replaces the key: <c>BCryptDestroyKey</c>, then <c>BCryptGenerateSymmetricKey</c> into the handle's own key object
    /// buffer (made at the first key change when CNG said how large a key object is; from then on CNG allocates nothing
    /// for a key), so the old key's schedule is gone with the old key.
    /// </summary>
    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        int status = _key.Rekey(_algorithm, key, out string failedCall);
        if (status == 0 && !_key.IsInvalid)
        {
            _rawKey = _key.Handle;
            return true;
        }

        return Fail(status != 0 ? BCrypt.Failure(failedCall, status) : Errors.NoNativeHandle(failedCall, "key handle").Message);
    }
}
