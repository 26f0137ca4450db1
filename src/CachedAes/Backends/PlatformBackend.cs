using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends;

/// <summary>
/// A platform's native backend as selection sees it: one row of the table in src/CachedAes/Selection/ProcessBackend.cs,
/// supplied by the backend's own folder (the OpenSSL folder's is <c>OpenSslPlatform</c>). It says whether this is its
/// operating system, makes the backend over the real library, and asks the platform whether it is in FIPS mode.
/// </summary>
internal abstract class PlatformBackend
{
    /// <summary>True on the operating system whose library this backend calls (only the first such row is used).</summary>
    public abstract bool IsCurrentPlatform { get; }

    /// <summary>
    /// The backend over the real library, not yet verified (selection runs the self-test); false, with the reason, when
    /// the library cannot be used here, which includes any other operating system than <see cref="IsCurrentPlatform"/>'s.
    /// </summary>
    public bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        if (IsCurrentPlatform)
        {
            return TryCreateHere(out backend, out reason);
        }

        backend = null;
        reason = $"{GetType().Name} is not for {RuntimeInformation.OSDescription}";
        return false;
    }

    /// <summary>
    /// Whether the platform is in FIPS mode, asked before the CPU intrinsics backend may replace the platform's library:
    /// in FIPS mode the platform's (validated) library stays, whatever was requested. An answer that cannot be read
    /// counts as FIPS mode (the request was for leaving the validated library, so doubt keeps it).
    /// </summary>
    public abstract FipsMode CheckFipsMode();

    /// <summary><see cref="TryCreate"/> on this backend's operating system (<see cref="IsCurrentPlatform"/> is true).</summary>
    protected abstract bool TryCreateHere([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason);

    /// <summary>What the platform said about FIPS mode.</summary>
    /// <param name="Enabled">True in FIPS mode, or when the answer could not be read.</param>
    /// <param name="Detail">What was asked and each answer, for diagnostics.</param>
    internal readonly record struct FipsMode(bool Enabled, string Detail);
}
