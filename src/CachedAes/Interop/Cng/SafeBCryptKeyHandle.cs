namespace CachedCryptography.Interop.Cng;

/// <summary>Owns one CNG key handle (<c>BCRYPT_KEY_HANDLE</c>); releasing it calls <c>BCryptDestroyKey</c>.</summary>
internal sealed class SafeBCryptKeyHandle(IBCryptApi api) : NativeOwnedHandle
{
    /// <inheritdoc />
    protected override bool ReleaseHandle() => api.DestroyKey(handle) == 0;
}
