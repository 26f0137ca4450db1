using System;
using System.Security.Cryptography;

namespace CachedCryptography.Ownership;

/// <summary>
/// A stock <see cref="System.Security.Cryptography.Aes"/> holding an epoch's key, kept between calls by the epoch like a
/// handle (<c>KeyEpoch.Stock.cs</c>). CFB is not cached natively (no platform shim implements it), so CFB one-shots run
/// on it, and so do the transforms CachedAes leaves to stock (CFB, and every transform on the stock fallback).
/// </summary>
internal sealed class StockAes
{
    public StockAes(ReadOnlySpan<byte> key)
    {
        Aes = System.Security.Cryptography.Aes.Create();
        Aes.SetKey(key);
    }

    /// <summary>A stock instance holding the epoch's key.</summary>
    public Aes Aes { get; }

    /// <summary>The version of the epoch's key it holds.</summary>
    public int KeyVersion { get; init; }

    /// <summary>Frees the stock instance (and its copy of the key).</summary>
    public void Release() => Aes.Dispose();
}
