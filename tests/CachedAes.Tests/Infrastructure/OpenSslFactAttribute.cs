using System;

namespace CachedCryptography.Tests;

/// <summary>Runs only where the OpenSSL backend is the platform's (Linux); elsewhere it is reported as skipped.</summary>
public sealed class OpenSslFactAttribute : FactAttribute
{
    public OpenSslFactAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "The OpenSSL backend is used on Linux only.";
        }
    }
}
