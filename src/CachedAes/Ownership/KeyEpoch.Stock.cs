using System.Threading;

namespace CachedCryptography.Ownership;

/// <summary>
/// The stock instance holding this epoch's key (<see cref="StockAes"/>), for what CachedAes leaves to stock: CFB, and
/// transforms that are not ECB or CBC or that run on the stock fallback.
/// </summary>
/// <remarks>
/// None of these is a hot path, so its one slot uses a simpler protocol than the handle slots: taken with an interlocked
/// exchange and given back with a compare-exchange, whose full fence orders the read of the holders and version after
/// it; a caller that finds the slot empty makes an instance of its own.
/// </remarks>
internal sealed partial class KeyEpoch
{
    private StockAes? _stock;

    /// <summary>
    /// Takes the stock instance holding this epoch's key, made now if none is cached; false when the epoch is closed or
    /// its key being rewritten (the caller then retries once under the instance's lifecycle lock). Dispose the lease to
    /// give it back.
    /// </summary>
    public bool TryRentStock(out StockLease lease)
    {
        StockAes? stock = Interlocked.Exchange(ref _stock, null);
        if (stock is not null && stock.KeyVersion != Version)
        {
            // Made before a key rewrite whose sweep has not reached it yet.
            stock.Release();
            stock = null;
        }

        stock ??= TryUseKey(0, static (key, version, _) => new StockAes(key) { KeyVersion = version }, out StockAes made) ? made : null;
        lease = stock is null ? default : new StockLease(this, stock);
        return stock is not null;
    }

    /// <summary>Gives back an instance taken by <see cref="TryRentStock"/> (called by <see cref="StockLease.Dispose"/>).</summary>
    internal void ReturnStock(StockAes stock)
    {
        if (!IsClosed && stock.KeyVersion == Version && Interlocked.CompareExchange(ref _stock, stock, null) is null)
        {
            // Closed, or the key rewritten, between the check and the put: the sweep may have missed it.
            if ((IsClosed || stock.KeyVersion != Version) && Interlocked.CompareExchange(ref _stock, null, stock) == stock)
            {
                stock.Release();
            }

            return;
        }

        stock.Release();
    }

    // A plain read first: most epochs never make a stock instance.
    private void ReleaseIdleStock()
    {
        if (Volatile.Read(ref _stock) is not null)
        {
            Interlocked.Exchange(ref _stock, null)?.Release();
        }
    }
}
