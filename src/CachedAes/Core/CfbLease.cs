using System.Security.Cryptography;

namespace CachedCryptography.Core;

/// <summary>The stock instance that serves CFB, held by one caller; <see cref="Dispose"/> gives it back. Use it with <c>using</c>.</summary>
internal readonly ref struct CfbLease
{
    private readonly KeyEpoch _epoch;
    private readonly StockCfb _cfb;

    internal CfbLease(KeyEpoch epoch, StockCfb cfb)
    {
        _epoch = epoch;
        _cfb = cfb;
    }

    /// <summary>A stock <see cref="System.Security.Cryptography.Aes"/> holding the key of the epoch it came from.</summary>
    public Aes Aes => _cfb.Aes;

    public void Dispose() => _epoch.ReturnCfb(_cfb);
}
