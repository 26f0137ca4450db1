using System;
using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>
/// CFB is not cached natively (no platform shim implements it): its one-shots run on a stock <see cref="Aes"/> holding
/// the same key, kept between calls by the epoch like a handle.
/// </summary>
internal sealed class StockCfb
{
    public StockCfb(ReadOnlySpan<byte> key)
    {
        Aes = Aes.Create();
        Aes.SetKey(key);
    }

    /// <summary>A stock instance holding the epoch's key.</summary>
    public Aes Aes { get; }

    /// <summary>Frees the stock instance (and its copy of the key).</summary>
    public void Release() => Aes.Dispose();
}
