using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Security.Cryptography;

namespace CachedCryptography;

/// <summary>
/// Every exception message CachedAes produces, and the factories that throw them. Where stock .NET reports the same
/// condition, the text is stock's own, so a caller that logs or compares messages sees no difference.
/// </summary>
internal static class Errors
{
    // Stock .NET's texts for the same conditions.
    internal const string PartialBlock = "The input data is not a complete block.";
    internal const string InvalidPadding = "Padding is invalid and cannot be removed.";
    internal const string InvalidKeySize = "Specified key is not a valid size for this algorithm.";
    internal const string KeyWrapIntegrity = "The ciphertext did not successfully decrypt with the instance key.";
    internal const string DestinationTooShort = "Destination is too short.";
    internal const string OverlappingBuffers = "One or more provided buffers overlap.";
    internal const string PlaintextTooLarge = "The specified plaintext size is too large.";
    internal const string InvalidIVSize = "Specified initialization vector (IV) does not match the block size for this algorithm.";
    internal const string MissingIV = "The cipher mode specified requires that an initialization vector (IV) be used.";
    internal const string MustTransformWholeBlock = "TransformBlock may only process bytes in block sized increments.";
    internal const string InvalidOffsetLength =
        "Offset and length were out of bounds for the array or count is greater than the number of elements from index to the end of the source collection.";

    // RFC 3394 length rules: .NET 11 has resources for these that .NET 10 lacks; the wording is ours.
    internal const string KeyWrapPlaintextLength =
        "The plaintext must be a multiple of 8 bytes and at least 16 bytes long for the Key Wrap algorithm.";

    internal const string KeyWrapCiphertextLength =
        "The ciphertext is not a valid length for the Key Wrap unwrap algorithm: it must be a multiple of 8 bytes and at least 24 bytes long.";

    /// <summary>Stock's text for a destination of the wrong exact length.</summary>
    internal static string DestinationMustBeExactly(int length) =>
        string.Create(CultureInfo.InvariantCulture, $"Destination must be exactly {length} bytes.");

    [DoesNotReturn]
    internal static void ThrowPartialBlock() => throw new CryptographicException(PartialBlock);

    [DoesNotReturn]
    internal static void ThrowInvalidPadding() => throw new CryptographicException(InvalidPadding);

    [DoesNotReturn]
    internal static void ThrowInvalidKeySize() => throw new CryptographicException(InvalidKeySize);

    [DoesNotReturn]
    internal static void ThrowKeyWrapIntegrity() => throw new CryptographicException(KeyWrapIntegrity);

    [DoesNotReturn]
    internal static void ThrowOverlappingBuffers() => throw new CryptographicException(OverlappingBuffers);

    /// <summary>
    /// What stock's own transform throws when it is used after Dispose and reaches its native cipher, which differs by
    /// platform: on Linux its OpenSSL cipher holds a closed SafeHandle, whose <see cref="ObjectDisposedException"/> names
    /// the handle's type (<see cref="StockTransformHandleType"/>: the message ends "Object name:
    /// 'Microsoft.Win32.SafeHandles.SafeEvpCipherCtxHandle'.", on .NET 10 and .NET 11 alike); on Windows and macOS its CNG
    /// and CommonCrypto wrappers set their handle to null on Dispose, so the next use dereferences null
    /// (<see cref="NullReferenceException"/>). A drop-in throws the same, message included.
    /// </summary>
    [DoesNotReturn]
    internal static void ThrowDisposedTransform()
    {
        if (OperatingSystem.IsWindows() || OperatingSystem.IsMacOS())
        {
#pragma warning disable CA2201 // Stock's own exception on these platforms, which callers of a drop-in may already handle.
            throw new NullReferenceException();
#pragma warning restore CA2201
        }

        throw new ObjectDisposedException(StockTransformHandleType);
    }

    /// <summary>The object name in the <see cref="ObjectDisposedException"/> of stock's disposed transform on Linux.</summary>
    internal const string StockTransformHandleType = "Microsoft.Win32.SafeHandles.SafeEvpCipherCtxHandle";

    // Native failures that every backend reports alike. Each library's own failure text (its status or error queue) is
    // written in its backend's folder.

    /// <summary>A native call reported success but transformed a different number of bytes.</summary>
    internal static string ShortNativeOutput(string function, ulong written, int expected) =>
        string.Create(CultureInfo.InvariantCulture, $"{function} wrote {written} bytes instead of {expected}.");

    /// <summary>A native create call reported success but gave back no handle.</summary>
    internal static CryptographicException NoNativeHandle(string function, string what) => new($"{function} succeeded but returned no {what}.");

    /// <summary>A handle's failure was asked for although none was recorded (a bug in the caller).</summary>
    internal static CryptographicException NoFailureRecorded(string library) => new($"No {library} failure was recorded.");
}
