using System;
using System.Collections.Generic;
using System.Linq;
using CachedCryptography.Interop.Stock;
using CachedCryptography.Tests.Backends;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// The CachedAes instances every contract test runs against, by name. Adding a backend is one line in
/// <see cref="s_factories"/> (for example <c>["SimulatedCng"] = () =&gt; new CachedAes(new SimulatedCngBackend())</c>).
/// </summary>
public static class BackendData
{
    private static readonly Dictionary<string, Func<CachedAes>> s_factories = new(StringComparer.Ordinal)
    {
        ["PlatformDefault"] = () => new CachedAes(),
        // Windows and macOS backends over simulated native layers that follow each API's documented semantics.
        ["SimulatedCngPseudoHandles"] = () => new CachedAes(SimulatedBackends.Create(SimulatedBackends.CngPseudoHandles)),
        ["SimulatedCngProviders"] = () => new CachedAes(SimulatedBackends.Create(SimulatedBackends.CngProviders)),
        ["SimulatedCommonCrypto"] = () => new CachedAes(SimulatedBackends.Create(SimulatedBackends.CommonCrypto)),
        // CNG with Wine 8.0's CBC quirk, as selection hands it out after the self-test: CBC composed over the verified ECB handle.
        ["SimulatedCngWine8Selected"] = () => new CachedAes(SimulatedBackends.Select(SimulatedBackends.CngWine8PseudoHandles, out _).Backend),
        // What platforms without a shim get: every "handle" is a stock Aes that creates a native handle per call.
        ["StockFallback"] = () => new CachedAes(StockBackend.Instance),
    };

    /// <summary>
    /// Whether stock <see cref="System.Security.Cryptography.Aes"/> CFB works here (CachedAes's CFB is stock's). True for
    /// this project; the Wine lane's own BackendData (tests/CachedAes.WineTests) says false, and the random tests then
    /// leave CFB out: Wine 8.0's bcrypt has no CFB, so stock CFB itself fails there.
    /// </summary>
    public static bool StockCfbWorks => true;

    /// <summary>Backend names, for <c>[MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]</c>.</summary>
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
