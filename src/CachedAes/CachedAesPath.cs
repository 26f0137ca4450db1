namespace CachedCryptography;

/// <summary>How one AES mode of <see cref="CachedAes"/> runs in this process (see <see cref="CachedAesDiagnostics"/>).</summary>
public enum CachedAesPath
{
    /// <summary>
    /// On a cached handle of the backend's own native mode, which passed the self-test (for
    /// <see cref="CachedAesBackend.CpuIntrinsics"/>, the mode as that backend runs it on the processor's AES instructions).
    /// </summary>
    Native = 0,

    /// <summary>
    /// CBC only: the backend's native CBC handle failed the self-test, so CBC is chained in managed code over the
    /// backend's cached native ECB handle (which passed). The results are the same; each block is one native call.
    /// </summary>
    NativeEcbWithManagedChaining = 1,

    /// <summary>
    /// On stock <see cref="System.Security.Cryptography.Aes"/>, one native handle per call, as with
    /// <see cref="CachedAesBackend.StockFallback"/>.
    /// </summary>
    Stock = 2,
}
