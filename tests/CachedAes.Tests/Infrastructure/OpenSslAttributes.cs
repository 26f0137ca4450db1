using System;

namespace CachedCryptography.Tests;

// The attributes for tests that need OpenSSL, both here: a test in any CachedCryptography.Tests.* namespace sees them
// without a using directive. The Wine lane's app links this file too (tests/lanes/CachedAes.WineTests).

/// <summary>Runs only where the OpenSSL backend is the platform's (Linux); elsewhere it is reported as skipped.</summary>
public sealed class OpenSslFactAttribute : FactAttribute
{
    public OpenSslFactAttribute()
    {
        Skip = OpenSslSkip.Reason("The OpenSSL backend is used on Linux only.");
    }
}

/// <summary>A theory that runs only on Linux, where libcrypto.so.3 provides the reference; elsewhere it is reported as skipped.</summary>
public sealed class OpenSslTheoryAttribute : TheoryAttribute
{
    public OpenSslTheoryAttribute()
    {
        Skip = OpenSslSkip.Reason("OpenSSL's own key-wrap cipher (libcrypto.so.3) is the reference on Linux only.");
    }
}

/// <summary>Where libcrypto.so.3 is the platform's library: Linux.</summary>
internal static class OpenSslSkip
{
    /// <summary>Null on Linux (the test runs); elsewhere <paramref name="reason"/>, so the test is reported as skipped.</summary>
    public static string? Reason(string reason) => OperatingSystem.IsLinux() ? null : reason;
}
