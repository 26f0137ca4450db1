using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Interop.CommonCrypto;

/// <summary>
/// One CommonCrypto AES cryptor for one mode and one direction, padding off.
/// </summary>
/// <remarks>
/// <para>The cryptor is created with a NULL IV (all zeroes for CBC, ignored for ECB). Each CBC message first calls
/// <c>CCCryptorReset</c> with its IV. ECB never calls <c>CCCryptorReset</c>: it returns <c>kCCUnimplemented</c> on
/// macOS 10.13+ (and ECB has no chaining state to restart).</para>
/// <para>The native layer is injected (<see cref="ICommonCryptoApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CommonCryptoBlockCipher : BlockCipher
{
    private readonly ICommonCryptoApi _api;
    private readonly SafeCCCryptorHandle _cryptor;
    private readonly nint _rawCryptor;
    private string? _failure;

    private CommonCryptoBlockCipher(ICommonCryptoApi api, SafeCCCryptorHandle cryptor, BlockCipherMode mode, bool encrypting)
    {
        _api = api;
        _cryptor = cryptor;
        _rawCryptor = cryptor.DangerousGetHandle();
        Mode = mode;
        Encrypting = encrypting;
    }

    /// <summary>
    /// Creates a cryptor. The key bytes are copied to a stack buffer only for the native call and zeroed
    /// right after it.
    /// </summary>
    internal static CommonCryptoBlockCipher Create(ICommonCryptoApi api, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        SafeCCCryptorHandle cryptor = CreateCryptor(api, mode, encrypting, key);
        return new CommonCryptoBlockCipher(api, cryptor, mode, encrypting);
    }

    /// <summary>A cryptor for <paramref name="key"/>, owned by the returned handle.</summary>
    /// <exception cref="CryptographicException"><c>CCCryptorCreateWithMode</c> failed or the key size is invalid.</exception>
    internal static SafeCCCryptorHandle CreateCryptor(ICommonCryptoApi api, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
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
            Errors.ThrowInvalidKeySize();
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
                throw Errors.NoNativeHandle("CCCryptorCreateWithMode", "cryptor");
            }

            return handle;
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        // CBC: restart at the message's IV. ECB: never (see the remarks).
        if (Mode == BlockCipherMode.Cbc)
        {
            int resetStatus = _api.Reset(_rawCryptor, iv);
            if (resetStatus != CommonCryptor.kCCSuccess)
            {
                return Fail(Message("CCCryptorReset", resetStatus));
            }
        }

        // The raw reference: this object owns it through _cryptor, and only the one caller holding this handle uses it.
        int status = _api.Update(_rawCryptor, input, output, out nuint moved);
        if (status != CommonCryptor.kCCSuccess)
        {
            return Fail(Message("CCCryptorUpdate", status));
        }

        // Without padding, whole blocks in must give the same number of bytes out.
        return moved == (nuint)input.Length || Fail(Errors.ShortNativeOutput("CCCryptorUpdate", moved, input.Length));
    }

    public override CryptographicException CreateFailure() => _failure is null ? Errors.NoFailureRecorded("CommonCrypto") : new(_failure);

    public override void Release() => _cryptor.Dispose();

    /// <summary>Builds the exception for a failed CommonCrypto call: the function name and the status (value and name).</summary>
    internal static CryptographicException Error(string function, int status) => new(Message(function, status));

    private static string Message(string function, int status) => Errors.CommonCryptoFailure(function, status, StatusName(status));

    private bool Fail(string failure)
    {
        _failure = failure;
        Fault();
        return false;
    }

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
}
