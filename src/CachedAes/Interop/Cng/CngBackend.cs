using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Text;
using CachedCryptography.Seam;

namespace CachedCryptography.Interop.Cng;

/// <summary>
/// Makes <see cref="CngBlockCipher"/> handles: Windows CNG (<c>bcrypt.dll</c>) AES-ECB and AES-CBC keys.
/// </summary>
/// <remarks>
/// On Windows 10 and later the keys come from the AES algorithm pseudo-handles, which need no opening or closing.
/// Where those are unavailable (older Windows, or a probe key on them fails), one <c>AES</c> provider per mode is opened
/// with its <c>ChainingMode</c> property set. Over the real <c>bcrypt.dll</c> that happens once per process and the
/// providers stay open for its lifetime (<see cref="TryCreate(out CipherBackend?, out string?)"/>).
/// </remarks>
internal sealed class CngBackend : CipherBackend
{
    // The real bcrypt.dll's algorithm handles, found once per process (opened providers are never closed).
    [SupportedOSPlatform("windows")]
    private static readonly Lazy<CngBackend?> s_process = new(OpenProcessBackend);

    private readonly IBCryptApi _api;

    private CngBackend(IBCryptApi api, nint ecbAlgorithm, nint cbcAlgorithm, bool usesPseudoHandles)
    {
        _api = api;
        EcbAlgorithm = ecbAlgorithm;
        CbcAlgorithm = cbcAlgorithm;
        UsesPseudoHandles = usesPseudoHandles;

        // Keys are made in buffers of their own when CNG says how large a key object is, so a re-key allocates nothing in
        // bcrypt; where it does not say (the call fails), CNG allocates each key object itself.
        EcbKeyObjectLength = KeyObjectLength(api, ecbAlgorithm);
        CbcKeyObjectLength = KeyObjectLength(api, cbcAlgorithm);
    }

    /// <inheritdoc />
    public override CachedAesBackend Kind => CachedAesBackend.Cng;

    /// <inheritdoc />
    public override string Description => UsesPseudoHandles ? "bcrypt.dll, algorithm pseudo-handles" : "bcrypt.dll, opened AES providers";

    /// <summary>The algorithm handle that ECB keys are made on.</summary>
    internal nint EcbAlgorithm { get; }

    /// <summary>The algorithm handle that CBC keys are made on.</summary>
    internal nint CbcAlgorithm { get; }

    /// <summary>True when the algorithm handles are the Windows 10 pseudo-handles (nothing was opened).</summary>
    internal bool UsesPseudoHandles { get; }

    /// <summary>The key object size on <see cref="EcbAlgorithm"/> (<c>BCRYPT_OBJECT_LENGTH</c>), or 0 if CNG did not say.</summary>
    internal int EcbKeyObjectLength { get; }

    /// <summary>The key object size on <see cref="CbcAlgorithm"/>, or 0 if CNG did not say.</summary>
    internal int CbcKeyObjectLength { get; }

    /// <summary>The CNG backend over the real <c>bcrypt.dll</c>; false, with the reason, when CNG AES is unusable here.</summary>
    [SupportedOSPlatform("windows")]
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        backend = s_process.Value;
        reason = backend is null ? "bcrypt.dll: CNG AES ECB/CBC could not be opened" : null;
        return backend is not null;
    }

    /// <summary>
    /// Creates a backend over <paramref name="api"/> (tests pass a simulated layer). Tries the pseudo-handles
    /// first when <paramref name="tryPseudoHandles"/> is true, else (or if they fail) opens providers.
    /// </summary>
    internal static bool TryCreate(IBCryptApi api, bool tryPseudoHandles, [NotNullWhen(true)] out CipherBackend? backend)
    {
        ArgumentNullException.ThrowIfNull(api);
        backend = TryCreateCore(api, tryPseudoHandles);
        return backend is not null;
    }

    /// <inheritdoc />
    public override BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        return mode switch
        {
            BlockCipherMode.Ecb => CngBlockCipher.Create(_api, EcbAlgorithm, EcbKeyObjectLength, mode, encrypting, key),
            BlockCipherMode.Cbc => CngBlockCipher.Create(_api, CbcAlgorithm, CbcKeyObjectLength, mode, encrypting, key),
            _ => throw new ArgumentOutOfRangeException(nameof(mode)),
        };
    }

    [SupportedOSPlatform("windows")]
    private static CngBackend? OpenProcessBackend()
    {
        try
        {
            return TryCreateCore(BCryptApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10));
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            return null;
        }
    }

    private static CngBackend? TryCreateCore(IBCryptApi api, bool tryPseudoHandles)
    {
        if (tryPseudoHandles
            && CanMakeKey(api, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE)
            && CanMakeKey(api, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE))
        {
            return new CngBackend(api, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, usesPseudoHandles: true);
        }

        nint ecb = OpenAes(api, BCrypt.BCRYPT_CHAIN_MODE_ECB);
        if (ecb == 0)
        {
            return null;
        }

        nint cbc = OpenAes(api, BCrypt.BCRYPT_CHAIN_MODE_CBC);
        if (cbc == 0)
        {
            _ = api.CloseAlgorithmProvider(ecb);
            return null;
        }

        return new CngBackend(api, ecb, cbc, usesPseudoHandles: false);
    }

    /// <summary>Opens an AES provider set to <paramref name="chainingMode"/>; 0 on failure (nothing left open).</summary>
    private static nint OpenAes(IBCryptApi api, string chainingMode)
    {
        if (api.OpenAlgorithmProvider(BCrypt.BCRYPT_AES_ALGORITHM, out nint algorithm) != 0 || algorithm == 0)
        {
            return 0;
        }

        // The property value is a UTF-16 string; its byte count includes the terminating NUL.
        byte[] value = Encoding.Unicode.GetBytes(chainingMode + "\0");
        if (api.SetProperty(algorithm, BCrypt.BCRYPT_CHAINING_MODE, value) != 0
            || !CanMakeKey(api, algorithm))
        {
            _ = api.CloseAlgorithmProvider(algorithm);
            return 0;
        }

        return algorithm;
    }

    private static int KeyObjectLength(IBCryptApi api, nint algorithm) =>
        api.GetObjectLength(algorithm, out int length) == 0 && length > 0 ? length : 0;

    /// <summary>Makes and destroys one throwaway key on <paramref name="algorithm"/> to see that it works.</summary>
    private static bool CanMakeKey(IBCryptApi api, nint algorithm)
    {
        try
        {
            using SafeBCryptKeyHandle probe = CngBlockCipher.GenerateKey(api, algorithm, keyObjectLength: 0, stackalloc byte[16]);
            return true;
        }
        catch (CryptographicException)
        {
            return false;
        }
    }
}
