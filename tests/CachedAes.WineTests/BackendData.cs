using System;
using System.Collections.Generic;
using System.Linq;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Interop.Cng;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// This app's stand-in for the test project's <c>BackendData</c> (same members, so the linked contract suite compiles
/// unchanged): the only backend here is the one the process selected, that is the real CNG backend after the self-test,
/// with whatever fallback it chose, exactly as a user gets it.
/// </summary>
public static class BackendData
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

    /// <summary>Backend names as theory data.</summary>
    public static TheoryData<string> Names
    {
        get
        {
            var data = new TheoryData<string>();
            foreach (string name in s_factories.Keys)
            {
                data.Add(name);
            }

            return data;
        }
    }

    /// <summary>All backend names.</summary>
    public static IReadOnlyList<string> All => s_factories.Keys.ToList();

    /// <summary>A new CachedAes over a backend of the named kind of its own.</summary>
    public static CachedAes Create(string backend) => new(IsolatedBackend(backend));

    /// <summary>A backend of the named kind that no other test uses, counted.</summary>
    internal static CountingBackend IsolatedBackend(string backend) => new(Backend(backend));

    /// <summary>A backend of the named kind that no other test uses.</summary>
    internal static CipherBackend Backend(string backend) =>
        s_factories.TryGetValue(backend, out Func<CipherBackend>? factory)
            ? factory()
            : throw new ArgumentException($"Unknown backend '{backend}'.", nameof(backend));

    // Selection decides the shape (native, CBC over the native ECB, or stock) on one CNG backend; the instance gets a
    // fresh backend of that shape, so that the handles the self-test made are not counted as the instance's.
    private static CipherBackend SelectAgain()
    {
        CngBackend Open() => CngBackend.TryCreate(BCryptApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10), out CipherBackend? cng)
            ? (CngBackend)cng
            : throw new InvalidOperationException("CNG AES could not be opened.");

        if (CachedCryptography.WineTests.RunSettings.UnverifiedBackend)
        {
            return Open();
        }

        CngBackend probed = Open();
        BackendSelection selection = BackendSelection.Select(null, () => new BackendSelection.PlatformProbe(probed, null));
        return selection.Backend switch
        {
            CbcOverEcbBackend => new CbcOverEcbBackend(Open()),
            CngBackend => Open(),
            _ => StockBackend.Instance,
        };
    }

    /// <summary>A new CachedAes over the named backend, keyed with <paramref name="key"/>.</summary>
    public static CachedAes Create(string backend, byte[] key)
    {
        CachedAes aes = Create(backend);
        aes.Key = key;
        return aes;
    }
}
