using System.Linq;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// The CPU intrinsics backend is one more row of every contract suite (<see cref="BackendData"/>): the vectors, the
/// differential tests against stock, transforms, key wrap, threads, the cache and key-lifecycle tests, and the
/// finalization stress (<c>FinalizationStressTests</c>). Where the processor has no AES instructions that .NET exposes,
/// there is no such row, and this test is reported as skipped with the reason.
/// </summary>
public sealed class IntrinsicsBackendTests
{
    [EnvironmentFact(Needs.CpuAesInstructions)]
    public void The_contract_suites_run_over_the_cpu_intrinsics_backend_where_the_processor_has_aes_instructions()
    {
        Assert.Contains(BackendData.CpuIntrinsics, BackendData.All);
        Assert.Equal(CachedAesBackend.CpuIntrinsics, BackendData.Backend(BackendData.CpuIntrinsics).Kind);
        Assert.Single(BackendData.Names.Cast<object[]>(), row => (string)row[0] == BackendData.CpuIntrinsics);
        Assert.Equal(3, BackendData.NamesAndKeySizes.Cast<object[]>().Count(row => (string)row[0] == BackendData.CpuIntrinsics));
    }
}
