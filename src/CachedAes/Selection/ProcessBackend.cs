using System;
using System.Runtime.InteropServices;
using CachedCryptography.Interop.Cng;
using CachedCryptography.Interop.CommonCrypto;
using CachedCryptography.Interop.OpenSsl;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// The backend of this process, chosen once, on first use: the platform's native backend after it passes the
/// <see cref="SelfTest"/>, with per-mode fallback (see <see cref="BackendSelection.Select"/>), or the stock path when the
/// AppContext switch or the environment variable forces it.
/// </summary>
internal static class ProcessBackend
{
    private static readonly Lazy<BackendSelection> s_selection = new(SelectForThisProcess);

    /// <summary>The backend new instances use.</summary>
    public static CipherBackend Current => s_selection.Value.Backend;

    /// <summary>The whole outcome, for <see cref="CachedAesDiagnostics"/>.</summary>
    public static BackendSelection Selection => s_selection.Value;

    private static BackendSelection SelectForThisProcess()
    {
        // Read once, here: changing either later has no effect on this process.
        bool? switchValue = AppContext.TryGetSwitch(CachedAesDiagnostics.UseStockSwitchName, out bool isEnabled) ? isEnabled : null;
        string? variable = Environment.GetEnvironmentVariable(CachedAesDiagnostics.UseStockEnvironmentVariable);
        return BackendSelection.Select(BackendSelection.ReadStockForcedBy(switchValue, variable), ProbePlatform);
    }

    /// <summary>The real platform's backend, unverified, or why there is none. Each platform answers in the same shape.</summary>
    private static BackendSelection.PlatformProbe ProbePlatform()
    {
        CipherBackend? backend;
        string? reason;
        if (OperatingSystem.IsWindows())
        {
            _ = CngBackend.TryCreate(out backend, out reason);
        }
        else if (OperatingSystem.IsMacOS())
        {
            _ = CommonCryptoBackend.TryCreate(out backend, out reason);
        }
        else if (OperatingSystem.IsLinux())
        {
            _ = OpenSslBackend.TryCreate(out backend, out reason);
        }
        else
        {
            return new(null, $"CachedAes has no native backend for {RuntimeInformation.RuntimeIdentifier}");
        }

        return new(backend, reason);
    }
}
