using System;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// A stock <see cref="Aes"/> holding an epoch's key, kept between calls by the epoch like a handle. CFB is not cached
/// natively (no platform shim implements it), so CFB one-shots run on it, and so do the transforms CachedAes leaves to
/// stock (CFB, and every transform on the stock fallback).
/// </summary>
internal sealed class StockAes
{
    public StockAes(ReadOnlySpan<byte> key)
    {
        Aes = Aes.Create();
        Aes.SetKey(key);
    }

    /// <summary>A stock instance holding the epoch's key.</summary>
    public Aes Aes { get; }

    /// <summary>The version of the epoch's key it holds (see <c>KeyEpoch.cs</c>).</summary>
    public int KeyVersion { get; init; }

    /// <summary>Frees the stock instance (and its copy of the key).</summary>
    public void Release() => Aes.Dispose();
}
