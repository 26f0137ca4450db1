using System;
using System.Collections.Generic;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Backends.CbcOverEcb;

namespace CachedCryptography.Tests.Infrastructure;

// This project's backends (the shared part, linked into the Wine lane's app too, is BackendData.cs).
public static partial class BackendData
{
    // The simulated ones make a fresh backend over a fresh native layer; the platform default and the stock fallback are
    // the process-wide instances.
    private static readonly Dictionary<string, Func<CipherBackend>> s_factories = WithCpuIntrinsics(new(StringComparer.Ordinal)
    {
        // The platform's own backend, shared by the whole process as in production.
        ["PlatformDefault"] = () => ProcessBackend.Current,
        // Windows and macOS backends over simulated native layers that follow each API's documented semantics.
        ["SimulatedCngPseudoHandles"] = () => SimulatedBackends.Create(SimulatedBackends.CngPseudoHandles),
        ["SimulatedCngProviders"] = () => SimulatedBackends.Create(SimulatedBackends.CngProviders),
        ["SimulatedCommonCrypto"] = () => SimulatedBackends.Create(SimulatedBackends.CommonCrypto),
        // CNG with Wine 8.0's CBC quirk, as selection hands it out after the self-test: CBC composed over the verified ECB handle.
        ["SimulatedCngWine8Selected"] = SelectedWine8,
        // What platforms without a shim get: every "handle" is a stock Aes that creates a native handle per call.
        ["StockFallback"] = () => StockBackend.Instance,
    });

    /// <summary>
    /// The name of the CPU intrinsics backend's row: present where the processor has AES instructions that .NET exposes
    /// (AES-NI, or Arm's), absent elsewhere (then <c>IntrinsicsBackendTests</c> reports the row as skipped, with the reason).
    /// </summary>
    public const string CpuIntrinsics = "CpuIntrinsics";

    /// <summary>Why this machine has no <see cref="CpuIntrinsics"/> row, or null when it has one.</summary>
    public static string? CpuIntrinsicsMissing { get; } = IntrinsicsBackend.TryCreate(out _, out string? reason) ? null : reason;

    /// <summary>
    /// Whether stock <see cref="System.Security.Cryptography.Aes"/> CFB works here (CachedAes's CFB is stock's). True for
    /// this project; the Wine lane's own BackendData (tests/lanes/CachedAes.WineTests) says false, and the random tests then
    /// leave CFB out: Wine 8.0's bcrypt has no CFB, so stock CFB itself fails there.
    /// </summary>
    public static bool StockCfbWorks => true;

    /// <summary>
    /// Whether a stock CBC transform can be reused for a second message (after <c>TransformFinalBlock</c>) here. True for
    /// this project; the Wine lane's BackendData says false: Wine 8.0's bcrypt keeps CBC chaining state in the key, so
    /// stock's reused transform gives a wrong second message there. The transform tests then compare with a new stock
    /// transform per message instead (see Transforms/TransformHarness.cs).
    /// </summary>
    public static bool StockCbcTransformsReusable => true;

    /// <summary>
    /// A backend of the named kind that no other test uses, counted, so that its handle counts are this test's alone: for
    /// the platform default a second instance over the real native library (with its own context pool).
    /// </summary>
    internal static CountingBackend IsolatedBackend(string backend) => new(UncountedBackend(backend));

    private static CipherBackend UncountedBackend(string backend)
    {
        switch (backend)
        {
            case "PlatformDefault":
                return ProcessBackend.Platform is { } platform && platform.TryCreate(out CipherBackend? native, out _) ? native : StockBackend.Instance;
            case "StockFallback":
                return StockBackend.Instance;
            default:
                return Backend(backend);
        }
    }

    // The opt-in backend over the processor's AES instructions, a new one (with its own count of live schedules) per use,
    // where the processor has them. It never falls back to software: without the instructions there is no row.
    private static Dictionary<string, Func<CipherBackend>> WithCpuIntrinsics(Dictionary<string, Func<CipherBackend>> factories)
    {
        if (IntrinsicsBackend.TryCreate(out _, out _))
        {
            factories[CpuIntrinsics] = static () => IntrinsicsBackend.TryCreate(out CipherBackend? backend, out string? reason)
                ? backend
                : throw new InvalidOperationException(reason);
        }

        return factories;
    }

    // The selection over the Wine 8.0 simulation must route CBC over ECB; the instance then gets a composed backend of its
    // own, so that the handles the self-test made are not counted as the instance's.
    private static CbcOverEcbBackend SelectedWine8()
    {
        BackendSelection selection = SimulatedBackends.Select(SimulatedBackends.CngWine8PseudoHandles, out _);
        return selection.Backend is CbcOverEcbBackend composed
            ? new CbcOverEcbBackend(composed.Inner)
            : throw new InvalidOperationException("Selection did not route the Wine 8.0 simulation's CBC over its ECB handle.");
    }
}
