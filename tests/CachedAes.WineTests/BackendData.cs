using System;
using System.Collections.Generic;
using System.Linq;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// This app's stand-in for the test project's <c>BackendData</c> (same members, so the linked contract suite compiles
/// unchanged): the only backend here is the one the process selected, that is the real CNG backend after the self-test,
/// with whatever fallback it chose, exactly as a user gets it.
/// </summary>
public static class BackendData
{
    private static readonly Dictionary<string, Func<CachedAes>> s_factories = new(StringComparer.Ordinal)
    {
        // --unverified-backend (a check of the checks, not for CI): the raw CNG backend, without the self-test's routing.
        ["PlatformDefault"] = () => CachedCryptography.WineTests.RunSettings.UnverifiedBackend
            ? new CachedAes(CachedCryptography.Interop.CipherBackends.Selection.Native!)
            : new CachedAes(),
    };

    /// <summary>
    /// False under Wine: stock CFB fails there (CFB8: "Unknown error (0xc1000206)"; CFB128: "The current platform does
    /// not support the specified feedback size."), so the random tests leave CFB out (CachedAes's CFB is stock's, so no
    /// CachedAes code goes untested by this). True on real Windows.
    /// </summary>
    public static bool StockCfbWorks => CachedCryptography.WineTests.RunSettings.WineVersion is null;

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

    /// <summary>A new CachedAes over the named backend.</summary>
    public static CachedAes Create(string backend) =>
        s_factories.TryGetValue(backend, out Func<CachedAes>? factory)
            ? factory()
            : throw new ArgumentException($"Unknown backend '{backend}'.", nameof(backend));

    /// <summary>A new CachedAes over the named backend, keyed with <paramref name="key"/>.</summary>
    public static CachedAes Create(string backend, byte[] key)
    {
        CachedAes aes = Create(backend);
        aes.Key = key;
        return aes;
    }
}
