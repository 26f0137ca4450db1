namespace CachedCryptography;

/// <summary>The native crypto library that a <see cref="CachedAes"/> caches handles from.</summary>
public enum CachedAesBackend
{
    /// <summary>
    /// No supported native library was found, the platform's library failed the self-test, or the stock path was
    /// forced (see <see cref="CachedAesDiagnostics"/> for which): every one-shot behaves like stock
    /// <see cref="System.Security.Cryptography.Aes.Create()"/>, creating a handle per call.
    /// </summary>
    StockFallback = 0,

    /// <summary>OpenSSL <c>libcrypto</c> (Linux).</summary>
    OpenSsl = 1,

    /// <summary>Windows Cryptography API: Next Generation (<c>bcrypt.dll</c>).</summary>
    Cng = 2,

    /// <summary>Apple CommonCrypto (macOS).</summary>
    CommonCrypto = 3,

    /// <summary>
    /// The processor's own AES instructions through .NET's hardware intrinsics (AES-NI on x86/x64, the Armv8 AES
    /// instructions on 64-bit Arm), in managed code and outside any FIPS boundary. Used only when asked for (see
    /// <see cref="CachedAesDiagnostics.UseCpuIntrinsicsSwitchName"/>), where the instructions exist, the platform is not
    /// in FIPS mode, and the backend passed the self-test; otherwise the platform's library is used.
    /// </summary>
    CpuIntrinsics = 4,
}
