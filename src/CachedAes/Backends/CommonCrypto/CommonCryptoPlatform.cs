using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>
/// macOS's row of the process's backend table: <see cref="CommonCryptoBackend"/>. macOS has no FIPS mode switch (its
/// libraries are validated as they are), so nothing is asked: a request for the CPU intrinsics backend is granted.
/// </summary>
internal sealed class CommonCryptoPlatform : PlatformBackend
{
    /// <inheritdoc />
    public override bool IsCurrentPlatform => OperatingSystem.IsMacOS();

    /// <inheritdoc />
    [SupportedOSPlatform("macos")]
    protected override bool TryCreateHere([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason) =>
        CommonCryptoBackend.TryCreate(out backend, out reason);

    /// <inheritdoc />
    public override FipsMode CheckFipsMode() => new(false, "macOS has no FIPS mode switch: nothing to check");
}
