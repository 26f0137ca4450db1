using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// The stock instance holding this epoch's key (<see cref="StockAes"/>), for what CachedAes leaves to stock: CFB, and
/// transforms that are not ECB or CBC or that run on the stock fallback.
/// </summary>
/// <remarks>
/// None of these is a hot path, so its one slot uses a simpler protocol than the handle slots: taken with an interlocked
/// exchange (never reserved) and given back with a compare-exchange, whose full fence orders the read of the holder
/// count after it; a caller that finds the slot empty or taken makes an instance of its own.
/// </remarks>
internal sealed partial class KeyEpoch
{
    private StockAes? _stock;

    /// <summary>
    /// Takes the stock instance holding the key of the epoch in <paramref name="current"/> (generated first if there is
    /// none), made now if none is cached. Dispose the lease to give it back.
    /// </summary>
    public static StockLease RentStock(ref KeyEpoch? current, int keySizeBits)
    {
        while (true)
        {
            KeyEpoch epoch = CurrentOrGenerated(ref current, keySizeBits);
            StockAes? stock = Interlocked.Exchange(ref epoch._stock, null);
            if (stock is not null && stock.KeyVersion != epoch.Version)
            {
                // Made before a key rewrite whose sweep has not reached it yet.
                stock.Release();
                stock = null;
            }

            stock ??= epoch.TryCreateStock();
            if (stock is not null)
            {
                return new StockLease(epoch, stock);
            }

            // Retired and released before an instance could be made with its key: take the new key.
        }
    }

    /// <summary>Gives back an instance taken by <see cref="RentStock"/> (called by <see cref="StockLease.Dispose"/>).</summary>
    internal void ReturnStock(StockAes stock)
    {
        if (!IsReleased && stock.KeyVersion == Version && Interlocked.CompareExchange(ref _stock, stock, null) is null)
        {
            // Released, or the key rewritten, between the check and the put: the sweep may have missed it.
            if ((IsReleased || stock.KeyVersion != Version) && Interlocked.CompareExchange(ref _stock, null, stock) == stock)
            {
                stock.Release();
            }

            return;
        }

        stock.Release();
    }

    [SkipLocalsInit] // CopyKey writes the copy before it is read
    private StockAes? TryCreateStock()
    {
        if (!TryAddRef())
        {
            return null;
        }

        Span<byte> key = stackalloc byte[MaxKeyLength];
        try
        {
            int length = CopyKey(key, out int version);
            return new StockAes(key[..length]) { KeyVersion = version };
        }
        finally
        {
            CryptographicOperations.ZeroMemory(key);
            DangerousRelease();
        }
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
