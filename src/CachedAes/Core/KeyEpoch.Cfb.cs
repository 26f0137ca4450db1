using System.Threading;

namespace CachedCryptography.Core;

/// <summary>The stock instance that serves CFB for one epoch (CFB is not cached natively; see <see cref="StockCfb"/>).</summary>
/// <remarks>
/// CFB is not a hot path, so its one slot uses a simpler protocol than the handle slots: taken with an interlocked
/// exchange (never reserved) and given back with a compare-exchange, whose full fence orders the read of the retired
/// mark after it; a caller that finds the slot empty or taken makes an instance of its own.
/// </remarks>
internal sealed partial class KeyEpoch
{
    private StockCfb? _cfb;

    /// <summary>
    /// Takes the stock instance that serves CFB with the key of the epoch in <paramref name="current"/> (generated first
    /// if there is none), made now if none is cached. Dispose the lease to give it back.
    /// </summary>
    public static CfbLease RentCfb(ref KeyEpoch? current, int keySizeBits)
    {
        while (true)
        {
            KeyEpoch epoch = CurrentOrGenerated(ref current, keySizeBits);
            StockCfb? cfb = Interlocked.Exchange(ref epoch._cfb, null) ?? epoch.TryCreateCfb();
            if (cfb is not null)
            {
                return new CfbLease(epoch, cfb);
            }

            // Retired and released before an instance could be made with its key: take the new key.
        }
    }

    /// <summary>Gives back an instance taken by <see cref="RentCfb"/> (called by <see cref="CfbLease.Dispose"/>).</summary>
    internal void ReturnCfb(StockCfb cfb)
    {
        if (Volatile.Read(ref _retired) == 0 && Interlocked.CompareExchange(ref _cfb, cfb, null) is null)
        {
            // Retired between the check and the put: the sweep may have missed it.
            if (Volatile.Read(ref _retired) != 0 && Interlocked.CompareExchange(ref _cfb, null, cfb) == cfb)
            {
                cfb.Release();
            }

            return;
        }

        cfb.Release();
    }

    private StockCfb? TryCreateCfb()
    {
        if (!TryAddRef())
        {
            return null;
        }

        try
        {
            return new StockCfb(DangerousKey);
        }
        finally
        {
            DangerousRelease();
        }
    }

    private void ReleaseIdleCfb() => Interlocked.Exchange(ref _cfb, null)?.Release();
}
