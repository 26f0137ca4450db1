using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>
/// The few CommonCrypto exports the macOS backend uses, declared as in <c>CommonCrypto/CommonCryptor.h</c>.
/// </summary>
/// <remarks>
/// <c>CCCryptorStatus</c> is <c>int32_t</c>; <c>CCOperation</c>, <c>CCMode</c>, <c>CCAlgorithm</c>,
/// <c>CCPadding</c> and <c>CCModeOptions</c> are <c>uint32_t</c>; lengths are <c>size_t</c>
/// (<see cref="nuint"/>); <c>CCCryptorRef</c> is a pointer. The functions use the C calling convention (the
/// platform default) and report failures only through their return value, so no <c>SetLastError</c>.
/// Only the functions are annotated macOS-only; the constants are shared with platform-neutral code.
/// </remarks>
internal static unsafe partial class CommonCryptor
{
    private const string Library = "/usr/lib/system/libcommonCrypto.dylib";

    /// <summary><c>kCCEncrypt</c> (<c>CCOperation</c>).</summary>
    internal const uint kCCEncrypt = 0;

    /// <summary><c>kCCDecrypt</c> (<c>CCOperation</c>).</summary>
    internal const uint kCCDecrypt = 1;

    /// <summary><c>kCCAlgorithmAES</c> (<c>CCAlgorithm</c>; same value as <c>kCCAlgorithmAES128</c>, for every AES key size).</summary>
    internal const uint kCCAlgorithmAES = 0;

    /// <summary><c>kCCModeECB</c> (<c>CCMode</c>).</summary>
    internal const uint kCCModeECB = 1;

    /// <summary><c>kCCModeCBC</c> (<c>CCMode</c>).</summary>
    internal const uint kCCModeCBC = 2;

    /// <summary><c>ccNoPadding</c> (<c>CCPadding</c>).</summary>
    internal const uint ccNoPadding = 0;

    /// <summary><c>kCCSuccess</c>.</summary>
    internal const int kCCSuccess = 0;

    /// <summary><c>kCCParamError</c>: illegal parameter value.</summary>
    internal const int kCCParamError = -4300;

    /// <summary><c>kCCBufferTooSmall</c>: insufficient output buffer.</summary>
    internal const int kCCBufferTooSmall = -4301;

    /// <summary><c>kCCMemoryFailure</c>: memory allocation failure.</summary>
    internal const int kCCMemoryFailure = -4302;

    /// <summary><c>kCCAlignmentError</c>: input size not aligned to the block size.</summary>
    internal const int kCCAlignmentError = -4303;

    /// <summary><c>kCCDecodeError</c>: input data did not decode or decrypt properly.</summary>
    internal const int kCCDecodeError = -4304;

    /// <summary><c>kCCUnimplemented</c>: function not implemented for this algorithm or mode (e.g. <c>CCCryptorReset</c> on ECB).</summary>
    internal const int kCCUnimplemented = -4305;

    /// <summary><c>kCCOverflow</c>.</summary>
    internal const int kCCOverflow = -4306;

    /// <summary><c>kCCRNGFailure</c>.</summary>
    internal const int kCCRNGFailure = -4307;

    /// <summary><c>kCCUnspecifiedError</c>: what <c>CCCryptorCreateWithMode</c> returns when the key schedule cannot be set up.</summary>
    internal const int kCCUnspecifiedError = -4308;

    /// <summary><c>kCCCallSequenceError</c>.</summary>
    internal const int kCCCallSequenceError = -4309;

    /// <summary><c>kCCKeySizeError</c>: what <c>CCCryptorCreateWithMode</c> returns for a key of no size the algorithm takes.</summary>
    internal const int kCCKeySizeError = -4310;

    /// <summary><c>kCCInvalidKey</c>: key is not valid.</summary>
    internal const int kCCInvalidKey = -4311;

    // CCCryptorStatus CCCryptorCreateWithMode(CCOperation op, CCMode mode, CCAlgorithm alg, CCPadding padding,
    //     const void *iv, const void *key, size_t keyLength, const void *tweak, size_t tweakLength,
    //     int numRounds, CCModeOptions options, CCCryptorRef *cryptorRef);
    // A NULL iv means an all-zero IV; the iv is ignored in ECB mode.
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    internal static partial int CCCryptorCreateWithMode(
        uint op, uint mode, uint alg, uint padding, byte* iv, byte* key, nuint keyLength,
        byte* tweak, nuint tweakLength, int numRounds, uint options, out nint cryptorRef);

    // CCCryptorStatus CCCryptorUpdate(CCCryptorRef cryptorRef, const void *dataIn, size_t dataInLength,
    //     void *dataOut, size_t dataOutAvailable, size_t *dataOutMoved);
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    internal static partial int CCCryptorUpdate(nint cryptorRef, byte* dataIn, nuint dataInLength, byte* dataOut, nuint dataOutAvailable, out nuint dataOutMoved);

    // CCCryptorStatus CCCryptorReset(CCCryptorRef cryptorRef, const void *iv);
    // Returns kCCUnimplemented for ECB on macOS 10.13+ / iOS 11+: never called for ECB.
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    internal static partial int CCCryptorReset(nint cryptorRef, byte* iv);

    // CCCryptorStatus CCCryptorRelease(CCCryptorRef cryptorRef);
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    internal static partial int CCCryptorRelease(nint cryptorRef);
}
