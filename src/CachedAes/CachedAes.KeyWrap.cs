using System;
using System.Security.Cryptography;
using CachedCryptography.Operations;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography;

// Key wrap cores: RFC 5649 (with padding) overrides .NET 10's Aes cores; RFC 3394 (without padding) overrides .NET 11's
// (on the net10.0 build they are private, called by the members in CachedAes.Rfc3394.Net10.cs). Every one runs all its AES
// steps on one cached ECB handle, held for the whole operation (Operations/KeyWrap.cs).
public sealed partial class CachedAes
{
    // RFC 3394 section 2.2.3.1: the default initial value. A constant span: no allocation.
    private static ReadOnlySpan<byte> KeyWrapDefaultInitialValue => [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];

    /// <inheritdoc />
    /// <remarks>RFC 5649 runs every step on one cached ECB encryption handle, held for the whole wrap.</remarks>
    /// <exception cref="CryptographicException">A native call failed.</exception>
    protected override void EncryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        using KeyEpoch.HandleLease ecb = Rent(BlockCipherMode.Ecb, encrypting: true);
        KeyWrap.WrapPadded(ecb.Cipher, source, destination);
    }

    /// <inheritdoc />
    /// <remarks>
    /// RFC 5649 runs every step on one cached ECB decryption handle, held for the whole unwrap. The integrity checks are
    /// combined without branching on secret data; on failure the destination is cleared.
    /// </remarks>
    /// <exception cref="CryptographicException">The ciphertext does not unwrap under this key (integrity check failed), or a native call failed.</exception>
    protected override int DecryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        using KeyEpoch.HandleLease ecb = Rent(BlockCipherMode.Ecb, encrypting: false);
        return KeyWrap.UnwrapPadded(ecb.Cipher, source, destination);
    }

    /// <summary>
    /// RFC 3394 wrap of <paramref name="source"/> into <paramref name="destination"/> on the cached ECB encryption handle,
    /// held for the whole wrap. On .NET 11 this overrides <c>Aes.EncryptKeyWrapCore</c>, which <c>Aes.EncryptKeyWrap</c>
    /// calls after validating; on .NET 10 it has that shape but is private, because a sealed class cannot declare new
    /// virtual (or, without a warning, protected) members and .NET 10's <see cref="Aes"/> has no such virtual to override.
    /// </summary>
    /// <param name="source">The plaintext: validated by the caller to be at least 16 bytes and a multiple of 8.</param>
    /// <param name="destination">Exactly <c>source.Length + 8</c> bytes, validated by the caller not to overlap the source.</param>
#if NET11_0_OR_GREATER
    protected override void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)
#else
    private void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)
#endif
    {
        using KeyEpoch.HandleLease ecb = Rent(BlockCipherMode.Ecb, encrypting: true);
        KeyWrap.Wrap(ecb.Cipher, KeyWrapDefaultInitialValue, source, destination);
    }

    /// <summary>
    /// RFC 3394 unwrap of <paramref name="source"/> into <paramref name="destination"/> on the cached ECB decryption handle,
    /// held for the whole unwrap, checking the default initial value in constant time. On .NET 11 this overrides
    /// <c>Aes.DecryptKeyWrapCore</c>; on .NET 10 it is private, for the same reason as <see cref="EncryptKeyWrapCore"/>.
    /// </summary>
    /// <param name="source">The wrapped data: validated by the caller to be at least 24 bytes and a multiple of 8.</param>
    /// <param name="destination">Exactly <c>source.Length - 8</c> bytes, validated by the caller not to overlap the source.</param>
    /// <returns><c>source.Length - 8</c>.</returns>
    /// <exception cref="CryptographicException">The integrity check failed (the destination is then all zero), or a native call failed.</exception>
#if NET11_0_OR_GREATER
    protected override int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)
#else
    private int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)
#endif
    {
        using KeyEpoch.HandleLease ecb = Rent(BlockCipherMode.Ecb, encrypting: false);
        KeyWrap.Unwrap(ecb.Cipher, KeyWrapDefaultInitialValue, source, destination);
        return destination.Length;
    }
}
