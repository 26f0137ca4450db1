using System;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Backends;

/// <summary>Expected values from stock <see cref="Aes.Create()"/> (padding off), and deterministic test data.</summary>
internal static class Stock
{
    public static byte[] Ecb(byte[] key, byte[] data, bool encrypt)
    {
        using Aes aes = Aes.Create();
        aes.Key = key;
        return encrypt ? aes.EncryptEcb(data, PaddingMode.None) : aes.DecryptEcb(data, PaddingMode.None);
    }

    public static byte[] Cbc(byte[] key, byte[] iv, byte[] data, bool encrypt)
    {
        using Aes aes = Aes.Create();
        aes.Key = key;
        return encrypt ? aes.EncryptCbc(data, iv, PaddingMode.None) : aes.DecryptCbc(data, iv, PaddingMode.None);
    }

    public static byte[] Bytes(int length, int seed)
    {
        byte[] result = new byte[length];
        new Random(seed).NextBytes(result);
        return result;
    }
}
