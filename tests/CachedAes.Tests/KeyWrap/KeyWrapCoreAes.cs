using CachedCryptography.Operations;
using System;
using System.Security.Cryptography;

namespace CachedCryptography.Tests;

/// <summary>
/// A test-only <see cref="Aes"/> whose key-wrap cores are the <see cref="KeyWrap"/> core over
/// <see cref="StockEcbCipher"/>: it puts the core behind the base class's public overloads (argument
/// validation, buffer handling) exactly as <see cref="CachedAes"/> does once wired, so the
/// differential suite checks the core independently of the CachedAes wiring.
/// </summary>
internal sealed class KeyWrapCoreAes : Aes
{
    public KeyWrapCoreAes()
    {
        KeySizeValue = 256;
        BlockSizeValue = 128;
        FeedbackSizeValue = 8;
    }

    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV)
    {
        using Aes aes = Aes.Create();
        aes.Mode = Mode;
        aes.Padding = Padding;
        return aes.CreateEncryptor(rgbKey, rgbIV);
    }

    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV)
    {
        using Aes aes = Aes.Create();
        aes.Mode = Mode;
        aes.Padding = Padding;
        return aes.CreateDecryptor(rgbKey, rgbIV);
    }

    public override void GenerateIV() => IVValue = RandomNumberGenerator.GetBytes(BlockSizeValue / 8);

    public override void GenerateKey() => KeyValue = RandomNumberGenerator.GetBytes(KeySizeValue / 8);

    protected override void EncryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        byte[] key = Key;

        try
        {
            using var cipher = new StockEcbCipher(key, encrypting: true);
            KeyWrap.WrapPadded(cipher, source, destination);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
        }
    }

    protected override int DecryptKeyWrapPaddedCore(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        byte[] key = Key;

        try
        {
            using var cipher = new StockEcbCipher(key, encrypting: false);
            return KeyWrap.UnwrapPadded(cipher, source, destination);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
        }
    }
}
