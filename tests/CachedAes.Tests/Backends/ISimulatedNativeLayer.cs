using System.Collections.Generic;

namespace CachedCryptography.Tests.Backends;

/// <summary>What every simulated native layer reports, so a suite can check handle hygiene after a run.</summary>
internal interface ISimulatedNativeLayer
{
    /// <summary>Native handles (keys / cryptors) created and not yet released.</summary>
    int LiveHandles { get; }

    /// <summary>Misuse the real library would punish (double free, use after free, a forbidden call). Must be empty.</summary>
    IReadOnlyList<string> Violations { get; }
}
