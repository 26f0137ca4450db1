using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Marks a benchmark method (or a whole class) that calls the platform's AES library directly: the floor rows
/// (<see cref="PlatformFloor"/>), or, with <see cref="OpenSslOnly"/>, rows that exist for OpenSSL alone (stock's OpenSSL
/// call sequence, OpenSSL's own key wrap cipher). Where such a row cannot run (another OS, or the library cannot be used),
/// <see cref="Includes"/> leaves its cases out of the run, and <see cref="DescribeLeftOut"/> says which and why ("not on
/// this OS"): the run stays clean instead of failing their setup.
/// </summary>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Method, AllowMultiple = false, Inherited = false)]
internal sealed class FloorRowAttribute(bool openSslOnly = false) : Attribute
{
    private static readonly ConcurrentDictionary<(string Type, string Method), string> s_leftOut = new();

    /// <summary>True for a row that calls OpenSSL on every OS (there is no CNG or CommonCrypto counterpart).</summary>
    public bool OpenSslOnly { get; } = openSslOnly;

    /// <summary>False for a case of a marked row that cannot run here; such cases are remembered for <see cref="DescribeLeftOut"/>.</summary>
    public static bool Includes(BenchmarkCase benchmarkCase)
    {
        MethodInfo method = benchmarkCase.Descriptor.WorkloadMethod;
        Type type = benchmarkCase.Descriptor.Type;
        FloorRowAttribute? rule = method.GetCustomAttribute<FloorRowAttribute>() ?? type.GetCustomAttribute<FloorRowAttribute>();
        string? reason = rule?.WhyNotHere();
        if (reason is null)
        {
            return true;
        }

        s_leftOut.TryAdd((type.Name, method.Name), reason);
        return false;
    }

    /// <summary>
    /// One line per reason naming the rows left out, or nothing when every row could run. Only rows of classes that ran
    /// (<paramref name="typesThatRan"/>): this filter sees cases before the others do, and a row of a class that no other
    /// filter selected would not have run anyway. When nothing ran at all, every row left out is named.
    /// </summary>
    public static string[] DescribeLeftOut(IReadOnlyCollection<string> typesThatRan) =>
    [
        .. s_leftOut
            .Where(entry => typesThatRan.Count == 0 || typesThatRan.Contains(entry.Key.Type))
            .GroupBy(entry => entry.Value, StringComparer.Ordinal)
            .Select(group => $"// Not on this OS: {string.Join(", ", group.Select(entry => $"{entry.Key.Type}.{entry.Key.Method}").Order(StringComparer.Ordinal))} ({group.Key}); left out, not failed."),
    ];

    private string? WhyNotHere() =>
        OpenSslOnly && !PlatformFloor.IsOpenSsl
            ? $"OpenSSL only; this OS's library is {PlatformFloor.Library}"
            : PlatformFloor.Unavailable;
}
