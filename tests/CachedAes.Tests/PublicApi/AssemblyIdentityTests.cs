using System;
using System.Reflection;

namespace CachedCryptography.Tests.PublicApi;

/// <summary>
/// The assembly identity decided before the first release (CONTRIBUTING.md, "Versions and packages"): not strong-named,
/// and an assembly version of &lt;major&gt;.0.0.0, so that a type name stored by one build (Data Protection stores CachedAes's
/// in its keys) is satisfied by every build of the same major version, later or earlier (scripts/dataprotection-upgrade.sh
/// checks that with real builds of other versions).
/// </summary>
public sealed class AssemblyIdentityTests
{
    [Fact]
    public void The_assembly_is_not_strong_named_and_its_version_is_the_major_version_only()
    {
        Assembly assembly = typeof(CachedAes).Assembly;
        AssemblyName name = assembly.GetName();
        Assert.Empty(name.GetPublicKeyToken() ?? []);

        // The release version, from the file version (the full VersionPrefix) and the informational version.
        Version release = Version.Parse(assembly.GetCustomAttribute<AssemblyFileVersionAttribute>()!.Version);
        string informational = assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()!.InformationalVersion;
        Assert.StartsWith($"{release.Major}.{release.Minor}.{release.Build}", informational, StringComparison.Ordinal);

        Assert.Equal(new Version(release.Major, 0, 0, 0), name.Version);
    }
}
