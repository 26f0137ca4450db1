using System;
using System.Linq;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Runs the named benchmark methods of a class only in the .NET 11 job (<see cref="Runtimes"/>): for what exists on
/// .NET 11 only, such as stock <c>Aes.EncryptKeyWrap</c> (RFC 3394). The method still has to exist in both builds of the
/// suite (the .NET 10 host lists the cases); on .NET 10 its body throws, and this filter keeps that case from running.
/// </summary>
[AttributeUsage(AttributeTargets.Class, AllowMultiple = false, Inherited = true)]
public sealed class Net11OnlyAttribute(params string[] methods) : Attribute
{
    /// <summary>The benchmark methods that run only on .NET 11.</summary>
    public string[] Methods { get; } = methods;

    /// <summary>False for a case of a .NET 11-only method in a job that is not the .NET 11 one.</summary>
    public static bool Includes(BenchmarkCase benchmarkCase)
    {
        var rule = (Net11OnlyAttribute?)GetCustomAttribute(benchmarkCase.Descriptor.Type, typeof(Net11OnlyAttribute), inherit: true);
        return rule is null
            || Runtimes.IsNet11(benchmarkCase.Job)
            || !rule.Methods.Contains(benchmarkCase.Descriptor.WorkloadMethod.Name, StringComparer.Ordinal);
    }
}
