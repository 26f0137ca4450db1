#if !NET11_0_OR_GREATER
using System;
using System.Diagnostics;
using System.Security.Cryptography;

namespace CachedCryptography;

// AES Key Wrap without padding (IETF RFC 3394; NIST SP 800-38F KW-AE/KW-AD) on the net10.0 build: the members .NET 11 adds
// to Aes (API review of dotnet/runtime issue #130490, implemented in dotnet/runtime PR #132349):
//
//   public byte[] EncryptKeyWrap(byte[] plaintext);
//   public byte[] EncryptKeyWrap(ReadOnlySpan<byte> plaintext);
//   public void EncryptKeyWrap(ReadOnlySpan<byte> plaintext, Span<byte> destination);
//   protected virtual void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
//   public byte[] DecryptKeyWrap(byte[] ciphertext);
//   public byte[] DecryptKeyWrap(ReadOnlySpan<byte> ciphertext);
//   public int DecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination);
//   protected virtual int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
//   public bool TryDecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination, out int bytesWritten);
//   public static int GetKeyWrapLength(int plaintextLengthInBytes);
//
// The public members validate exactly as .NET 11's do, in the same order and with the same exception types and
// parameter names; the two cores (CachedAes.KeyWrap.cs) are the only code that touches the cached handle.
//
// The net11.0 build does not compile this file: there Aes itself declares the public members (non-virtual) and calls the
// two protected virtual cores, which CachedAes.KeyWrap.cs overrides.
public sealed partial class CachedAes
{
    // RFC 3394 needs at least two 64-bit blocks of plaintext; the wrap adds one 64-bit block.
    private const int KeyWrapMinPlaintextLength = 16;
    private const int KeyWrapMinCiphertextLength = KeyWrapMinPlaintextLength + KeyWrapBlockLength;
    private const int KeyWrapBlockLength = 8;

    // The largest plaintext whose wrap length still fits in an int, as in .NET 11 (and GetKeyWrapPaddedLength).
    private const int KeyWrapMaxPlaintextLength = 0x7FFF_FFF0;

    /// <summary>
    /// Computes the output length of the IETF RFC 3394 AES Key Wrap algorithm for a plaintext length.
    /// </summary>
    /// <param name="plaintextLengthInBytes">The length of the plaintext to wrap, in bytes.</param>
    /// <returns>The length of the wrapped data: <paramref name="plaintextLengthInBytes"/> + 8.</returns>
    /// <exception cref="ArgumentOutOfRangeException">
    /// <para><paramref name="plaintextLengthInBytes"/> is less than 16 or is not a multiple of 8.</para>
    /// <para>-or-</para>
    /// <para><paramref name="plaintextLengthInBytes"/> is greater than 0x7FFFFFF0, so its wrap length cannot be represented as an <see cref="int"/>.</para>
    /// </exception>
    /// <remarks>
    /// .NET 11 declares this as <c>Aes.GetKeyWrapLength</c>. .NET 10's <see cref="Aes"/> has no such member, so on .NET 10
    /// call it as <c>CachedAes.GetKeyWrapLength</c>; that spelling still compiles, unchanged, against .NET 11.
    /// </remarks>
    public static int GetKeyWrapLength(int plaintextLengthInBytes)
    {
        if (plaintextLengthInBytes < KeyWrapMinPlaintextLength || plaintextLengthInBytes % KeyWrapBlockLength != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(plaintextLengthInBytes), Errors.KeyWrapPlaintextLength);
        }

        if (plaintextLengthInBytes > KeyWrapMaxPlaintextLength)
        {
            throw new ArgumentOutOfRangeException(nameof(plaintextLengthInBytes), Errors.PlaintextTooLarge);
        }

        return plaintextLengthInBytes + KeyWrapBlockLength;
    }

    /// <summary>Wraps a key with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key.</summary>
    /// <param name="plaintext">The data to wrap: at least 16 bytes and a multiple of 8 bytes.</param>
    /// <returns>The wrapped data, 8 bytes longer than <paramref name="plaintext"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="plaintext"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="plaintext"/> is shorter than 16 bytes or not a multiple of 8 bytes.</exception>
    /// <exception cref="CryptographicException">A native call failed.</exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.EncryptKeyWrap(byte[])</c>. On .NET 10 it is a member of <see cref="CachedAes"/>
    /// only, so it is reached through a <see cref="CachedAes"/>-typed reference, not through an <see cref="Aes"/> variable.
    /// Every AES step runs on the instance's cached ECB encryption handle.
    /// </remarks>
    public byte[] EncryptKeyWrap(byte[] plaintext)
    {
        ArgumentNullException.ThrowIfNull(plaintext);
        return EncryptKeyWrap(new ReadOnlySpan<byte>(plaintext));
    }

    /// <summary>Wraps a key with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key.</summary>
    /// <param name="plaintext">The data to wrap: at least 16 bytes and a multiple of 8 bytes.</param>
    /// <returns>The wrapped data, 8 bytes longer than <paramref name="plaintext"/>.</returns>
    /// <exception cref="ArgumentException"><paramref name="plaintext"/> is shorter than 16 bytes or not a multiple of 8 bytes.</exception>
    /// <exception cref="CryptographicException">A native call failed.</exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.EncryptKeyWrap(ReadOnlySpan&lt;byte&gt;)</c>; on .NET 10 reached through a
    /// <see cref="CachedAes"/>-typed reference. The result array is the only allocation.
    /// </remarks>
    public byte[] EncryptKeyWrap(ReadOnlySpan<byte> plaintext)
    {
        int length = KeyWrapCiphertextLength(plaintext);
        byte[] wrapped = new byte[length];
        EncryptKeyWrapCore(plaintext, wrapped);
        return wrapped;
    }

    /// <summary>
    /// Wraps a key with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key, writing the
    /// result to <paramref name="destination"/>.
    /// </summary>
    /// <param name="plaintext">The data to wrap: at least 16 bytes and a multiple of 8 bytes.</param>
    /// <param name="destination">The buffer for the wrapped data: exactly <see cref="GetKeyWrapLength"/> of the plaintext length.</param>
    /// <exception cref="ArgumentException">
    /// <para><paramref name="plaintext"/> is shorter than 16 bytes or not a multiple of 8 bytes.</para>
    /// <para>-or-</para>
    /// <para><paramref name="destination"/> is not exactly 8 bytes longer than <paramref name="plaintext"/>.</para>
    /// </exception>
    /// <exception cref="CryptographicException">
    /// <paramref name="plaintext"/> and <paramref name="destination"/> overlap, a native call failed (the destination is then
    /// cleared).
    /// </exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.EncryptKeyWrap(ReadOnlySpan&lt;byte&gt;, Span&lt;byte&gt;)</c>; on .NET 10 reached
    /// through a <see cref="CachedAes"/>-typed reference. Allocates nothing once the instance's ECB handle exists.
    /// </remarks>
    public void EncryptKeyWrap(ReadOnlySpan<byte> plaintext, Span<byte> destination)
    {
        int length = KeyWrapCiphertextLength(plaintext);

        if (destination.Length != length)
        {
            throw new ArgumentException(Errors.DestinationMustBeExactly(length), nameof(destination));
        }

        if (plaintext.Overlaps(destination))
        {
            Errors.ThrowOverlappingBuffers();
        }

        EncryptKeyWrapCore(plaintext, destination);
    }

    /// <summary>Unwraps a key wrapped with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key.</summary>
    /// <param name="ciphertext">The wrapped data: at least 24 bytes and a multiple of 8 bytes.</param>
    /// <returns>The unwrapped key, 8 bytes shorter than <paramref name="ciphertext"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="ciphertext"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="ciphertext"/> is shorter than 24 bytes or not a multiple of 8 bytes.</exception>
    /// <exception cref="CryptographicException">
    /// The integrity check failed (the data was not wrapped under this key, or was altered), or a native call failed.
    /// </exception>
    /// <remarks>The same member as .NET 11's <c>Aes.DecryptKeyWrap(byte[])</c>; on .NET 10 reached through a <see cref="CachedAes"/>-typed reference.</remarks>
    public byte[] DecryptKeyWrap(byte[] ciphertext)
    {
        ArgumentNullException.ThrowIfNull(ciphertext);
        return DecryptKeyWrap(new ReadOnlySpan<byte>(ciphertext));
    }

    /// <summary>Unwraps a key wrapped with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key.</summary>
    /// <param name="ciphertext">The wrapped data: at least 24 bytes and a multiple of 8 bytes.</param>
    /// <returns>The unwrapped key, 8 bytes shorter than <paramref name="ciphertext"/>.</returns>
    /// <exception cref="ArgumentException"><paramref name="ciphertext"/> is shorter than 24 bytes or not a multiple of 8 bytes.</exception>
    /// <exception cref="CryptographicException">
    /// The integrity check failed (the data was not wrapped under this key, or was altered), or a native call failed.
    /// </exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.DecryptKeyWrap(ReadOnlySpan&lt;byte&gt;)</c>; on .NET 10 reached through a
    /// <see cref="CachedAes"/>-typed reference. The key is unwrapped straight into the result array (the only allocation),
    /// which is zeroed before it is dropped on failure.
    /// </remarks>
    public byte[] DecryptKeyWrap(ReadOnlySpan<byte> ciphertext)
    {
        int length = KeyWrapPlaintextLength(ciphertext);
        byte[] unwrapped = new byte[length];

        try
        {
            int written = DecryptKeyWrapCore(ciphertext, unwrapped);
            Debug.Assert(written == length);
        }
        catch
        {
            CryptographicOperations.ZeroMemory(unwrapped);
            throw;
        }

        return unwrapped;
    }

    /// <summary>
    /// Unwraps a key wrapped with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key, writing
    /// the result to <paramref name="destination"/>.
    /// </summary>
    /// <param name="ciphertext">The wrapped data: at least 24 bytes and a multiple of 8 bytes.</param>
    /// <param name="destination">The buffer for the unwrapped key: at least 8 bytes shorter than <paramref name="ciphertext"/>.</param>
    /// <returns>The number of bytes written to <paramref name="destination"/>: always <c>ciphertext.Length - 8</c>.</returns>
    /// <exception cref="ArgumentException">
    /// <para><paramref name="ciphertext"/> is shorter than 24 bytes or not a multiple of 8 bytes.</para>
    /// <para>-or-</para>
    /// <para><paramref name="destination"/> is shorter than <c>ciphertext.Length - 8</c>.</para>
    /// </exception>
    /// <exception cref="CryptographicException">
    /// <paramref name="ciphertext"/> and <paramref name="destination"/> overlap, the integrity check failed, a native call
    /// failed. On every failure after the overlap check the first
    /// <c>ciphertext.Length - 8</c> bytes of <paramref name="destination"/> are zero; bytes beyond them are never written.
    /// </exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.DecryptKeyWrap(ReadOnlySpan&lt;byte&gt;, Span&lt;byte&gt;)</c>; on .NET 10 reached
    /// through a <see cref="CachedAes"/>-typed reference. Allocates nothing once the instance's ECB handle exists.
    /// </remarks>
    public int DecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination)
    {
        if (TryDecryptKeyWrap(ciphertext, destination, out int bytesWritten))
        {
            return bytesWritten;
        }

        throw new ArgumentException(Errors.DestinationTooShort, nameof(destination));
    }

    /// <summary>
    /// Attempts to unwrap a key wrapped with the IETF RFC 3394 AES Key Wrap algorithm (no padding) under this instance's key,
    /// writing the result to <paramref name="destination"/>.
    /// </summary>
    /// <param name="ciphertext">The wrapped data: at least 24 bytes and a multiple of 8 bytes.</param>
    /// <param name="destination">The buffer for the unwrapped key.</param>
    /// <param name="bytesWritten">The number of bytes written: <c>ciphertext.Length - 8</c> on success, 0 otherwise.</param>
    /// <returns>
    /// <see langword="true"/> if <paramref name="destination"/> is long enough for the unwrapped key; otherwise
    /// <see langword="false"/>, and nothing was written or computed.
    /// </returns>
    /// <exception cref="ArgumentException"><paramref name="ciphertext"/> is shorter than 24 bytes or not a multiple of 8 bytes.</exception>
    /// <exception cref="CryptographicException">
    /// <paramref name="ciphertext"/> and the first <c>ciphertext.Length - 8</c> bytes of <paramref name="destination"/>
    /// overlap, the integrity check failed, a native call failed. After an
    /// integrity or native failure those bytes of <paramref name="destination"/> are zero.
    /// </exception>
    /// <remarks>
    /// The same member as .NET 11's <c>Aes.TryDecryptKeyWrap</c>; on .NET 10 reached through a <see cref="CachedAes"/>-typed
    /// reference. The integrity register is compared with the default initial value <c>A6A6A6A6A6A6A6A6</c> in constant
    /// time. Allocates nothing once the instance's ECB handle exists.
    /// </remarks>
    public bool TryDecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination, out int bytesWritten)
    {
        int length = KeyWrapPlaintextLength(ciphertext);

        if (destination.Length < length)
        {
            bytesWritten = 0;
            return false;
        }

        destination = destination.Slice(0, length);

        if (ciphertext.Overlaps(destination))
        {
            Errors.ThrowOverlappingBuffers();
        }

        try
        {
            int written = DecryptKeyWrapCore(ciphertext, destination);
            Debug.Assert(written == length);
        }
        catch
        {
            // The core already leaves an integrity failure all zero; this covers every other failure too.
            CryptographicOperations.ZeroMemory(destination);
            throw;
        }

        bytesWritten = length;
        return true;
    }

    // .NET 11's validation of a plaintext span: ArgumentException naming "plaintext".
    private static int KeyWrapCiphertextLength(ReadOnlySpan<byte> plaintext)
    {
        if (plaintext.Length < KeyWrapMinPlaintextLength || plaintext.Length % KeyWrapBlockLength != 0)
        {
            throw new ArgumentException(Errors.KeyWrapPlaintextLength, nameof(plaintext));
        }

        if (plaintext.Length > KeyWrapMaxPlaintextLength)
        {
            throw new ArgumentException(Errors.PlaintextTooLarge, nameof(plaintext));
        }

        return plaintext.Length + KeyWrapBlockLength;
    }

    // .NET 11's validation of a ciphertext span: ArgumentException naming "ciphertext".
    private static int KeyWrapPlaintextLength(ReadOnlySpan<byte> ciphertext)
    {
        if (ciphertext.Length < KeyWrapMinCiphertextLength || ciphertext.Length % KeyWrapBlockLength != 0)
        {
            throw new ArgumentException(Errors.KeyWrapCiphertextLength, nameof(ciphertext));
        }

        return ciphertext.Length - KeyWrapBlockLength;
    }
}
#endif
