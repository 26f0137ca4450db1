using System;
using System.Globalization;
using System.Linq;
using System.Runtime.Versioning;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Backends.Intrinsics;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Backends;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests.Finalization;

/// <summary>
/// Objects dropped without <c>Dispose</c> under constant collections (<see cref="FinalizationStress"/>), over each backend
/// this machine can run: every output matches stock, and afterwards every native handle that was made has been given
/// back or freed, counted both at the seam (<see cref="CountingBackend"/>, which also counts the handles the sweep of dropped
/// keys gives back) and in the native layer itself (the OpenSSL pool's live contexts, the simulated layers' handle tables).
/// CI runs this class once more under glibc's heap checks (.ci/run), where a use of freed memory that happens not to crash
/// still aborts the process.
/// </summary>
/// <remarks>
/// <c>CACHEDAES_STRESS_ITERATIONS</c> sets the steps per thread (default <see cref="DefaultIterations"/>).
/// </remarks>
public class FinalizationStressTests
{
    private const int Threads = 4;
    private const int DefaultIterations = 1000;

    private static int Iterations =>
        int.TryParse(Environment.GetEnvironmentVariable("CACHEDAES_STRESS_ITERATIONS"), NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0
            ? n
            : DefaultIterations;

    [OpenSslFact]
    [SupportedOSPlatform("linux")]
    public void OpenSsl_objects_dropped_under_constant_collections_match_stock_and_every_context_is_freed()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? raw, out string? reason), reason);
        var openSsl = (OpenSslBackend)raw;
        var counted = new CountingBackend(openSsl);

        AssertClean(FinalizationStress.Run(counted, Threads, Iterations, includeCfb: true), counted);

        // Natively: what exists is only the pool's keyless contexts; trimming them leaves none at all, as at the start.
        Assert.Equal(openSsl.Pool.Count, openSsl.Pool.LiveContexts);
        openSsl.Pool.Trim(0);
        Assert.Equal(0, openSsl.Pool.LiveContexts);
    }

    [Theory]
    [InlineData(SimulatedBackends.CngPseudoHandles)]
    [InlineData(SimulatedBackends.CngProviders)]
    [InlineData(SimulatedBackends.CommonCrypto)]
    public void Simulated_platform_objects_dropped_under_constant_collections_match_stock_and_every_handle_is_released(string name)
    {
        var counted = new CountingBackend(SimulatedBackends.Create(name, out ISimulatedNativeLayer layer));

        AssertClean(FinalizationStress.Run(counted, Threads, Iterations, includeCfb: true), counted);

        // The layer's handle table: nothing live, nothing used after release or released twice.
        Assert.Empty(layer.Violations);
        Assert.Equal(0, layer.LiveHandles);
    }

    [EnvironmentFact(Needs.CpuAesInstructions)]
    public void Cpu_intrinsics_objects_dropped_under_constant_collections_match_stock_and_every_schedule_is_zeroed_and_freed()
    {
        Assert.True(IntrinsicsBackend.TryCreate(out CipherBackend? backend, out string? reason), reason);
        var counted = new CountingBackend(backend);

        AssertClean(FinalizationStress.Run(counted, Threads, Iterations, includeCfb: true), counted);

        // Natively: every round-key schedule a handle allocated was zeroed and freed, by its holder or by the sweep of a dropped epoch.
        Assert.Equal(0, backend switch
        {
            IntrinsicsBackend<X86AesInstructions> x86 => x86.LiveSchedules,
            IntrinsicsBackend<ArmAesInstructions<ArmV8Instructions>> arm => arm.LiveSchedules,
            _ => throw new InvalidOperationException($"Unexpected backend {backend.GetType()}."),
        });
    }

    [Fact]
    public void Stock_fallback_objects_dropped_under_constant_collections_match_stock()
    {
        var counted = new CountingBackend(StockBackend.Instance);
        AssertClean(FinalizationStress.Run(counted, Threads, Iterations, includeCfb: true), counted);
    }

    private static void AssertClean(FinalizationStress.Outcome outcome, CountingBackend counted)
    {
        Assert.True(outcome.Failures.Count == 0, $"{outcome.Failures.Count} failures, the first: {string.Join(Environment.NewLine, outcome.Failures.Take(3))}");
        Assert.True(outcome.Steps >= Threads * Iterations * 8 / 9, $"only {outcome.Steps} steps ran");

        // Every handle made was given back by its holder or by the sweep of a dropped epoch, exactly once, and the sweep
        // did give back some (dropped instances leave their cached handles to it).
        Console.WriteLine($"steps {outcome.Steps}, full collections {outcome.Collections}, handles made {counted.Creations}, given back for dropped epochs {counted.DroppedReleases}");
        Assert.True(counted.DroppedReleases > 0, "no handle was given back for a dropped key epoch: nothing was dropped with handles");
        Assert.Equal(0, counted.DoubleReleases);
        Assert.Equal(0, counted.LiveHandles);
    }
}
