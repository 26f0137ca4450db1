using System;
using System.Runtime.InteropServices;
using CachedCryptography.Interop.Cng;
using CachedCryptography.Interop.CommonCrypto;
using CachedCryptography.Interop.OpenSsl;

namespace CachedCryptography.Interop;

/// <summary>
/// Chooses, once per process, the backend that new <see cref="CachedAes"/> instances use: the platform's native
/// backend after it passes <see cref="BackendSelfTest"/>, with per-mode fallback (see <see cref="BackendSelection.Select"/>),
/// or the stock path when the AppContext switch or the environment variable forces it.
/// </summary>
internal static class CipherBackends
{
    private static readonly Lazy<BackendSelection> s_selection = new(SelectForThisProcess);

    /// <summary>The backend new instances use.</summary>
    public static CipherBackend Default => s_selection.Value.Backend;

    /// <summary>The whole outcome, for <see cref="CachedAesDiagnostics"/>.</summary>
    public static BackendSelection Selection => s_selection.Value;

    private static BackendSelection SelectForThisProcess()
    {
        // Read once, here: changing either later has no effect on this process.
        bool? switchValue = AppContext.TryGetSwitch(CachedAesDiagnostics.UseStockSwitchName, out bool isEnabled) ? isEnabled : null;
        string? variable = Environment.GetEnvironmentVariable(CachedAesDiagnostics.UseStockEnvironmentVariable);
        return BackendSelection.Select(BackendSelection.ReadStockForcedBy(switchValue, variable), ProbePlatform);
    }

    /// <summary>The real platform's backend, unverified.</summary>
    private static BackendSelection.PlatformProbe ProbePlatform()
    {
        if (OperatingSystem.IsWindows())
        {
            return CngBackend.TryCreate(out CipherBackend? cng)
                ? new(cng, ((CngBackend)cng).UsesPseudoHandles ? "bcrypt.dll, algorithm pseudo-handles" : "bcrypt.dll, opened AES providers", null)
                : new(null, "bcrypt.dll", "CNG AES ECB/CBC could not be opened");
        }

        if (OperatingSystem.IsMacOS())
        {
            return CommonCryptoBackend.TryCreate(out CipherBackend? commonCrypto)
                ? new(commonCrypto, "libcommonCrypto.dylib", null)
                : new(null, "libcommonCrypto.dylib", "CommonCrypto could not create an AES cryptor");
        }

        if (OperatingSystem.IsLinux())
        {
            return OpenSslBackend.TryCreate(out CipherBackend? openSsl, out string? reason)
                ? new(openSsl, ((OpenSslBackend)openSsl).Description, null)
                : new(null, "libcrypto", reason);
        }

        return new(null, null, $"CachedAes has no native backend for {RuntimeInformation.RuntimeIdentifier}");
    }
}
