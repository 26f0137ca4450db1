using System;
using System.Collections.Generic;
using System.Reflection;
using Xunit.Sdk;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// Theory cases from a public static property of the concrete test class that runs the theory, so that an abstract
/// contract class can declare a theory once and let each subclass supply its own cases. (<c>[MemberData]</c> cannot
/// serve here: its analyzer requires the member on the class that declares the method.)
/// </summary>
/// <param name="propertyName">The name of a public static property of type <c>TheoryData&lt;...&gt;</c> (or any
/// <c>IEnumerable&lt;object[]&gt;</c>) that every concrete subclass declares.</param>
[AttributeUsage(AttributeTargets.Method)]
public sealed class SubclassDataAttribute(string propertyName) : DataAttribute
{
    /// <summary>The property every concrete subclass declares.</summary>
    public string PropertyName { get; } = propertyName;

    /// <inheritdoc />
    public override IEnumerable<object[]> GetData(MethodInfo testMethod)
    {
        ArgumentNullException.ThrowIfNull(testMethod);

        // xunit discovers an inherited test method through the concrete class, which is then its ReflectedType.
        Type type = testMethod.ReflectedType ?? throw new ArgumentException("The test method belongs to no class.", nameof(testMethod));
        PropertyInfo property = type.GetProperty(PropertyName, BindingFlags.Public | BindingFlags.Static)
            ?? throw new InvalidOperationException($"{type.Name} declares no public static property {PropertyName} with the cases of {testMethod.Name}.");
        return property.GetValue(null) as IEnumerable<object[]>
            ?? throw new InvalidOperationException($"{type.Name}.{PropertyName} is not a sequence of theory cases.");
    }
}
