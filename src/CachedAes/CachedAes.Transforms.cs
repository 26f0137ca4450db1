using System;
using System.Security.Cryptography;

namespace CachedCryptography;

// CreateEncryptor/CreateDecryptor: transforms made on a short-lived stock instance with this instance's settings.
public sealed partial class CachedAes
{
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
