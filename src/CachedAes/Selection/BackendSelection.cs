using System;
using CachedCryptography.Backends.CbcOverEcb;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// The outcome of choosing a backend: what new <see cref="CachedAes"/> instances use, how each mode runs, and why a
/// mode runs less natively than the platform offers. Made once per process by <see cref="ProcessBackend"/> through
/// <see cref="SelectionPolicy.Select"/> (tests call it directly); <see cref="SelectionReport"/> describes it.
/// </summary>
internal sealed record BackendSelection
{
    /// <summary>The backend new instances use (possibly <see cref="StockBackend"/> or a <see cref="CbcOverEcbBackend"/>).</summary>
    public required CipherBackend Backend { get; init; }

    /// <summary>
    /// The backend that was self-tested and, if it passed, chosen: the platform's backend as probed, or the CPU
    /// intrinsics backend when it was requested and chosen; null when there is none or none was probed.
    /// </summary>
    public CipherBackend? Native { get; init; }

    /// <summary>The platform's backend as probed (whether or not it was chosen); null when there is none or none was probed.</summary>
    public CipherBackend? Platform { get; init; }

    /// <summary>How ECB one-shots and key wrap run.</summary>
    public required CachedAesPath Ecb { get; init; }

    /// <summary>Why <see cref="Ecb"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? EcbReason { get; init; }

    /// <summary>How CBC one-shots run.</summary>
    public required CachedAesPath Cbc { get; init; }

    /// <summary>Why <see cref="Cbc"/> is not <see cref="CachedAesPath.Native"/>; null when it is.</summary>
    public string? CbcReason { get; init; }

    /// <summary>What forced the stock path (the switch or the environment variable), or null.</summary>
    public string? StockForcedBy { get; init; }

    /// <summary>The self-test verdicts on <see cref="Native"/>, or null when no native backend was tested.</summary>
    public SelfTest.Result? SelfTestResult { get; init; }

    /// <summary>How long the self-test took (zero when it did not run).</summary>
    public TimeSpan SelfTestTime { get; init; }

    /// <summary>What requested the CPU intrinsics backend (the switch or the environment variable), or null.</summary>
    public string? CpuIntrinsicsRequestedBy { get; init; }

    /// <summary>Why the CPU intrinsics backend was requested but is not used; null when it was not requested or is used.</summary>
    public string? CpuIntrinsicsRefusedReason { get; init; }

    /// <summary>What the FIPS mode check asked and found, when the CPU intrinsics backend was requested and it ran.</summary>
    public string? FipsCheck { get; init; }
}
