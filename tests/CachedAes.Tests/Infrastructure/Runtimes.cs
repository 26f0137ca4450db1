using System;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// Which CachedAes build this test assembly was compiled against, which runtime it runs on, and what stock
/// <see cref="Aes"/> does differently on that runtime. The test projects build for net10.0 and net11.0 and `dotnet test`
/// runs each on its own runtime (tests/BothRuntimes.props): the net10.0 build tests CachedAes's lib/net10.0 on .NET 10,
/// the net11.0 build its lib/net11.0 on .NET 11. The differential tests compare CachedAes with the stock of the runtime
/// they run on; where the two stocks differ, the test says so and uses these helpers.
/// </summary>
internal static class Runtimes
{
    /// <summary>The major version of the CachedAes build under test: 10 for lib/net10.0, 11 for lib/net11.0.</summary>
#if NET11_0_OR_GREATER
    public const int Build = 11;
    public const string BuildText = "11.0";
#else
    public const int Build = 10;
    public const string BuildText = "10.0";
#endif

    /// <summary>The major version of the runtime running the tests (and so of the stock <see cref="Aes"/> compared with).</summary>
    public static int Runtime => Environment.Version.Major;

    /// <summary>A description for skip reasons and failure messages.</summary>
    public static string Describe() => $"CachedAes's net{Build}.0 build on .NET {Environment.Version}";

    /// <summary>
    /// The exception type a differential test expects from CachedAes where stock threw <paramref name="stockError"/>.
    /// </summary>
    /// <remarks>
    /// Stock .NET 11 on Linux does its key wraps (RFC 5649, and RFC 3394 which is new in .NET 11) in OpenSSL's own wrap
    /// ciphers, and a failed unwrap throws <c>Interop+Crypto+OpenSslCryptographicException</c>, an internal subclass of
    /// <see cref="CryptographicException"/> carrying OpenSSL's error text. Stock .NET 10 throws
    /// <see cref="CryptographicException"/> itself. CachedAes throws <see cref="CryptographicException"/> itself on both:
    /// every <c>catch</c> that catches stock's exception catches CachedAes's, but the exact types differ on .NET 11. So
    /// on .NET 11 or later, and only for a non-public subclass of <see cref="CryptographicException"/> (which CachedAes
    /// cannot throw), the expected type is <see cref="CryptographicException"/>; every other type, and every type on
    /// .NET 10, is expected exactly.
    /// </remarks>
    public static Type? ExpectedTypeFor(Exception? stockError) => ExpectedTypeFor(stockError?.GetType());

    /// <summary>The same, from the type of stock's exception (<see langword="null"/>: stock did not throw).</summary>
    public static Type? ExpectedTypeFor(Type? type)
    {
        if (type is null)
        {
            return null;
        }

        bool internalSubclass = type != typeof(CryptographicException)
            && typeof(CryptographicException).IsAssignableFrom(type)
            && !type.IsVisible;
        return Runtime >= 11 && internalSubclass ? typeof(CryptographicException) : type;
    }
}

/// <summary>A fact about one CachedAes build (lib/net10.0 or lib/net11.0); reported as skipped in the other build's run.</summary>
public sealed class BuildFactAttribute : FactAttribute
{
    public BuildFactAttribute(int build, string otherwise)
    {
        if (Runtimes.Build != build)
        {
            Skip = $"Applies to CachedAes's net{build}.0 build; this run tests {Runtimes.Describe()}: {otherwise}";
        }
    }
}

/// <summary>A theory about one CachedAes build (lib/net10.0 or lib/net11.0); reported as skipped in the other build's run.</summary>
public sealed class BuildTheoryAttribute : TheoryAttribute
{
    public BuildTheoryAttribute(int build, string otherwise)
    {
        if (Runtimes.Build != build)
        {
            Skip = $"Applies to CachedAes's net{build}.0 build; this run tests {Runtimes.Describe()}: {otherwise}";
        }
    }
}

/// <summary>A fact about stock .NET <c>from</c>..<c>to</c> (inclusive); reported as skipped on other runtimes.</summary>
public sealed class RuntimeFactAttribute : FactAttribute
{
    public RuntimeFactAttribute(int from, int to, string otherwise)
    {
        if (Runtimes.Runtime < from || Runtimes.Runtime > to)
        {
            string range = to == int.MaxValue ? $".NET {from} or later" : from == to ? $".NET {from}" : $".NET {from} to {to}";
            Skip = $"Applies on {range}; this is .NET {Environment.Version}: {otherwise}";
        }
    }
}

/// <summary>A theory about stock .NET <c>from</c>..<c>to</c> (inclusive); reported as skipped on other runtimes.</summary>
public sealed class RuntimeTheoryAttribute : TheoryAttribute
{
    public RuntimeTheoryAttribute(int from, int to, string otherwise)
    {
        if (Runtimes.Runtime < from || Runtimes.Runtime > to)
        {
            string range = to == int.MaxValue ? $".NET {from} or later" : from == to ? $".NET {from}" : $".NET {from} to {to}";
            Skip = $"Applies on {range}; this is .NET {Environment.Version}: {otherwise}";
        }
    }
}
