using System;
using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.Cng;

/// <summary>
/// One CNG AES key for one mode and one direction, padding off, behind <see cref="IBlockCipher"/>.
/// </summary>
/// <remarks>
/// <para>CNG overwrites the IV buffer it is given with the chaining value. This type therefore keeps a
/// private 16-byte IV: <see cref="BlockCipherHandle.Reset"/> copies the caller's IV into it, every CBC
/// <see cref="BlockCipherHandle.Transform"/> passes it (never a caller buffer), and CNG's overwrite is exactly what
/// chains consecutive <see cref="BlockCipherHandle.Transform"/> calls of one message. Until the first
/// <see cref="BlockCipherHandle.Reset"/> the private IV is all zeroes. ECB passes a NULL IV.</para>
/// <para>The native layer is injected (<see cref="IBCryptApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CngBlockCipher : BlockCipherHandle
{
    private readonly IBCryptApi _api;
    private readonly SafeBCryptKeyHandle _key;
    private readonly bool _encrypting;
    private readonly byte[] _iv;

    private CngBlockCipher(IBCryptApi api, SafeBCryptKeyHandle key, BlockCipherMode mode, bool encrypting)
        : base(mode)
    {
        _api = api;
        _key = key;
        _encrypting = encrypting;
        _iv = mode == BlockCipherMode.Cbc ? new byte[BlockSize] : [];
    }

    /// <summary>
    /// Creates a key on <paramref name="algorithm"/> (an AES algorithm handle already set to
    /// <paramref name="mode"/>). The key bytes are copied to a stack buffer only for the native call
    /// and zeroed right after it.
    /// </summary>
    internal static CngBlockCipher Create(IBCryptApi api, nint algorithm, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(api);
        if (key.Length is not (16 or 24 or 32))
        {
            throw new CryptographicException("Specified key is not a valid size for this algorithm.");
        }

        var handle = new SafeBCryptKeyHandle(api);
        try
        {
            int status;
            Span<byte> secret = stackalloc byte[32];
            try
            {
                key.CopyTo(secret);
                status = api.GenerateSymmetricKey(algorithm, secret[..key.Length], handle);
            }
            finally
            {
                CryptographicOperations.ZeroMemory(secret);
            }

            if (status != 0)
            {
                throw Error("BCryptGenerateSymmetricKey", status);
            }

            if (handle.IsInvalid)
            {
                throw new CryptographicException("BCryptGenerateSymmetricKey succeeded but returned no key handle.");
            }

            return new CngBlockCipher(api, handle, mode, encrypting);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <inheritdoc />
    protected override void ResetCore(ReadOnlySpan<byte> iv) => iv.CopyTo(_iv);

    /// <inheritdoc />
    protected override void ReleaseCore()
    {
        _key.Dispose();
        CryptographicOperations.ZeroMemory(_iv);
    }

    /// <summary>Builds the exception for a failed CNG call: the function name and the NTSTATUS in hex.</summary>
    internal static CryptographicException Error(string function, int status)
        => new(string.Create(CultureInfo.InvariantCulture, $"{function} failed with NTSTATUS 0x{status:X8}."));

    /// <inheritdoc />
    protected override void TransformCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        // ECB: _iv is empty, passed as NULL. CBC: the private IV, which CNG overwrites with the chaining value.
        int status = _encrypting
            ? _api.Encrypt(_key, input, _iv, output, out int written)
            : _api.Decrypt(_key, input, _iv, output, out written);

        if (status != 0)
        {
            throw Error(_encrypting ? "BCryptEncrypt" : "BCryptDecrypt", status);
        }

        if (written != input.Length)
        {
            throw new CryptographicException(string.Create(
                CultureInfo.InvariantCulture,
                $"{(_encrypting ? "BCryptEncrypt" : "BCryptDecrypt")} wrote {written} bytes instead of {input.Length}."));
        }
    }
}
