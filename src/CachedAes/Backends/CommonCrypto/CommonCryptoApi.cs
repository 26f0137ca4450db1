using System;
using System.Runtime.CompilerServices;
using System.Runtime.Versioning;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>The real <see cref="ICommonCryptoApi"/>: straight calls into <c>libcommonCrypto.dylib</c>.</summary>
/// <remarks>Every method is never inlined, so that its native call is made inline with the vector registers' upper
/// halves cleared before it (docs/design-notes.md, "Native calls out of line").</remarks>
[SupportedOSPlatform("macos")]
internal sealed unsafe class CommonCryptoApi : ICommonCryptoApi
{
    /// <summary>The one instance.</summary>
    public static readonly CommonCryptoApi Instance = new();

    private CommonCryptoApi() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int CreateWithMode(uint operation, uint mode, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> key, SafeCCCryptorHandle cryptor)
    {
        int status;
        nint raw;

        // Pinning an empty span yields a null pointer: an empty IV is passed as NULL.
        fixed (byte* pIv = iv)
        fixed (byte* pKey = key)
        {
            status = CommonCryptor.CCCryptorCreateWithMode(
                operation, mode, CommonCryptor.kCCAlgorithmAES, CommonCryptor.ccNoPadding,
                pIv, pKey, (nuint)key.Length, null, 0, 0, 0, out raw);
        }

        // The SafeHandle was allocated before the call, so taking ownership cannot fail here.
        if (status == CommonCryptor.kCCSuccess)
        {
            cryptor.Attach(raw);
        }

        return status;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int Update(nint cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved)
    {
        fixed (byte* pInput = input)
        fixed (byte* pOutput = output)
        {
            return CommonCryptor.CCCryptorUpdate(cryptor, pInput, (nuint)input.Length, pOutput, (nuint)output.Length, out moved);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int Reset(nint cryptor, ReadOnlySpan<byte> iv)
    {
        fixed (byte* pIv = iv)
        {
            return CommonCryptor.CCCryptorReset(cryptor, pIv);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int Release(nint cryptor) => CommonCryptor.CCCryptorRelease(cryptor);
}
