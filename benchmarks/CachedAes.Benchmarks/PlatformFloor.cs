using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// Which library the floor rows (<see cref="NativeFloor"/>, <c>PerMessage.LeastNativeWork</c> and
/// <c>PerMessage.SubclassFloor</c>) call directly on this OS, the one CachedAes's platform backend calls: OpenSSL's
/// <c>libcrypto.so.3</c> on Linux (and any other OS but Windows and macOS), CNG's <c>bcrypt.dll</c> on Windows,
/// CommonCrypto on macOS. The floor is the least work of that library for a row's shape, so the floor column means the
/// same thing on every OS: what no code over the platform's AES can avoid. Where the library cannot be used (no
/// <c>libcrypto.so.3</c>, a Windows without CNG's AES pseudo-handles), <see cref="Unavailable"/> says why and
/// <see cref="FloorRowAttribute"/> leaves the floor rows out of the run instead of failing them.
/// </summary>
internal static class PlatformFloor
{
    private static readonly Lazy<string?> s_unavailable = new(Probe);

    /// <summary>True where the floor calls OpenSSL (a constant for the JIT: the checks below fold away).</summary>
    public static bool IsOpenSsl => !OperatingSystem.IsWindows() && !OperatingSystem.IsMacOS();

    /// <summary>The library, as the run's header names it.</summary>
    public static string Library =>
        OperatingSystem.IsWindows() ? "CNG (bcrypt.dll)"
        : OperatingSystem.IsMacOS() ? "CommonCrypto (libcommonCrypto.dylib)"
        : "OpenSSL (libcrypto.so.3)";

    /// <summary>The native work of a kept-key floor row.</summary>
    public static string KeptKeyWork =>
        OperatingSystem.IsWindows() ? "BCryptEncrypt/BCryptDecrypt on a kept key (AES pseudo-handles)"
        : OperatingSystem.IsMacOS() ? "CCCryptorUpdate on a kept cryptor"
        : "EVP_CipherUpdate on a kept context, without the GC transition";

    /// <summary>The native work of a new-key floor row (one message under a key not seen before).</summary>
    public static string NewKeyWork =>
        OperatingSystem.IsWindows() ? "BCryptGenerateSymmetricKey, BCryptEncrypt, BCryptDestroyKey"
        : OperatingSystem.IsMacOS() ? "CCCryptorCreateWithMode, CCCryptorUpdate, CCCryptorRelease"
        : "EVP_CipherInit_ex with the new key and EVP_CipherUpdate";

    /// <summary>Null where the floor rows can run; otherwise why they cannot (the library did not load or refused the key).</summary>
    public static string? Unavailable => s_unavailable.Value;

    /// <summary>The run's line about the floor.</summary>
    public static string Describe() => Unavailable is null
        ? $"// Native floor: {Library}; kept key: {KeptKeyWork}; new key: {NewKeyWork}."
        : $"// Native floor: none on this OS ({Unavailable}); its rows are left out.";

    /// <summary>
    /// One AES-256-CBC encryption of <paramref name="length"/> bytes (whole blocks) under a key used for nothing else,
    /// on CNG or CommonCrypto, which cannot re-key a key or cryptor: a new one is made from the key, used once and freed.
    /// (OpenSSL's floors re-key a kept context instead; see <c>PerMessage</c>.)
    /// </summary>
    public static unsafe void EncryptCbcUnderNewKey(byte* key, int keyLength, byte* iv, byte* input, byte* output, int length)
    {
        if (OperatingSystem.IsWindows())
        {
            IntPtr handle;
            Cng.Check(Cng.BCryptGenerateSymmetricKey(Cng.AesCbcAlgorithm, &handle, null, 0, key, (uint)keyLength, 0), "BCryptGenerateSymmetricKey");
            try
            {
                // CNG overwrites the IV it is given with the chaining value: a copy, never the caller's.
                byte* chain = stackalloc byte[16];
                Buffer.MemoryCopy(iv, chain, 16, 16);
                uint written;
                Cng.Check(Cng.BCryptEncrypt(handle, input, (uint)length, null, chain, 16, output, (uint)length, &written, 0), "BCryptEncrypt");
            }
            finally
            {
                _ = Cng.BCryptDestroyKey(handle);
            }
        }
        else if (OperatingSystem.IsMacOS())
        {
            IntPtr cryptor;
            CommonCrypto.Check(CommonCrypto.CCCryptorCreateWithMode(CommonCrypto.Encrypt, CommonCrypto.ModeCbc, CommonCrypto.AlgorithmAes, CommonCrypto.NoPadding, iv, key, (nuint)keyLength, null, 0, 0, 0, &cryptor), "CCCryptorCreateWithMode");
            try
            {
                nuint moved;
                CommonCrypto.Check(CommonCrypto.CCCryptorUpdate(cryptor, input, (nuint)length, output, (nuint)length, &moved), "CCCryptorUpdate");
            }
            finally
            {
                _ = CommonCrypto.CCCryptorRelease(cryptor);
            }
        }
        else
        {
            throw new PlatformNotSupportedException("OpenSSL's new-key floors re-key a kept context (PerMessage).");
        }
    }

    // Loads the library and keys one handle of each kind the floors use; a library that is missing or refuses the key
    // makes the floor unavailable. A wrong result is not caught here: each floor checks its output against stock's
    // before it is measured, and a wrong one fails its row.
    private static string? Probe()
    {
        try
        {
            using (FloorCipher.Create(cbc: false, encrypt: true, TestData.Key, TestData.Iv))
            using (FloorCipher.Create(cbc: true, encrypt: false, TestData.Key, TestData.Iv))
            {
            }

            if (IsOpenSsl)
            {
                _ = Libcrypto.Aes256Ecb;
                _ = Libcrypto.Aes256Cbc;
            }

            return null;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException
            or CryptographicException or TypeInitializationException)
        {
            Exception cause = e is TypeInitializationException { InnerException: { } inner } ? inner : e;
            string message = cause.Message.Split('\n')[0].Trim();
            return $"{Library} cannot be used here: {cause.GetType().Name}: {message}";
        }
    }
}

/// <summary>
/// One AES-256 handle of the platform's library (<see cref="PlatformFloor"/>), keyed once for one mode and one direction,
/// padding off, and its one call: an OpenSSL context (<c>EVP_CipherUpdate</c>), a CNG key (<c>BCryptEncrypt</c> or
/// <c>BCryptDecrypt</c>) or a CommonCrypto cryptor (<c>CCCryptorUpdate</c>). A CBC handle is never restarted: it chains
/// from the last block it processed (a CNG key is given a kept IV buffer, which CNG overwrites with the chaining value
/// each call, so it chains the same way), and <see cref="NativeFloor"/> starts each message at its IV with a 16-byte
/// fix-up of the first block.
/// </summary>
internal readonly unsafe struct FloorCipher : IDisposable
{
    private const int Block = 16;

    private readonly IntPtr _handle;
    private readonly byte* _chain; // CNG CBC only: the IV buffer CNG reads the chaining value from and writes it back to
    private readonly bool _encrypt;

    private FloorCipher(IntPtr handle, byte* chain, bool encrypt)
    {
        _handle = handle;
        _chain = chain;
        _encrypt = encrypt;
    }

    /// <summary>A handle keyed with <paramref name="key"/> (and, for CBC, started at <paramref name="iv"/>).</summary>
    public static FloorCipher Create(bool cbc, bool encrypt, ReadOnlySpan<byte> key, ReadOnlySpan<byte> iv)
    {
        fixed (byte* k = key)
        fixed (byte* v = iv)
        {
            if (OperatingSystem.IsWindows())
            {
                IntPtr handle;
                Cng.Check(Cng.BCryptGenerateSymmetricKey(cbc ? Cng.AesCbcAlgorithm : Cng.AesEcbAlgorithm, &handle, null, 0, k, (uint)key.Length, 0), "BCryptGenerateSymmetricKey");
                byte* chain = null;
                if (cbc)
                {
                    chain = (byte*)NativeMemory.Alloc(Block);
                    Buffer.MemoryCopy(v, chain, Block, Block);
                }

                return new(handle, chain, encrypt);
            }

            if (OperatingSystem.IsMacOS())
            {
                IntPtr cryptor;
                CommonCrypto.Check(CommonCrypto.CCCryptorCreateWithMode(
                    encrypt ? CommonCrypto.Encrypt : CommonCrypto.Decrypt, cbc ? CommonCrypto.ModeCbc : CommonCrypto.ModeEcb,
                    CommonCrypto.AlgorithmAes, CommonCrypto.NoPadding, cbc ? v : null, k, (nuint)key.Length, null, 0, 0, 0, &cryptor), "CCCryptorCreateWithMode");
                return new(cryptor, null, encrypt);
            }
        }

        return new(Libcrypto.KeyedContext(cbc ? Libcrypto.Aes256Cbc : Libcrypto.Aes256Ecb, encrypt, key, iv), null, encrypt);
    }

    /// <summary>One call over <paramref name="length"/> bytes (whole blocks).</summary>
    /// <remarks>Inlined, so that only this OS's branch is left in the floor's code (the OS checks are JIT-time constants).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Update(byte* output, byte* input, int length)
    {
        if (OperatingSystem.IsWindows())
        {
            uint written;
            int status = _encrypt
                ? Cng.BCryptEncrypt(_handle, input, (uint)length, null, _chain, _chain == null ? 0u : Block, output, (uint)length, &written, 0)
                : Cng.BCryptDecrypt(_handle, input, (uint)length, null, _chain, _chain == null ? 0u : Block, output, (uint)length, &written, 0);
            if (status != Cng.Success || written != (uint)length)
            {
                Cng.Fail(_encrypt ? "BCryptEncrypt" : "BCryptDecrypt", status);
            }
        }
        else if (OperatingSystem.IsMacOS())
        {
            nuint moved;
            int status = CommonCrypto.CCCryptorUpdate(_handle, input, (nuint)length, output, (nuint)length, &moved);
            if (status != CommonCrypto.Success || moved != (nuint)length)
            {
                CommonCrypto.Fail("CCCryptorUpdate", status);
            }
        }
        else
        {
            Libcrypto.Update(_handle, output, input, length);
        }
    }

    public void Dispose()
    {
        if (_handle == IntPtr.Zero)
        {
            return;
        }

        if (OperatingSystem.IsWindows())
        {
            _ = Cng.BCryptDestroyKey(_handle);
            NativeMemory.Free(_chain);
        }
        else if (OperatingSystem.IsMacOS())
        {
            _ = CommonCrypto.CCCryptorRelease(_handle);
        }
        else
        {
            Libcrypto.EVP_CIPHER_CTX_free(_handle);
        }
    }
}

/// <summary>The few <c>bcrypt.dll</c> exports the Windows floors call (Windows 10 and later: the AES pseudo-handles).</summary>
internal static unsafe partial class Cng
{
    public const int Success = 0;

    /// <summary><c>BCRYPT_AES_CBC_ALG_HANDLE</c>: a pseudo-handle, never opened or closed.</summary>
    public const nint AesCbcAlgorithm = 0x1A1;

    /// <summary><c>BCRYPT_AES_ECB_ALG_HANDLE</c>.</summary>
    public const nint AesEcbAlgorithm = 0x1B1;

    private const string Library = "bcrypt.dll";

    public static void Check(int status, string function)
    {
        if (status != Success)
        {
            Fail(function, status);
        }
    }

    public static void Fail(string function, int status) =>
        throw new CryptographicException($"{function} failed: NTSTATUS 0x{status:X8}.");

    // NTSTATUS BCryptGenerateSymmetricKey(BCRYPT_ALG_HANDLE, BCRYPT_KEY_HANDLE*, PUCHAR pbKeyObject, ULONG cbKeyObject,
    //                                     PUCHAR pbSecret, ULONG cbSecret, ULONG dwFlags); a NULL key object: CNG allocates it.
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    public static partial int BCryptGenerateSymmetricKey(nint algorithm, IntPtr* key, byte* keyObject, uint keyObjectLength, byte* secret, uint secretLength, uint flags);

    // NTSTATUS BCryptEncrypt(BCRYPT_KEY_HANDLE, PUCHAR pbInput, ULONG cbInput, VOID *pPaddingInfo, PUCHAR pbIV, ULONG cbIV,
    //                        PUCHAR pbOutput, ULONG cbOutput, ULONG *pcbResult, ULONG dwFlags); flags 0: no padding.
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    public static partial int BCryptEncrypt(IntPtr key, byte* input, uint inputLength, void* paddingInfo, byte* iv, uint ivLength, byte* output, uint outputLength, uint* result, uint flags);

    // NTSTATUS BCryptDecrypt(the same parameters).
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    public static partial int BCryptDecrypt(IntPtr key, byte* input, uint inputLength, void* paddingInfo, byte* iv, uint ivLength, byte* output, uint outputLength, uint* result, uint flags);

    // NTSTATUS BCryptDestroyKey(BCRYPT_KEY_HANDLE).
    [LibraryImport(Library)]
    [DefaultDllImportSearchPaths(DllImportSearchPath.System32)]
    [SupportedOSPlatform("windows")]
    public static partial int BCryptDestroyKey(IntPtr key);
}

/// <summary>The few CommonCrypto functions the macOS floors call (<c>CommonCryptor.h</c>).</summary>
internal static unsafe partial class CommonCrypto
{
    public const int Success = 0; // kCCSuccess
    public const uint Encrypt = 0; // kCCEncrypt
    public const uint Decrypt = 1; // kCCDecrypt
    public const uint AlgorithmAes = 0; // kCCAlgorithmAES (every AES key size)
    public const uint ModeEcb = 1; // kCCModeECB
    public const uint ModeCbc = 2; // kCCModeCBC
    public const uint NoPadding = 0; // ccNoPadding

    private const string Library = "/usr/lib/system/libcommonCrypto.dylib";

    public static void Check(int status, string function)
    {
        if (status != Success)
        {
            Fail(function, status);
        }
    }

    public static void Fail(string function, int status) =>
        throw new CryptographicException($"{function} failed: CCCryptorStatus {status}.");

    // CCCryptorStatus CCCryptorCreateWithMode(CCOperation, CCMode, CCAlgorithm, CCPadding, const void *iv, const void *key,
    //     size_t keyLength, const void *tweak, size_t tweakLength, int numRounds, CCModeOptions, CCCryptorRef *cryptorRef);
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    public static partial int CCCryptorCreateWithMode(uint operation, uint mode, uint algorithm, uint padding, byte* iv, byte* key, nuint keyLength, byte* tweak, nuint tweakLength, int rounds, uint options, IntPtr* cryptor);

    // CCCryptorStatus CCCryptorUpdate(CCCryptorRef, const void *dataIn, size_t dataInLength, void *dataOut,
    //     size_t dataOutAvailable, size_t *dataOutMoved).
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    public static partial int CCCryptorUpdate(IntPtr cryptor, byte* input, nuint inputLength, byte* output, nuint outputAvailable, nuint* moved);

    // CCCryptorStatus CCCryptorRelease(CCCryptorRef).
    [LibraryImport(Library)]
    [SupportedOSPlatform("macos")]
    public static partial int CCCryptorRelease(IntPtr cryptor);
}
