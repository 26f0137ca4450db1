using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace CachedCryptography.Ownership;

/// <summary>
/// How an ownership rule that cannot fail fails anyway: loudly, with the rule's name, never by retrying. Each use names
/// a row of the state tables in docs/design-notes.md ("Ownership"); an exception here means that table is wrong or the
/// code does not follow it.
/// </summary>
internal static class Invariant
{
    /// <summary>Throws <see cref="InvalidOperationException"/> naming <paramref name="rule"/> unless <paramref name="holds"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Check([DoesNotReturnIf(false)] bool holds, string rule)
    {
        if (!holds)
        {
            Fail(rule);
        }
    }

    /// <summary>Counts the broken rule (<c>cachedaes.ownership.violations</c>) and throws.</summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Fail(string rule)
    {
        CachedAesMetrics.Violations.Add();
        throw new InvalidOperationException($"CachedAes broke an ownership rule: {rule}. Please report this with CachedAesDiagnostics.Describe().");
    }
}
