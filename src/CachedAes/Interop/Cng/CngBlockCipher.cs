using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Interop.Cng;

/// <summary>
/// One CNG AES key for one mode and one direction, padding off.
/// </summary>
/// <remarks>
/// <para>CNG starts every call at the IV buffer it is given and overwrites that buffer with the chaining value.
/// This type therefore keeps a private 16-byte IV: each CBC message copies the caller's IV into it and passes it,
/// never a caller buffer. ECB passes a NULL IV.</para>
/// <para>The native layer is injected (<see cref="IBCryptApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CngBlockCipher : BlockCipher
{
    private readonly IBCryptApi _api;
    private readonly SafeBCryptKeyHandle _key;
    private readonly nint _algorithm;
    private nint _rawKey;
    // CBC: where each message's IV is copied (CNG overwrites it), 64 bytes into a buffer with 64 bytes after it. It is
    // written on every call, so it shares no cache line with another object, such as the same buffer of a handle made
    // just before this one and used by another thread (see OpenSslCipher.ChainBlock). ECB: empty.
    private const int IvOffset = 64;
    private readonly byte[] _iv;
    private string? _failure;

    private CngBlockCipher(IBCryptApi api, nint algorithm, SafeBCryptKeyHandle key, BlockCipherMode mode, bool encrypting)
    {
        _api = api;
        _algorithm = algorithm;
        _key = key;
        _rawKey = key.DangerousGetHandle();
        Mode = mode;
        Encrypting = encrypting;
        _iv = mode == BlockCipherMode.Cbc ? new byte[IvOffset + BlockSize + 64] : [];
    }

    /// <summary>
    /// Creates a key on <paramref name="algorithm"/> (an AES algorithm handle already set to <paramref name="mode"/>), in a
    /// key object buffer of <paramref name="keyObjectLength"/> bytes that the handle owns (0: CNG allocates the object).
    /// The key bytes are copied to a stack buffer only for the native call and zeroed right after it.
    /// </summary>
    /// <exception cref="CryptographicException"><c>BCryptGenerateSymmetricKey</c> failed.</exception>
    internal static CngBlockCipher Create(IBCryptApi api, nint algorithm, int keyObjectLength, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        SafeBCryptKeyHandle handle = GenerateKey(api, algorithm, keyObjectLength, key);
        return new CngBlockCipher(api, algorithm, handle, mode, encrypting);
    }

    /// <summary>A CNG key handle for <paramref name="key"/> on <paramref name="algorithm"/> (see <see cref="Create"/>).</summary>
    /// <exception cref="CryptographicException"><c>BCryptGenerateSymmetricKey</c> failed or the key size is invalid.</exception>
    internal static SafeBCryptKeyHandle GenerateKey(IBCryptApi api, nint algorithm, int keyObjectLength, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(api);
        if (key.Length is not (16 or 24 or 32))
        {
            Errors.ThrowInvalidKeySize();
        }

        var handle = new SafeBCryptKeyHandle(api, keyObjectLength);
        int status;
        Span<byte> secret = stackalloc byte[32];
        try
        {
            key.CopyTo(secret);
            status = api.GenerateSymmetricKey(algorithm, secret[..key.Length], handle);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(secret);
        }

        if (status != 0 || handle.IsInvalid)
        {
            handle.Dispose();
            throw status != 0
                ? Error("BCryptGenerateSymmetricKey", status)
                : Errors.NoNativeHandle("BCryptGenerateSymmetricKey", "key handle");
        }

        return handle;
    }

    /// <summary>Builds the exception for a failed CNG call: the function name and the NTSTATUS in hex.</summary>
    internal static CryptographicException Error(string function, int status)
        => new(Errors.CngFailure(function, status));

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        // CBC: the message starts at the private copy of its IV (CNG overwrites the buffer). ECB: no IV, passed as NULL.
        Span<byte> ivCopy = Mode == BlockCipherMode.Cbc ? _iv.AsSpan(IvOffset, BlockSize) : default;
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
        _failure = status != 0
            ? Errors.CngFailure(function, status)
            : Errors.ShortNativeOutput(function, (ulong)written, input.Length);
        Fault();
        return false;
    }

    public override CryptographicException CreateFailure() => _failure is null ? Errors.NoFailureRecorded("CNG") : new(_failure);

    /// <summary>
    /// Replaces the key: <c>BCryptDestroyKey</c>, then <c>BCryptGenerateSymmetricKey</c> into the same key object buffer
    /// (when the handle has one, CNG allocates nothing), so the old key's schedule is gone with the old key.
    /// </summary>
    public override bool TryRekey(ReadOnlySpan<byte> key)
    {
        int status;
        string failedCall;
        Span<byte> secret = stackalloc byte[32];
        try
        {
            key.CopyTo(secret);
            status = _key.Rekey(_algorithm, secret[..key.Length], out failedCall);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(secret);
        }

        if (status == 0 && !_key.IsInvalid)
        {
            _rawKey = _key.DangerousGetHandle();
            return true;
        }

        _failure = status != 0 ? Errors.CngFailure(failedCall, status) : Errors.NoNativeHandle(failedCall, "key handle").Message;
        Fault();
        return false;
    }

    public override void Release()
    {
        _key.Dispose();
        CryptographicOperations.ZeroMemory(_iv);
    }
}
