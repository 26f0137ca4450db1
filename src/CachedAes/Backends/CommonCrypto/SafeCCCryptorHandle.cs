namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>Owns one <c>CCCryptorRef</c>; releasing it calls <c>CCCryptorRelease</c>.</summary>
internal sealed class SafeCCCryptorHandle(ICommonCryptoApi api) : NativeOwnedHandle
{
    /// <inheritdoc />
    protected override bool ReleaseHandle() => api.Release(handle) == 0;
}
