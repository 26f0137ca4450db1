using System;
using CachedCryptography.Interop.Cng;
using CachedCryptography.Interop.CommonCrypto;
using CachedCryptography.Interop.OpenSsl;
using CachedCryptography.Interop.Stock;

namespace CachedCryptography.Interop;

/// <summary>Chooses, once per process, the backend that new <see cref="CachedAes"/> instances use.</summary>
internal static class CipherBackends
{
    private static readonly Lazy<CipherBackend> s_default = new(Select);

    /// <summary>The platform's backend, or <see cref="StockBackend"/> when none is available.</summary>
    public static CipherBackend Default => s_default.Value;

    /// <summary>Why the stock fallback was chosen on a platform that has a shim (for diagnostics), or null.</summary>
    public static string? FallbackReason { get; private set; }

    private static CipherBackend Select()
    {
        if (OperatingSystem.IsWindows())
        {
            if (CngBackend.TryCreate(out CipherBackend? cng))
            {
                return cng;
            }

            FallbackReason = "CNG AES ECB/CBC could not be opened.";
        }
        else if (OperatingSystem.IsMacOS())
        {
            if (CommonCryptoBackend.TryCreate(out CipherBackend? commonCrypto))
            {
                return commonCrypto;
            }

            FallbackReason = "CommonCrypto could not create an AES cryptor.";
        }
        else if (OperatingSystem.IsLinux())
        {
            if (OpenSslBackend.TryCreate(out CipherBackend? openSsl, out string? reason))
            {
                return openSsl;
            }

            FallbackReason = reason;
        }

        return StockBackend.Instance;
    }
}
