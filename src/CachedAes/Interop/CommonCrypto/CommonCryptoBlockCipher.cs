using System;
using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.CommonCrypto;

/// <summary>
/// One CommonCrypto AES cryptor for one mode and one direction, padding off, behind <see cref="IBlockCipher"/>.
/// </summary>
/// <remarks>
/// <para>The cryptor is created with a NULL IV (all zeroes for CBC, ignored for ECB). A CBC
/// <see cref="BlockCipherHandle.Reset"/> calls <c>CCCryptorReset</c> with the new IV; the cryptor keeps the chaining value
/// between <see cref="BlockCipherHandle.Transform"/> calls of one message. ECB never calls <c>CCCryptorReset</c> (it
/// returns <c>kCCUnimplemented</c> on macOS 10.13+): an ECB <see cref="BlockCipherHandle.Reset"/> only checks its argument.</para>
/// <para>The native layer is injected (<see cref="ICommonCryptoApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CommonCryptoBlockCipher : BlockCipherHandle
{
    private readonly ICommonCryptoApi _api;
    private readonly SafeCCCryptorHandle _cryptor;

    private CommonCryptoBlockCipher(ICommonCryptoApi api, SafeCCCryptorHandle cryptor, BlockCipherMode mode)
        : base(mode)
    {
        _api = api;
        _cryptor = cryptor;
    }

    /// <summary>
    /// Creates a cryptor. The key bytes are copied to a stack buffer only for the native call and zeroed
    /// right after it.
    /// </summary>
    internal static CommonCryptoBlockCipher Create(ICommonCryptoApi api, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(api);
        uint ccMode = mode switch
        {
            BlockCipherMode.Ecb => CommonCryptor.kCCModeECB,
            BlockCipherMode.Cbc => CommonCryptor.kCCModeCBC,
            _ => throw new ArgumentOutOfRangeException(nameof(mode)),
        };

        if (key.Length is not (16 or 24 or 32))
        {
            throw new CryptographicException("Specified key is not a valid size for this algorithm.");
        }

        var handle = new SafeCCCryptorHandle(api);
        try
        {
            int status;
            Span<byte> keyCopy = stackalloc byte[32];
            try
            {
                key.CopyTo(keyCopy);
                status = api.CreateWithMode(
                    encrypting ? CommonCryptor.kCCEncrypt : CommonCryptor.kCCDecrypt,
                    ccMode,
                    iv: default,
                    keyCopy[..key.Length],
                    handle);
            }
            finally
            {
                CryptographicOperations.ZeroMemory(keyCopy);
            }

            if (status != CommonCryptor.kCCSuccess)
            {
                throw Error("CCCryptorCreateWithMode", status);
            }

            if (handle.IsInvalid)
            {
                throw new CryptographicException("CCCryptorCreateWithMode succeeded but returned no cryptor.");
            }

            return new CommonCryptoBlockCipher(api, handle, mode);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <inheritdoc />
    /// <remarks>Only ever called for CBC: on ECB <c>CCCryptorReset</c> returns <c>kCCUnimplemented</c> (macOS 10.13+).</remarks>
    protected override void ResetCore(ReadOnlySpan<byte> iv)
    {
        Debug.Assert(Mode == BlockCipherMode.Cbc);
        int status = _api.Reset(_cryptor, iv);
        if (status != CommonCryptor.kCCSuccess)
        {
            throw Error("CCCryptorReset", status);
        }
    }

    /// <inheritdoc />
    protected override void ReleaseCore() => _cryptor.Dispose();

    /// <summary>Builds the exception for a failed CommonCrypto call: the function name and the status (value and name).</summary>
    internal static CryptographicException Error(string function, int status)
        => new(string.Create(CultureInfo.InvariantCulture, $"{function} failed with CCCryptorStatus {status} ({StatusName(status)})."));

    private static string StatusName(int status) => status switch
    {
        CommonCryptor.kCCParamError => "kCCParamError",
        CommonCryptor.kCCBufferTooSmall => "kCCBufferTooSmall",
        CommonCryptor.kCCMemoryFailure => "kCCMemoryFailure",
        CommonCryptor.kCCAlignmentError => "kCCAlignmentError",
        CommonCryptor.kCCDecodeError => "kCCDecodeError",
        CommonCryptor.kCCUnimplemented => "kCCUnimplemented",
        _ => "unknown status",
    };

    /// <inheritdoc />
    protected override void TransformCore(ReadOnlySpan<byte> input, Span<byte> output)
    {
        int status = _api.Update(_cryptor, input, output, out nuint moved);
        if (status != CommonCryptor.kCCSuccess)
        {
            throw Error("CCCryptorUpdate", status);
        }

        // Without padding, whole blocks in must give the same number of bytes out.
        if (moved != (nuint)input.Length)
        {
            throw new CryptographicException(string.Create(
                CultureInfo.InvariantCulture, $"CCCryptorUpdate wrote {moved} bytes instead of {input.Length}."));
        }
    }
}
