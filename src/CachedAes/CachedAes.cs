using System;
using System.Security.Cryptography;
using CachedCryptography.Core;
using CachedCryptography.Interop;

namespace CachedCryptography;

/// <summary>
/// A drop-in replacement for <see cref="Aes.Create()"/> that keeps its native AES handles between calls. One
/// instance may be shared by any number of threads: concurrent calls run in parallel, each on a native handle of
/// its own, and a key change applies to every call that starts after it returns.
/// </summary>
/// <remarks>
/// <para>
/// Stock <see cref="Aes"/> creates, keys and frees a native cipher for every one-shot call
/// (<see cref="SymmetricAlgorithm.EncryptEcb(ReadOnlySpan{byte}, PaddingMode)"/>,
/// <see cref="SymmetricAlgorithm.DecryptCbc(ReadOnlySpan{byte}, ReadOnlySpan{byte}, PaddingMode)"/>, ...).
/// <see cref="CachedAes"/> keys a native handle per mode (ECB, CBC) and direction on first use and reuses it for every
/// later call, including each step of <see cref="Aes.EncryptKeyWrapPadded(ReadOnlySpan{byte})"/> and
/// <see cref="Aes.DecryptKeyWrapPadded(ReadOnlySpan{byte})"/>.
/// </para>
/// <para>
/// <b>Threads.</b> Everything stock allows from several threads at once works the same way here, without locks and
/// without waiting. A native handle is used by one call at a time; a call that finds the cached handle busy takes
/// another from a small per-instance set, created on demand, that keeps at most one handle per processor for each
/// mode and direction (beyond that, a call uses a handle of its own and frees it afterwards). A key change
/// (<see cref="Key"/>, <see cref="SymmetricAlgorithm.SetKey(ReadOnlySpan{byte})"/>, <see cref="KeySize"/>,
/// <see cref="GenerateKey"/>) is atomic: no call that starts after it returns uses an older key, while calls already
/// running finish with the key they started with, as on stock; the handles made with the old key are released as
/// soon as no call is using them. <see cref="SymmetricAlgorithm.Dispose()"/> never throws, releases every handle once
/// no call is using it, and, like stock, a later use silently generates a new key.
/// </para>
/// <para>
/// Everything else behaves like stock <see cref="Aes.Create()"/>: the same bytes, the same exceptions for the same
/// bad input, the same five padding modes, CFB one-shots, and <see cref="CreateEncryptor(byte[], byte[])"/> /
/// <see cref="CreateDecryptor(byte[], byte[])"/> transforms that do not depend on the instance afterwards.
/// </para>
/// <para>The key is held in unmanaged memory that the garbage collector never moves, zeroed when replaced or disposed.</para>
/// </remarks>
public sealed partial class CachedAes : Aes
{
    // The key and every handle made with it; all thread-safe. A struct field, so a new instance allocates no extra object.
    private KeyedHandles _handles;

    /// <summary>Creates an instance with a 256-bit key generated on first use, like <see cref="Aes.Create()"/>.</summary>
    public CachedAes()
        : this(CipherBackends.Default)
    {
    }

    /// <summary>Creates an instance over a given backend (tests run every backend through one contract suite).</summary>
    internal CachedAes(CipherBackend backend) => _handles = new KeyedHandles(backend);

    /// <summary>Creates a new <see cref="CachedAes"/> instance.</summary>
    /// <returns>A new instance; the caller disposes it.</returns>
    public static new CachedAes Create() => new();

    /// <summary>The native library whose handles this instance caches.</summary>
    /// <value>
    /// <see cref="CachedAesBackend.OpenSsl"/> on Linux, <see cref="CachedAesBackend.Cng"/> on Windows,
    /// <see cref="CachedAesBackend.CommonCrypto"/> on macOS, or <see cref="CachedAesBackend.StockFallback"/> where
    /// none is available (every call then behaves and costs like stock <see cref="Aes"/>).
    /// </value>
    public CachedAesBackend Backend => _handles.Backend.Kind;

    /// <summary>The key and handles (a test seam).</summary>
    internal ref KeyedHandles Handles => ref _handles;

    /// <summary>How many native handles this instance's backend has made (a test seam: tests give instances backends of their own).</summary>
    internal int HandleCreations => _handles.Backend.Creations;

    /// <summary>The handle cached in the main slot for a mode and direction, or null (a test seam).</summary>
    internal BlockCipher? PeekCachedHandle(BlockCipherMode mode, bool encrypting) => _handles.Peek(mode, encrypting);

    /// <summary>Gets or sets the secret key.</summary>
    /// <value>A copy of the key; a random key of <see cref="KeySize"/> bits is generated on first read if none was set.
    /// Read while another thread changes the key, it returns the old or the new key.</value>
    /// <exception cref="CryptographicException">The key set is null or not 16, 24 or 32 bytes long.</exception>
    public override byte[] Key
    {
        get
        {
            KeyBox key = _handles.AcquireKey(KeySizeValue);
            try
            {
                return key.DangerousSpan.ToArray();
            }
            finally
            {
                key.DangerousRelease();
            }
        }

        // Like stock, a null key is an invalid key size (CryptographicException), not an ArgumentNullException.
        set => SetKey(value);
    }

    /// <summary>Gets or sets the key size in bits. Setting it discards the current key and its native handles.</summary>
    /// <exception cref="CryptographicException">The size is not 128, 192 or 256.</exception>
    public override int KeySize
    {
        get => base.KeySize;
        set
        {
            base.KeySize = value;
            _handles.ReplaceKey(null);
        }
    }

    /// <summary>Replaces the key with a random one of <see cref="KeySize"/> bits and releases the native handles.</summary>
    public override void GenerateKey() => _handles.ReplaceKey(KeyedHandles.GenerateKey(KeySizeValue));

    /// <summary>Replaces <see cref="SymmetricAlgorithm.IV"/> with a random 16-byte value.</summary>
    public override void GenerateIV() => IV = RandomNumberGenerator.GetBytes(BlockSize / 8);

    /// <summary>Creates an encryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// <see cref="SymmetricAlgorithm.FeedbackSize"/>, key and IV; it does not depend on this instance afterwards.</summary>
    /// <returns>A stock encryptor.</returns>
    /// <exception cref="CryptographicException">The mode is not supported.</exception>
    public override ICryptoTransform CreateEncryptor() => CreateTransformWithOwnKey(encrypting: true);

    /// <summary>Creates a decryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// <see cref="SymmetricAlgorithm.FeedbackSize"/>, key and IV; it does not depend on this instance afterwards.</summary>
    /// <returns>A stock decryptor.</returns>
    /// <exception cref="CryptographicException">The mode is not supported.</exception>
    public override ICryptoTransform CreateDecryptor() => CreateTransformWithOwnKey(encrypting: false);

    /// <summary>Creates an encryptor for the given key and IV with this instance's mode, padding and feedback size, as stock does.</summary>
    /// <param name="rgbKey">The key.</param>
    /// <param name="rgbIV">The IV (required for CBC and CFB).</param>
    /// <returns>A stock encryptor, independent of this instance.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="rgbKey"/> is null.</exception>
    /// <exception cref="ArgumentException">The key or IV has an invalid size.</exception>
    /// <exception cref="CryptographicException">The mode needs an IV and <paramref name="rgbIV"/> is null, or the mode is not supported.</exception>
    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => CreateTransform(rgbKey, rgbIV, encrypting: true);

    /// <summary>Creates a decryptor for the given key and IV with this instance's mode, padding and feedback size, as stock does.</summary>
    /// <param name="rgbKey">The key.</param>
    /// <param name="rgbIV">The IV (required for CBC and CFB).</param>
    /// <returns>A stock decryptor, independent of this instance.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="rgbKey"/> is null.</exception>
    /// <exception cref="ArgumentException">The key or IV has an invalid size.</exception>
    /// <exception cref="CryptographicException">The mode needs an IV and <paramref name="rgbIV"/> is null, or the mode is not supported.</exception>
    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => CreateTransform(rgbKey, rgbIV, encrypting: false);

    /// <inheritdoc />
    /// <remarks>Validated by the base class; replaces the key and releases the native handles made with the old one.</remarks>
    protected override void SetKeyCore(ReadOnlySpan<byte> key)
    {
        KeySizeValue = checked(8 * key.Length);
        _handles.ReplaceKey(new KeyBox(key));
    }

    /// <summary>Encrypts with ECB on a cached ECB encryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, or a native
    /// call failed (the handle is then released and the next call makes a new one).
    /// </exception>
    protected override bool TryEncryptEcbCore(ReadOnlySpan<byte> plaintext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        OneShot.Encrypt(ref _handles, KeySizeValue, BlockCipherMode.Ecb, default, paddingMode, plaintext, destination, out bytesWritten);

    /// <summary>Decrypts with ECB on a cached ECB decryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, or a native call failed (the handle is then released).
    /// No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    protected override bool TryDecryptEcbCore(ReadOnlySpan<byte> ciphertext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        OneShot.Decrypt(ref _handles, KeySizeValue, BlockCipherMode.Ecb, default, paddingMode, ciphertext, destination, out bytesWritten);

    /// <summary>Encrypts with CBC on a cached CBC encryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, or a native
    /// call failed (the handle is then released and the next call makes a new one).
    /// </exception>
    protected override bool TryEncryptCbcCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        OneShot.Encrypt(ref _handles, KeySizeValue, BlockCipherMode.Cbc, iv, paddingMode, plaintext, destination, out bytesWritten);

    /// <summary>Decrypts with CBC on a cached CBC decryption handle.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, or a native call failed (the handle is then released).
    /// No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    protected override bool TryDecryptCbcCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        OneShot.Decrypt(ref _handles, KeySizeValue, BlockCipherMode.Cbc, iv, paddingMode, ciphertext, destination, out bytesWritten);

    /// <inheritdoc />
    /// <remarks>CFB is not cached natively: it runs on a stock instance holding the same key, kept between calls.</remarks>
    /// <exception cref="CryptographicException">The feedback size is not 8 or 128 bits, or the input is invalid for the padding mode.</exception>
    protected override bool TryEncryptCfbCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        using CfbLease cfb = _handles.RentCfb(KeySizeValue);
        return cfb.Aes.TryEncryptCfb(plaintext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
    }

    /// <inheritdoc />
    /// <remarks>CFB is not cached natively: it runs on a stock instance holding the same key, kept between calls.</remarks>
    /// <exception cref="CryptographicException">The feedback size is not 8 or 128 bits, or the input is invalid for the padding mode.</exception>
    protected override bool TryDecryptCfbCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        using CfbLease cfb = _handles.RentCfb(KeySizeValue);
        return cfb.Aes.TryDecryptCfb(ciphertext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
    }

    /// <inheritdoc />
    /// <remarks>RFC 5649 runs every step on one cached ECB encryption handle, held for the whole wrap.</remarks>
    /// <exception cref="CryptographicException">A native call failed.</exception>
    protected override void EncryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        using HandleLease ecb = _handles.Rent(BlockCipherMode.Ecb, encrypting: true, KeySizeValue);
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
        using HandleLease ecb = _handles.Rent(BlockCipherMode.Ecb, encrypting: false, KeySizeValue);
        return KeyWrap.UnwrapPadded(ecb.Cipher, source, destination);
    }

    /// <summary>
    /// Releases the key (zeroed) and every native handle once no call is using it. Never throws; a later use generates a
    /// new key, as stock does.
    /// </summary>
    /// <param name="disposing">True when called from <see cref="SymmetricAlgorithm.Dispose()"/>.</param>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _handles.ReplaceKey(null);
        }

        base.Dispose(disposing);
    }

    private ICryptoTransform CreateTransformWithOwnKey(bool encrypting)
    {
        byte[] key = Key;
        try
        {
            return CreateTransform(key, IV, encrypting);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
        }
    }

    // A short-lived stock instance with this instance's settings: the transform it makes copies the key and
    // IV, so it outlives that instance and ignores later changes here, exactly like stock's own transforms.
    private ICryptoTransform CreateTransform(byte[] rgbKey, byte[]? rgbIV, bool encrypting)
    {
        using Aes stock = Aes.Create();
        stock.Mode = Mode;
        stock.Padding = Padding;
        stock.FeedbackSize = FeedbackSize;
        return encrypting ? stock.CreateEncryptor(rgbKey, rgbIV) : stock.CreateDecryptor(rgbKey, rgbIV);
    }
}
