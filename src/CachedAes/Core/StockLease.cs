using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>The stock instance holding an epoch's key, held by one caller; <see cref="Dispose"/> gives it back. Use it with <c>using</c>.</summary>
internal readonly ref struct StockLease
{
    private readonly KeyEpoch _epoch;
    private readonly StockAes _stock;

    internal StockLease(KeyEpoch epoch, StockAes stock)
    {
        _epoch = epoch;
        _stock = stock;
    }

    /// <summary>A stock <see cref="System.Security.Cryptography.Aes"/> holding the key of the epoch it came from.</summary>
    public Aes Aes => _stock.Aes;

    public void Dispose() => _epoch.ReturnStock(_stock);
}
