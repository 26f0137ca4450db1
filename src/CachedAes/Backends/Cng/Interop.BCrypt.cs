using System.Globalization;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// The few <c>bcrypt.dll</c> exports the CNG backend uses, declared as in <c>bcrypt.h</c>.
/// </summary>
/// <remarks>
/// Every function returns an <c>NTSTATUS</c> (a 32-bit signed value, 0 on success) and does not set the
/// thread's last error, so no <c>SetLastError</c>. All are <c>WINAPI</c> (stdcall on x86, the one native
/// convention on x64/ARM64), which is the platform default that <see cref="LibraryImportAttribute"/> uses.
/// Handles are pointer-sized (<see cref="nint"/>); <c>ULONG</c> is 32-bit unsigned on every Windows ABI.
/// Strings are <c>LPCWSTR</c> (NUL-terminated UTF-16), passed as pinned <see cref="char"/> pointers.
/// The library is loaded from System32 only. The functions are annotated Windows-only; the constants are
/// plain values that the platform-neutral (and simulated) code shares.
/// </remarks>
internal static unsafe partial class BCrypt
{
    private const string Library = "bcrypt.dll";

    /// <summary><c>STATUS_SUCCESS</c>.</summary>
    internal const int STATUS_SUCCESS = 0;

    /// <summary>Algorithm pseudo-handle for AES-CBC (Windows 10 and later; never opened or closed).</summary>
    internal const nint BCRYPT_AES_CBC_ALG_HANDLE = 0x1A1;

    /// <summary>Algorithm pseudo-handle for AES-ECB (Windows 10 and later; never opened or closed).</summary>
    internal const nint BCRYPT_AES_ECB_ALG_HANDLE = 0x1B1;

    /// <summary><c>BCRYPT_AES_ALGORITHM</c>.</summary>
    internal const string BCRYPT_AES_ALGORITHM = "AES";

    /// <summary><c>BCRYPT_CHAINING_MODE</c> (property name).</summary>
    internal const string BCRYPT_CHAINING_MODE = "ChainingMode";

    /// <summary><c>BCRYPT_CHAIN_MODE_ECB</c> (property value).</summary>
    internal const string BCRYPT_CHAIN_MODE_ECB = "ChainingModeECB";

    /// <summary><c>BCRYPT_CHAIN_MODE_CBC</c> (property value).</summary>
    internal const string BCRYPT_CHAIN_MODE_CBC = "ChainingModeCBC";

    /// <summary><c>BCRYPT_OBJECT_LENGTH</c> (property name): the size of a key object, a <c>DWORD</c>.</summary>
    internal const string BCRYPT_OBJECT_LENGTH = "ObjectLength";

    // NTSTATUS BCryptOpenAlgorithmProvider(BCRYPT_ALG_HANDLE *phAlgorithm, LPCWSTR pszAlgId,
    //                                      LPCWSTR pszImplementation, ULONG dwFlags);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptOpenAlgorithmProvider(out nint phAlgorithm, char* pszAlgId, char* pszImplementation, uint dwFlags);

    // NTSTATUS BCryptCloseAlgorithmProvider(BCRYPT_ALG_HANDLE hAlgorithm, ULONG dwFlags);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptCloseAlgorithmProvider(nint hAlgorithm, uint dwFlags);

    // NTSTATUS BCryptSetProperty(BCRYPT_HANDLE hObject, LPCWSTR pszProperty, PUCHAR pbInput, ULONG cbInput, ULONG dwFlags);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptSetProperty(nint hObject, char* pszProperty, byte* pbInput, uint cbInput, uint dwFlags);

    // NTSTATUS BCryptGetProperty(BCRYPT_HANDLE hObject, LPCWSTR pszProperty, PUCHAR pbOutput, ULONG cbOutput,
    //                            ULONG *pcbResult, ULONG dwFlags);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptGetProperty(nint hObject, char* pszProperty, byte* pbOutput, uint cbOutput, out uint pcbResult, uint dwFlags);

    // NTSTATUS BCryptGenerateSymmetricKey(BCRYPT_ALG_HANDLE hAlgorithm, BCRYPT_KEY_HANDLE *phKey, PUCHAR pbKeyObject,
    //                                     ULONG cbKeyObject, PUCHAR pbSecret, ULONG cbSecret, ULONG dwFlags);
    // pbKeyObject = NULL with cbKeyObject = 0 lets CNG allocate and free the key object (Windows 7 and later); a caller's
    // buffer of at least BCRYPT_OBJECT_LENGTH bytes must stay allocated until BCryptDestroyKey has returned.
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptGenerateSymmetricKey(nint hAlgorithm, out nint phKey, byte* pbKeyObject, uint cbKeyObject, byte* pbSecret, uint cbSecret, uint dwFlags);

    // NTSTATUS BCryptEncrypt(BCRYPT_KEY_HANDLE hKey, PUCHAR pbInput, ULONG cbInput, VOID *pPaddingInfo, PUCHAR pbIV,
    //                        ULONG cbIV, PUCHAR pbOutput, ULONG cbOutput, ULONG *pcbResult, ULONG dwFlags);
    // pbIV is [in, out]: CNG overwrites it with the chaining value.
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptEncrypt(nint hKey, byte* pbInput, uint cbInput, void* pPaddingInfo, byte* pbIV, uint cbIV, byte* pbOutput, uint cbOutput, out uint pcbResult, uint dwFlags);

    // NTSTATUS BCryptDecrypt(same parameters as BCryptEncrypt);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptDecrypt(nint hKey, byte* pbInput, uint cbInput, void* pPaddingInfo, byte* pbIV, uint cbIV, byte* pbOutput, uint cbOutput, out uint pcbResult, uint dwFlags);

    // NTSTATUS BCryptDestroyKey(BCRYPT_KEY_HANDLE hKey);
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptDestroyKey(nint hKey);

    // NTSTATUS BCryptGetFipsAlgorithmMode(BOOLEAN *pfEnabled);
    // BOOLEAN is an unsigned char: nonzero when Windows' "use FIPS compliant algorithms" policy is on.
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    internal static partial int BCryptGetFipsAlgorithmMode(out byte pfEnabled);

    /// <summary>The text of a failed call: the function and its NTSTATUS, in hexadecimal as Windows documents them.</summary>
    internal static string Failure(string function, int status) =>
        string.Create(CultureInfo.InvariantCulture, $"{function} failed with NTSTATUS 0x{status:X8}.");
}
