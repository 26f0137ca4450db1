using System;

namespace CachedCryptography.Tests.Infrastructure;

// [OpenSslFact] is in OpenSslFactAttribute.cs (namespace CachedCryptography.Tests, linked into the Wine lane too).

/// <summary>A theory that runs only on Linux, where libcrypto.so.3 provides the reference; elsewhere it is reported as skipped.</summary>
public sealed class OpenSslTheoryAttribute : TheoryAttribute
{
    public OpenSslTheoryAttribute()
    {
        Skip = OpenSslPlatform.SkipReason("OpenSSL's own key-wrap cipher (libcrypto.so.3) is the reference on Linux only.");
    }
}

/// <summary>Where libcrypto.so.3 is the platform's library: Linux.</summary>
internal static class OpenSslPlatform
{
    /// <summary>Null on Linux (the test runs); elsewhere <paramref name="reason"/>, so the test is reported as skipped.</summary>
    public static string? SkipReason(string reason) => OperatingSystem.IsLinux() ? null : reason;
}
