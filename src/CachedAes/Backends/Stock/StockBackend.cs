using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Stock;

/// <summary>
/// The backend selection falls back to when no native backend can be used (none for the platform, its library missing,
/// its self-test failed, or the stock path forced): each handle is a <see cref="StockCipher"/>, a stock <see cref="Aes"/>
/// instance, which itself creates a native handle per call. Results and costs are those of stock <see cref="Aes.Create()"/>.
/// </summary>
internal sealed class StockBackend : CipherBackend
{
    private StockBackend()
    {
    }

    /// <summary>The process-wide instance.</summary>
    public static StockBackend Instance { get; } = new();

    public override CachedAesBackend Kind => CachedAesBackend.StockFallback;

    public override string Description => "stock System.Security.Cryptography.Aes";

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new StockCipher(mode, encrypting, key);
}
