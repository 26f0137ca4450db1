using System;
using System.Collections.Generic;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// The Windows and macOS backends over their simulated native layers, for running the whole CachedAes
/// contract suite on Linux: <c>new CachedCryptography.CachedAes(SimulatedBackends.Create(name, out var layer))</c>,
/// then check <c>layer.Violations</c> is empty (and, after disposing the instance, <c>layer.LiveHandles == 0</c>).
/// </summary>
internal static class SimulatedBackends
{
    /// <summary>CNG on the Windows 10+ algorithm pseudo-handles.</summary>
    public const string CngPseudoHandles = "cng-pseudo-handles";

    /// <summary>CNG on opened AES providers with the chaining mode set (older Windows).</summary>
    public const string CngProviders = "cng-providers";

    /// <summary>CommonCrypto cryptors.</summary>
    public const string CommonCrypto = "commoncrypto";

    /// <summary>CNG on pseudo-handles over a layer with Wine 8.0's CBC quirk (see <see cref="SimulatedCngApi.Wine8CbcQuirk"/>). Not in <see cref="All"/>: its raw CBC is wrong by design.</summary>
    public const string CngWine8PseudoHandles = "cng-wine8-pseudo-handles";

    /// <summary>CNG on opened providers over a layer with Wine 8.0's CBC quirk. Not in <see cref="All"/>.</summary>
    public const string CngWine8Providers = "cng-wine8-providers";

    /// <summary>Every simulated backend, by name.</summary>
    public static IReadOnlyList<string> All { get; } = [CngPseudoHandles, CngProviders, CommonCrypto];

    /// <summary>The names as xunit theory data (<c>[MemberData(nameof(SimulatedBackends.Names), MemberType = typeof(SimulatedBackends))]</c>).</summary>
    public static IEnumerable<object[]> Names
    {
        get
        {
            foreach (string name in All)
            {
                yield return [name];
            }
        }
    }

    /// <summary>A fresh backend over a fresh simulated layer.</summary>
    public static CipherBackend Create(string name) => Create(name, out _);

    /// <summary>A fresh backend over a fresh simulated layer, which is returned for hygiene checks.</summary>
    public static CipherBackend Create(string name, out ISimulatedNativeLayer layer)
    {
        CipherBackend? backend;
        switch (name)
        {
            case CngPseudoHandles:
            {
                var api = new SimulatedCngApi();
                layer = api;
                return CngBackend.TryCreate(api, tryPseudoHandles: true, out backend, out _) && ((CngBackend)backend).UsesPseudoHandles
                    ? backend
                    : throw new InvalidOperationException("The simulated CNG backend did not come up on pseudo-handles.");
            }

            case CngProviders:
            {
                var api = new SimulatedCngApi { PseudoHandlesSupported = false };
                layer = api;
                return CngBackend.TryCreate(api, tryPseudoHandles: true, out backend, out _) && !((CngBackend)backend).UsesPseudoHandles
                    ? backend
                    : throw new InvalidOperationException("The simulated CNG backend did not come up on opened providers.");
            }

            case CngWine8PseudoHandles:
            case CngWine8Providers:
            {
                bool pseudo = name == CngWine8PseudoHandles;
                var api = new SimulatedCngApi { PseudoHandlesSupported = pseudo, Wine8CbcQuirk = true };
                layer = api;
                return CngBackend.TryCreate(api, tryPseudoHandles: true, out backend, out _) && ((CngBackend)backend).UsesPseudoHandles == pseudo
                    ? backend
                    : throw new InvalidOperationException("The simulated Wine 8.0 CNG backend did not come up on the expected algorithm handles.");
            }

            case CommonCrypto:
            {
                var api = new SimulatedCommonCryptoApi();
                layer = api;
                return CommonCryptoBackend.TryCreate(api, out backend, out _)
                    ? backend
                    : throw new InvalidOperationException("The simulated CommonCrypto backend did not come up.");
            }

            default:
                throw new ArgumentOutOfRangeException(nameof(name), name, "Unknown simulated backend.");
        }
    }

    /// <summary>
    /// The backend that selection would hand to <see cref="CachedAes"/> for the named simulated layer: the layer's backend
    /// after the self-test, with the per-mode fallback applied (see <see cref="SelectionPolicy.Select"/>).
    /// </summary>
    public static BackendSelection Select(string name, out ISimulatedNativeLayer layer)
    {
        CipherBackend raw = Create(name, out layer);
        return SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(raw, null));
    }
}
