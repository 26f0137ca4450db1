using System;
using System.Collections.Generic;
using System.Linq;
using BenchmarkDotNet.Running;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Puts a benchmark class's cases into the quick mode (the default run). Without this attribute a class runs only
/// with <c>--full</c> or an explicit <c>--filter</c>. With no arguments every case of the class is quick; with a
/// parameter name and values, only the cases whose parameter has one of those values. Several attributes on one
/// class must all match, e.g. <c>[QuickSubset("Size", 16, 16384)]</c> plus <c>[QuickSubset("Operation", ...)]</c>.
/// </summary>
[AttributeUsage(AttributeTargets.Class, AllowMultiple = true, Inherited = true)]
public sealed class QuickSubsetAttribute : Attribute
{
    /// <summary>Every case of the class is in the quick mode.</summary>
    public QuickSubsetAttribute()
    {
    }

    /// <summary>Only the cases whose <paramref name="parameter"/> has one of <paramref name="values"/>.</summary>
    /// <param name="parameter">The name of a <c>[Params]</c> property.</param>
    /// <param name="values">The values kept (compared with <see cref="object.Equals(object, object)"/>).</param>
    public QuickSubsetAttribute(string parameter, params object[] values)
    {
        Parameter = parameter;
        Values = values;
    }

    /// <summary>The parameter restricted, or null for the whole class.</summary>
    public string? Parameter { get; }

    /// <summary>The values kept.</summary>
    public IReadOnlyList<object> Values { get; } = [];

    /// <summary>True when the case's class has the attribute and the case matches every one of them.</summary>
    public static bool Includes(BenchmarkCase benchmarkCase)
    {
        QuickSubsetAttribute[] rules = (QuickSubsetAttribute[])GetCustomAttributes(
            benchmarkCase.Descriptor.Type, typeof(QuickSubsetAttribute), inherit: true);
        return rules.Length > 0 && rules.All(rule => rule.Parameter is null
            || rule.Values.Any(value => Equals(value, benchmarkCase.Parameters[rule.Parameter])));
    }
}
