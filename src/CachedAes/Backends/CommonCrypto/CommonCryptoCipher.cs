using System;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>
/// One CommonCrypto AES cryptor for one mode and one direction, padding off.
/// </summary>
/// <remarks>
/// <para>The cryptor is created with a NULL IV (all zeroes for CBC, ignored for ECB). Each CBC message first calls
/// <c>CCCryptorReset</c> with its IV. ECB never calls <c>CCCryptorReset</c>: it returns <c>kCCUnimplemented</c> on
/// macOS 10.13+ (and ECB has no chaining state to restart).</para>
/// <para>In place, the input goes through a copy on the stack (<see cref="UpdateThroughCopy"/>): CommonCryptor.h does not
/// support in-place operation for ECB and CBC.</para>
/// <para>The native layer is injected (<see cref="ICommonCryptoApi"/>) so this logic is tested on any OS.</para>
/// </remarks>
internal sealed class CommonCryptoCipher : BlockCipher
{
    // The largest piece of an in-place transform copied to the stack at a time.
    private const int InPlaceChunk = 512;

    private readonly ICommonCryptoApi _api;
    private readonly SafeCCCryptorHandle _cryptor;
    private readonly nint _rawCryptor;

    private CommonCryptoCipher(ICommonCryptoApi api, SafeCCCryptorHandle cryptor, BlockCipherMode mode, bool encrypting)
    {
        _api = api;
        _cryptor = cryptor;
        _rawCryptor = cryptor.DangerousGetHandle();
        Mode = mode;
        Encrypting = encrypting;
    }

    /// <summary>Creates a cryptor for <paramref name="key"/> (16, 24 or 32 bytes).</summary>
    /// <exception cref="CryptographicException"><c>CCCryptorCreateWithMode</c> failed.</exception>
    internal static CommonCryptoCipher Create(ICommonCryptoApi api, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        SafeCCCryptorHandle cryptor = CreateCryptor(api, mode, encrypting, key);
        return new CommonCryptoCipher(api, cryptor, mode, encrypting);
    }

    /// <summary>
    /// A cryptor for <paramref name="key"/> (passed to CommonCrypto as it is: no copy is made), owned by the returned handle.
    /// </summary>
    /// <exception cref="CryptographicException"><c>CCCryptorCreateWithMode</c> failed.</exception>
    internal static SafeCCCryptorHandle CreateCryptor(ICommonCryptoApi api, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        uint ccMode = mode switch
        {
            BlockCipherMode.Ecb => CommonCryptor.kCCModeECB,
            BlockCipherMode.Cbc => CommonCryptor.kCCModeCBC,
            _ => throw new ArgumentOutOfRangeException(nameof(mode)),
        };

        var handle = new SafeCCCryptorHandle(api);
        try
        {
            int status = api.CreateWithMode(encrypting ? CommonCryptor.kCCEncrypt : CommonCryptor.kCCDecrypt, ccMode, iv: default, key, handle);
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

        // The seam passes the same memory or none in common: in place goes through a copy (see UpdateThroughCopy).
        return input.Overlaps(output) ? UpdateThroughCopy(input, output) : Update(input, output);
    }

    private bool Update(ReadOnlySpan<byte> input, Span<byte> output)
    {
        // The raw reference: this object owns it through _cryptor, and only the one caller holding this handle uses it.
        int status = _api.Update(_rawCryptor, input, output, out nuint moved);
        if (status != CommonCryptor.kCCSuccess)
        {
            return Fail(Message("CCCryptorUpdate", status));
        }

        // Without padding, whole blocks in must give the same number of bytes out.
        return moved == (nuint)input.Length || Fail(Errors.ShortNativeOutput("CCCryptorUpdate", moved, input.Length));
    }

    /// <summary>
    /// An in-place transform, as separate buffers: CommonCryptor.h documents in-place operation as "not supported" for
    /// block modes such as ECB and CBC, so each chunk of the input is copied to the stack and transformed from there into
    /// the output. The cryptor carries the CBC chain from one chunk to the next, as across any two updates. The copy is
    /// zeroed afterwards (it held the input: plaintext when encrypting).
    /// </summary>
    [SkipLocalsInit] // each chunk is written before it is read
    private bool UpdateThroughCopy(ReadOnlySpan<byte> input, Span<byte> output)
    {
        Span<byte> copy = stackalloc byte[InPlaceChunk];
        copy = copy[..Math.Min(InPlaceChunk, input.Length)];
        bool done = true;
        for (int offset = 0; done && offset < input.Length; offset += InPlaceChunk)
        {
            int length = Math.Min(InPlaceChunk, input.Length - offset);
            input.Slice(offset, length).CopyTo(copy);
            done = Update(copy[..length], output.Slice(offset, length));
        }

        CryptographicOperations.ZeroMemory(copy);
        return done;
    }

    public override void Release() => _cryptor.Dispose();

    /// <summary>Builds the exception for a failed CommonCrypto call: the function name and the status (value and name).</summary>
    internal static CryptographicException Error(string function, int status) => new(Message(function, status));

    private static string Message(string function, int status) =>
        string.Create(CultureInfo.InvariantCulture, $"{function} failed with CCCryptorStatus {status} ({StatusName(status)}).");

    // Every CCCryptorStatus of CommonCryptoError.h.
    private static string StatusName(int status) => status switch
    {
        CommonCryptor.kCCParamError => "kCCParamError",
        CommonCryptor.kCCBufferTooSmall => "kCCBufferTooSmall",
        CommonCryptor.kCCMemoryFailure => "kCCMemoryFailure",
        CommonCryptor.kCCAlignmentError => "kCCAlignmentError",
        CommonCryptor.kCCDecodeError => "kCCDecodeError",
        CommonCryptor.kCCUnimplemented => "kCCUnimplemented",
        CommonCryptor.kCCOverflow => "kCCOverflow",
        CommonCryptor.kCCRNGFailure => "kCCRNGFailure",
        CommonCryptor.kCCUnspecifiedError => "kCCUnspecifiedError",
        CommonCryptor.kCCCallSequenceError => "kCCCallSequenceError",
        CommonCryptor.kCCKeySizeError => "kCCKeySizeError",
        CommonCryptor.kCCInvalidKey => "kCCInvalidKey",
        _ => "unknown status",
    };
}
