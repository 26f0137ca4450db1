using System;
using System.Security.Cryptography;
using CachedCryptography.Operations.Transforms;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;

namespace CachedCryptography;

// CreateEncryptor/CreateDecryptor. ECB and CBC transforms hold a key epoch, not a native handle: the instance's current
// epoch when they use the instance's key, or one of their own for another key; each call leases a handle from its slots
// (Operations/Transforms/). Other modes (CFB) and the stock fallback get stock's own transforms.
public sealed partial class CachedAes
{
    /// <summary>
    /// Creates an encryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// key and IV (a key is generated first if none was set, as stock does, and for CBC an IV; stock generates one for ECB
    /// too, which ignores it: here the <see cref="SymmetricAlgorithm.IV"/> property generates it when first read).
    /// </summary>
    /// <returns>
    /// For ECB and CBC, a transform that runs each <c>TransformBlock</c>/<c>TransformFinalBlock</c> on one of this
    /// instance's cached native handles, leased for that call only (no native context is created or keyed when a cached
    /// one is free); for CFB, a stock transform. Either way it keeps the key, IV, mode and padding it was made with:
    /// later changes to this instance, or its disposal, do not affect it. Like stock's, a transform is for one caller at a
    /// time. It holds no native handle between calls, so one that is never disposed (as under a
    /// <see cref="CryptoStream"/>) is safe; disposing it lets go of its key at once.
    /// </returns>
    /// <exception cref="CryptographicException">The mode is not supported, or a native handle could not be made.</exception>
    public override ICryptoTransform CreateEncryptor() => CreateTransform(encrypting: true);

    /// <summary>
    /// Creates a decryptor with the current <see cref="SymmetricAlgorithm.Mode"/>, <see cref="SymmetricAlgorithm.Padding"/>,
    /// key and IV (a key is generated first if none was set, as stock does, and for CBC an IV; stock generates one for ECB
    /// too, which ignores it: here the <see cref="SymmetricAlgorithm.IV"/> property generates it when first read).
    /// </summary>
    /// <returns>
    /// For ECB and CBC, a transform that runs each call on one of this instance's cached native handles, leased for that
    /// call only; for CFB, a stock transform. Either way it does not depend on this instance afterwards. Like stock's, a
    /// transform is for one caller at a time; one that is never disposed is safe, and disposing it lets go of its key.
    /// </returns>
    /// <exception cref="CryptographicException">The mode is not supported, or a native handle could not be made.</exception>
    public override ICryptoTransform CreateDecryptor() => CreateTransform(encrypting: false);

    /// <summary>Creates an encryptor for the given key and IV with this instance's mode and padding, as stock does.</summary>
    /// <param name="rgbKey">The key.</param>
    /// <param name="rgbIV">The IV (required for CBC and CFB; copied).</param>
    /// <returns>
    /// For ECB and CBC: when <paramref name="rgbKey"/> is this instance's key (compared in constant time; for example
    /// <c>CreateEncryptor(aes.Key, aes.IV)</c>), a transform on this instance's cached native handles; for any other key,
    /// a transform on a native handle keyed for it once (on OpenSSL, a pooled context, cleansed when the transform is
    /// disposed, or freed when a transform that was never disposed is collected). For CFB, a stock transform. Independent
    /// of this instance afterwards.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="rgbKey"/> is null.</exception>
    /// <exception cref="ArgumentException">The key or IV has an invalid size.</exception>
    /// <exception cref="CryptographicException">The mode needs an IV and <paramref name="rgbIV"/> is null, the mode is not supported, or a native handle could not be made.</exception>
    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => CreateTransform(rgbKey, rgbIV, encrypting: true);

    /// <summary>Creates a decryptor for the given key and IV with this instance's mode and padding, as stock does.</summary>
    /// <param name="rgbKey">The key.</param>
    /// <param name="rgbIV">The IV (required for CBC and CFB; copied).</param>
    /// <returns>
    /// For ECB and CBC: when <paramref name="rgbKey"/> is this instance's key (compared in constant time), a transform on
    /// one of this instance's cached native handles; for any other key, a transform on a native handle keyed for it once.
    /// For CFB, a stock transform. Independent of this instance afterwards.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="rgbKey"/> is null.</exception>
    /// <exception cref="ArgumentException">The key or IV has an invalid size.</exception>
    /// <exception cref="CryptographicException">The mode needs an IV and <paramref name="rgbIV"/> is null, the mode is not supported, or a native handle could not be made.</exception>
    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => CreateTransform(rgbKey, rgbIV, encrypting: false);

    // The instance's own key and IV: the transform leases the current key epoch's handles.
    private ICryptoTransform CreateTransform(bool encrypting)
    {
        if (CachedMode() is not BlockCipherMode mode)
        {
            return CreateStockTransformWithOwnKey(encrypting);
        }

        // Under the lifecycle lock: the transform becomes a holder of the current key (generated first if there is none),
        // which no key change or Dispose can release meanwhile, and reads the IV Dispose would clear. Stock reads the IV
        // property here, which generates an IV if none was set, even for ECB. An ECB transform ignores the IV, so none is
        // generated for it here: the IV property generates one when it is first read, as random and as fixed from then
        // on as one generated here. That saves a call to the system's random generator (its cost: docs/benchmarks-clients.md,
        // "IdentityModel key wrap: one CachedAes per call") for every ECB transform of an instance whose IV was never set,
        // as key-wrap code makes them.
        KeyEpoch epoch;
        int version;
        Span<byte> iv = stackalloc byte[BlockCipher.BlockSize];
        _key.Enter();
        try
        {
            if (mode == BlockCipherMode.Cbc)
            {
                (IVValue ??= RandomNumberGenerator.GetBytes(BlockCipher.BlockSize)).CopyTo(iv);
            }

            epoch = _key.HoldCurrent(KeySizeValue);
            version = epoch.Version;
        }
        finally
        {
            _key.Exit();
        }

        return NewTransform(epoch, version, mode, iv, encrypting);
    }

    private ICryptoTransform CreateTransform(byte[] rgbKey, byte[]? rgbIV, bool encrypting)
    {
        if (CachedMode() is not BlockCipherMode mode)
        {
            return CreateStockTransform(rgbKey, rgbIV, encrypting);
        }

        // Stock's checks, in stock's order.
        ArgumentNullException.ThrowIfNull(rgbKey);
        if (!BlockCipher.IsKeySize(rgbKey.Length))
        {
            throw new ArgumentException(Errors.InvalidKeySize, nameof(rgbKey));
        }

        if (rgbIV is not null && rgbIV.Length != BlockCipher.BlockSize)
        {
            throw new ArgumentException(Errors.InvalidIVSize, nameof(rgbIV));
        }

        if (mode == BlockCipherMode.Cbc && rgbIV is null)
        {
            throw new CryptographicException(Errors.MissingIV);
        }

        // The instance's own key (CreateEncryptor(aes.Key, aes.IV)): its epoch, so the transform uses the cached handles.
        // An instance with no key yet has none to match. Any other key: an epoch of the transform's own.
        KeyEpoch? current;
        int version = 0;
        _key.Enter();
        try
        {
            current = _key.TryHoldIfKey(rgbKey);
            if (current is not null)
            {
                version = current.Version;
            }
        }
        finally
        {
            _key.Exit();
        }

        // Another key: an epoch of the transform's own, whose key is never rewritten (version 0). The caller's array is
        // read once here, into the epoch.
        return NewTransform(current ?? new KeyEpoch(_key.Backend, rgbKey, heldByInstance: false), version, mode, rgbIV, encrypting);
    }

    // The transform holds `epoch` (the caller made it a holder) at key `version`, and lets go of it when disposed.
    private ICryptoTransform NewTransform(KeyEpoch epoch, int version, BlockCipherMode mode, ReadOnlySpan<byte> iv, bool encrypting) =>
        encrypting
            ? new CachedEncryptor(epoch, version, mode, iv, Padding)
            : new CachedDecryptor(epoch, version, mode, iv, Padding);

    // ECB and CBC get cached transforms, except on the stock fallback (whose handles are stock one-shots: a stock
    // transform is cheaper there); other modes go to stock, which also reports the unsupported ones.
    private BlockCipherMode? CachedMode() => _key.Backend.Kind == CachedAesBackend.StockFallback ? null : Mode switch
    {
        CipherMode.ECB => BlockCipherMode.Ecb,
        CipherMode.CBC => BlockCipherMode.Cbc,
        _ => null,
    };

    // Transforms left to stock (CFB, or any mode on the stock fallback) come from the stock instance that holds the
    // current key, set to this instance's mode, padding and feedback size for the call. A stock transform copies its key
    // and IV, so it is independent of that instance and of this one afterwards.
    private ICryptoTransform CreateStockTransformWithOwnKey(bool encrypting)
    {
        byte[] iv = CopyIV();
        using KeyEpoch.StockLease stock = LeaseStock();
        stock.Aes.IV = iv;
        return encrypting ? stock.Aes.CreateEncryptor() : stock.Aes.CreateDecryptor();
    }

    private ICryptoTransform CreateStockTransform(byte[] rgbKey, byte[]? rgbIV, bool encrypting)
    {
        using KeyEpoch.StockLease stock = LeaseStock();
        return encrypting ? stock.Aes.CreateEncryptor(rgbKey, rgbIV) : stock.Aes.CreateDecryptor(rgbKey, rgbIV);
    }

    // The IV (generated first if none was set, as stock's IV property does), read under the lifecycle lock so that a
    // Dispose on another thread clears it before or after, never while it is read.
    private byte[] CopyIV()
    {
        _key.Enter();
        try
        {
            return (byte[])(IVValue ??= RandomNumberGenerator.GetBytes(BlockCipher.BlockSize)).Clone();
        }
        finally
        {
            _key.Exit();
        }
    }

    private KeyEpoch.StockLease LeaseStock()
    {
        KeyEpoch.StockLease stock = _key.RentStock(KeySizeValue);
        stock.Aes.Mode = Mode;
        stock.Aes.Padding = Padding;
        stock.Aes.FeedbackSize = FeedbackSize;
        return stock;
    }
}
