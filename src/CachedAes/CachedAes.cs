using System;
using System.Security.Cryptography;
using CachedCryptography.Core;
using CachedCryptography.Interop;

namespace CachedCryptography;

/// <summary>
/// A drop-in replacement for <see cref="Aes.Create()"/> that keeps its native AES handles between calls.
/// </summary>
/// <remarks>
/// <para>
/// Stock <see cref="Aes"/> creates, keys and frees a native cipher for every one-shot call
/// (<see cref="SymmetricAlgorithm.EncryptEcb(ReadOnlySpan{byte}, PaddingMode)"/>,
/// <see cref="SymmetricAlgorithm.DecryptCbc(ReadOnlySpan{byte}, ReadOnlySpan{byte}, PaddingMode)"/>, ...).
/// <see cref="CachedAes"/> creates at most one native handle per mode (ECB, CBC) and direction, on first use,
/// keyed with the current key, and reuses it for every later call, including each step of
/// <see cref="Aes.EncryptKeyWrapPadded(ReadOnlySpan{byte})"/> and <see cref="Aes.DecryptKeyWrapPadded(ReadOnlySpan{byte})"/>.
/// The handles are released when the key changes by any path (<see cref="Key"/>,
/// <see cref="SymmetricAlgorithm.SetKey(ReadOnlySpan{byte})"/>, <see cref="KeySize"/>, <see cref="GenerateKey"/>)
/// and when the instance is disposed.
/// </para>
/// <para>
/// Everything else behaves like stock <see cref="Aes.Create()"/>: the same bytes, the same exceptions for the same
/// bad input, the same five padding modes, CFB one-shots, and <see cref="CreateEncryptor(byte[], byte[])"/> /
/// <see cref="CreateDecryptor(byte[], byte[])"/> transforms that do not depend on the instance afterwards.
/// Like stock, using an instance after <see cref="SymmetricAlgorithm.Dispose()"/> silently generates a new key.
/// </para>
/// <para>
/// <b>Concurrency.</b> Because the handles are shared, one instance serves one caller at a time. Every one-shot
/// (ECB, CBC, CFB, key wrap) and every key change (including <see cref="SymmetricAlgorithm.Dispose()"/>) takes a
/// non-blocking guard; a call that arrives while another is running on the same instance throws
/// <see cref="CryptographicException"/> ("Concurrent operations from multiple threads on this type are not
/// supported.") and changes nothing. Stock instances tolerate concurrent one-shots; give each thread its own
/// <see cref="CachedAes"/> instead. Sequential use from different threads is fine.
/// </para>
/// <para>The key is held in unmanaged memory that the garbage collector never moves, zeroed when replaced or disposed.</para>
/// </remarks>
public sealed partial class CachedAes : Aes
{
    private readonly HandleCache _handles;
    private ConcurrencyGuard _guard;
    private KeyBox? _key;
    private Aes? _cfb;

    /// <summary>Creates an instance with a 256-bit key generated on first use, like <see cref="Aes.Create()"/>.</summary>
    public CachedAes()
        : this(CipherBackends.Default)
    {
    }

    /// <summary>Creates an instance over a given backend (tests run every backend through one contract suite).</summary>
    internal CachedAes(CipherBackend backend) => _handles = new HandleCache(backend);

    /// <summary>Creates a new <see cref="CachedAes"/> instance.</summary>
    /// <returns>A new instance; the caller disposes it.</returns>
    public static new CachedAes Create() => new();

    /// <summary>The native library whose handles this instance caches.</summary>
    /// <remarks>One instance serves one caller at a time; see the class remarks for the concurrency contract.</remarks>
    /// <value>
    /// <see cref="CachedAesBackend.OpenSsl"/> on Linux, <see cref="CachedAesBackend.Cng"/> on Windows,
    /// <see cref="CachedAesBackend.CommonCrypto"/> on macOS, or <see cref="CachedAesBackend.StockFallback"/> where
    /// none is available (every call then behaves and costs like stock <see cref="Aes"/>).
    /// </value>
    public CachedAesBackend Backend => _handles.Backend.Kind;

    /// <summary>How many native handles this instance has created (a test seam).</summary>
    internal int HandleCreations => _handles.Creations;

    /// <summary>The cached handle for a mode and direction, or null (a test seam).</summary>
    internal IBlockCipher? PeekCachedHandle(BlockCipherMode mode, bool encrypting) => _handles.Peek(mode, encrypting);

    /// <summary>Gets or sets the secret key.</summary>
    /// <value>A copy of the key; a random key of <see cref="KeySize"/> bits is generated on first read if none was set.</value>
    /// <exception cref="CryptographicException">The key is not 16, 24 or 32 bytes long, or another thread is using the instance.</exception>
    public override byte[] Key
    {
        get => GetOrCreateKey().Use(0, static (_, key) => key.ToArray());
        set => SetKey(value);
    }

    /// <summary>Gets or sets the key size in bits. Setting it discards the current key and its native handles.</summary>
    /// <exception cref="CryptographicException">The size is not 128, 192 or 256, or another thread is using the instance.</exception>
    public override int KeySize
    {
        get => base.KeySize;
        set
        {
            _guard.Enter();
            try
            {
                base.KeySize = value;
                ReplaceKey(null);
            }
            finally
            {
                _guard.Exit();
            }
        }
    }

    /// <summary>Replaces the key with a random one of <see cref="KeySize"/> bits and releases the native handles.</summary>
    /// <exception cref="CryptographicException">Another thread is using the instance.</exception>
    public override void GenerateKey()
    {
        _guard.Enter();
        try
        {
            GenerateKeyUnguarded();
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Replaces <see cref="SymmetricAlgorithm.IV"/> with a random 16-byte value.</summary>
    /// <remarks>The IV is not cached state: one-shots take their IV as an argument, so this needs no guard.</remarks>
    public override void GenerateIV() => IV = RandomNumberGenerator.GetBytes(BlockSize / 8);

    /// <summary>Creates an encryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// <see cref="SymmetricAlgorithm.FeedbackSize"/>, key and IV; it does not depend on this instance afterwards.</summary>
    /// <returns>A stock encryptor.</returns>
    /// <exception cref="CryptographicException">The mode is not supported, or a key had to be generated while another thread is using this instance.</exception>
    public override ICryptoTransform CreateEncryptor() => CreateTransformWithOwnKey(encrypting: true);

    /// <summary>Creates a decryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// <see cref="SymmetricAlgorithm.FeedbackSize"/>, key and IV; it does not depend on this instance afterwards.</summary>
    /// <returns>A stock decryptor.</returns>
    /// <exception cref="CryptographicException">The mode is not supported, or a key had to be generated while another thread is using this instance.</exception>
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
    /// <remarks>Validated by the base class; replaces the key and releases the native handles under the concurrency guard.</remarks>
    /// <exception cref="CryptographicException">Another thread is using this instance.</exception>
    protected override void SetKeyCore(ReadOnlySpan<byte> key)
    {
        _guard.Enter();
        try
        {
            KeySizeValue = checked(8 * key.Length);
            ReplaceKey(new KeyBox(key));
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Encrypts with ECB on the cached ECB encryption handle, creating it on first use.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, a native
    /// call failed (the handle is then dropped and the next call creates a new one), or another thread is using this instance.
    /// </exception>
    protected override bool TryEncryptEcbCore(ReadOnlySpan<byte> plaintext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return OneShot.Encrypt(Message(BlockCipherMode.Ecb, encrypting: true, default), paddingMode, plaintext, destination, out bytesWritten);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Decrypts with ECB on the cached ECB decryption handle, creating it on first use.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, a native call failed (the handle is then dropped),
    /// or another thread is using this instance. No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    protected override bool TryDecryptEcbCore(ReadOnlySpan<byte> ciphertext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return OneShot.Decrypt(Message(BlockCipherMode.Ecb, encrypting: false, default), paddingMode, ciphertext, destination, out bytesWritten);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Encrypts with CBC on the cached handles, creating them on first use.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// <paramref name="paddingMode"/> is <see cref="PaddingMode.None"/> and the plaintext is not whole blocks, a native
    /// call failed (the handle is then dropped and the next call creates a new one), or another thread is using this instance.
    /// </exception>
    protected override bool TryEncryptCbcCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return OneShot.Encrypt(Message(BlockCipherMode.Cbc, encrypting: true, iv), paddingMode, plaintext, destination, out bytesWritten);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Decrypts with CBC on the cached handles, creating them on first use.</summary>
    /// <inheritdoc />
    /// <exception cref="CryptographicException">
    /// The ciphertext is not whole blocks, the padding is invalid, a native call failed (the handle is then dropped),
    /// or another thread is using this instance. No plaintext is left in <paramref name="destination"/>.
    /// </exception>
    protected override bool TryDecryptCbcCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return OneShot.Decrypt(Message(BlockCipherMode.Cbc, encrypting: false, iv), paddingMode, ciphertext, destination, out bytesWritten);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <inheritdoc />
    /// <remarks>CFB is not cached: it runs on a stock instance holding the same key, under the concurrency guard.</remarks>
    /// <exception cref="CryptographicException">
    /// The feedback size is not 8 or 128 bits, the input is invalid for the padding mode, or another thread is using this instance.
    /// </exception>
    protected override bool TryEncryptCfbCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return GetCfb().TryEncryptCfb(plaintext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <inheritdoc />
    /// <remarks>CFB is not cached: it runs on a stock instance holding the same key, under the concurrency guard.</remarks>
    /// <exception cref="CryptographicException">
    /// The feedback size is not 8 or 128 bits, the input is invalid for the padding mode, or another thread is using this instance.
    /// </exception>
    protected override bool TryDecryptCfbCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, int feedbackSizeInBits, out int bytesWritten)
    {
        _guard.Enter();
        try
        {
            return GetCfb().TryDecryptCfb(ciphertext, iv, destination, out bytesWritten, paddingMode, feedbackSizeInBits);
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <inheritdoc />
    /// <remarks>
    /// RFC 5649 runs every step on the one cached ECB encryption handle, under a single entry of the concurrency guard.
    /// </remarks>
    /// <exception cref="CryptographicException">A native call failed, or another thread is using this instance.</exception>
    protected override void EncryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        _guard.Enter();
        try
        {
            KeyWrap.WrapPadded(Handle(BlockCipherMode.Ecb, encrypting: true), source, destination);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <inheritdoc />
    /// <remarks>
    /// RFC 5649 runs every step on the one cached ECB decryption handle, under a single entry of the concurrency guard.
    /// The integrity checks are combined without branching on secret data; on failure the destination is cleared.
    /// </remarks>
    /// <exception cref="CryptographicException">
    /// The ciphertext does not unwrap under this key (integrity check failed), a native call failed, or another thread is using this instance.
    /// </exception>
    protected override int DecryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        _guard.Enter();
        try
        {
            return KeyWrap.UnwrapPadded(Handle(BlockCipherMode.Ecb, encrypting: false), source, destination);
        }
        catch (CryptographicException)
        {
            _handles.DropFaulted();
            throw;
        }
        finally
        {
            _guard.Exit();
        }
    }

    /// <summary>Releases the key (zeroed) and every native handle. A later use generates a new key, as stock does.</summary>
    /// <param name="disposing">True when called from <see cref="SymmetricAlgorithm.Dispose()"/>.</param>
    /// <exception cref="CryptographicException">Another thread is using the instance.</exception>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _guard.Enter();
            try
            {
                ReplaceKey(null);
            }
            finally
            {
                _guard.Exit();
            }
        }

        base.Dispose(disposing);
    }

    private MessageCipher Message(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> iv) =>
        new(_handles, _key ?? GenerateKeyUnguarded(), mode, encrypting, iv);

    // Callers hold the guard.
    private IBlockCipher Handle(BlockCipherMode mode, bool encrypting) =>
        _handles.Get(mode, encrypting, _key ?? GenerateKeyUnguarded());

    private KeyBox GetOrCreateKey()
    {
        KeyBox? key = _key;
        if (key is not null)
        {
            return key;
        }

        _guard.Enter();
        try
        {
            return _key ?? GenerateKeyUnguarded();
        }
        finally
        {
            _guard.Exit();
        }
    }

    // Callers hold the guard.
    private KeyBox GenerateKeyUnguarded()
    {
        Span<byte> key = stackalloc byte[KeySize / 8];
        try
        {
            RandomNumberGenerator.Fill(key);
            KeyBox box = new(key);
            ReplaceKey(box);
            return box;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
        }
    }

    // Callers hold the guard. Every handle made under the old key goes first, so none can outlive it.
    private void ReplaceKey(KeyBox? key)
    {
        _handles.Clear();
        _cfb?.Dispose();
        _cfb = null;
        _key?.Dispose();
        _key = key;
    }

    // Callers hold the guard.
    private Aes GetCfb()
    {
        if (_cfb is null)
        {
            KeyBox key = _key ?? GenerateKeyUnguarded();
            Aes cfb = Aes.Create();
            cfb.SetKey(key.DangerousSpan);
            _cfb = cfb;
        }

        return _cfb;
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
