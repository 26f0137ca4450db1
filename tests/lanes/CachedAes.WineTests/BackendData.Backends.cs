using System;
using System.Collections.Generic;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Backends.CbcOverEcb;

namespace CachedCryptography.Tests.Infrastructure;

// This app's backends for the linked contract suite (the shared part, BackendData.cs, is linked from the test project):
// the only backend here is the one the process selected, that is the real CNG backend after the self-test, with
// whatever fallback it chose, exactly as a user gets it.
public static partial class BackendData
{
    private static readonly Dictionary<string, Func<CipherBackend>> s_factories = new(StringComparer.Ordinal)
    {
        // A backend of the instance's own, selected as the process selected its own (probe, self-test, fallback), so
        // that handle counts are the test's alone. --unverified-backend (a check of the checks, not for CI): the raw
        // CNG backend, without the self-test's routing.
        ["PlatformDefault"] = SelectAgain,
    };

    /// <summary>
    /// False under Wine: stock CFB fails there (CFB8: "Unknown error (0xc1000206)"; CFB128: "The current platform does
    /// not support the specified feedback size."), so the random tests leave CFB out (CachedAes's CFB is stock's, so no
    /// CachedAes code goes untested by this). True on real Windows.
    /// </summary>
    public static bool StockCfbWorks => CachedCryptography.WineTests.RunSettings.WineVersion is null;

    /// <summary>
    /// False under Wine: Wine 8.0's bcrypt keeps CBC chaining state in the key, so a stock CBC transform reused after
    /// TransformFinalBlock gives a wrong second message (stock .NET's own behaviour there). The transform tests then
    /// compare with a new stock transform per message. True on real Windows.
    /// </summary>
    public static bool StockCbcTransformsReusable => CachedCryptography.WineTests.RunSettings.WineVersion is null;

    /// <summary>A backend of the named kind that no other test uses, counted.</summary>
    internal static CountingBackend IsolatedBackend(string backend) => new(Backend(backend));

    // Selection decides the shape (native, CBC over the native ECB, or stock) on one CNG backend; the instance gets a
    // fresh backend of that shape, so that the handles the self-test made are not counted as the instance's.
    private static CipherBackend SelectAgain()
    {
        CngBackend Open() => CngBackend.TryCreate(CngApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10), out CipherBackend? cng, out _)
            ? (CngBackend)cng
            : throw new InvalidOperationException("CNG AES could not be opened.");

        if (CachedCryptography.WineTests.RunSettings.UnverifiedBackend)
        {
            return Open();
        }

        CngBackend probed = Open();
        BackendSelection selection = SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(probed, null));
        return selection.Backend switch
        {
            CbcOverEcbBackend => new CbcOverEcbBackend(Open()),
            CngBackend => Open(),
            _ => StockBackend.Instance,
        };
    }
}
