using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Text;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// Makes <see cref="CngCipher"/> handles: Windows CNG (<c>bcrypt.dll</c>) AES-ECB and AES-CBC keys.
/// </summary>
/// <remarks>
/// On Windows 10 and later the keys come from the AES algorithm pseudo-handles, which need no opening or closing.
/// Where those are unavailable (older Windows, or a probe key on them fails), one <c>AES</c> provider per mode is opened
/// with its <c>ChainingMode</c> property set. Over the real <c>bcrypt.dll</c> that happens once per process and the
/// providers stay open for its lifetime (<see cref="TryCreate(out CipherBackend?, out string?)"/>).
/// </remarks>
internal sealed class CngBackend : CipherBackend
{
    // The real bcrypt.dll's algorithm handles, found once per process (opened providers are never closed), or why not.
    [SupportedOSPlatform("windows")]
    private static readonly Lazy<(CngBackend? Backend, string? Reason)> s_process = new(OpenProcessBackend);

    private readonly ICngApi _api;

    private CngBackend(ICngApi api, nint ecbAlgorithm, nint cbcAlgorithm, bool usesPseudoHandles)
    {
        _api = api;
        EcbAlgorithm = ecbAlgorithm;
        CbcAlgorithm = cbcAlgorithm;
        UsesPseudoHandles = usesPseudoHandles;

        // A handle's first key is made in a key object CNG allocates; a key change makes the new key in a buffer of the
        // handle's own of this size, so later re-keys allocate nothing in bcrypt. Where CNG does not say how large a key
        // object is (the call fails), CNG allocates every key object itself.
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

    /// <summary>
    /// The key object size on <see cref="EcbAlgorithm"/> (<c>BCRYPT_OBJECT_LENGTH</c>), or 0 if CNG did not say: the size of
    /// the buffer a handle makes at its first key change.
    /// </summary>
    internal int EcbKeyObjectLength { get; }

    /// <summary>The key object size on <see cref="CbcAlgorithm"/>, or 0 if CNG did not say.</summary>
    internal int CbcKeyObjectLength { get; }

    /// <summary>The CNG backend over the real <c>bcrypt.dll</c>; false, with the reason, when CNG AES is unusable here.</summary>
    [SupportedOSPlatform("windows")]
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        (backend, reason) = s_process.Value;
        return backend is not null;
    }

    /// <summary>
    /// A backend over <paramref name="api"/> (tests pass a simulated layer): on the pseudo-handles when
    /// <paramref name="tryPseudoHandles"/> is true and they work, else on opened providers; false, with what failed, when
    /// neither works (nothing is left open).
    /// </summary>
    internal static bool TryCreate(ICngApi api, bool tryPseudoHandles, [NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        ArgumentNullException.ThrowIfNull(api);
        string? pseudoFailure = null;
        if (tryPseudoHandles)
        {
            pseudoFailure = ProbeKey(api, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, "the ECB pseudo-handle")
                ?? ProbeKey(api, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, "the CBC pseudo-handle");
            if (pseudoFailure is null)
            {
                backend = new CngBackend(api, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, usesPseudoHandles: true);
                reason = null;
                return true;
            }
        }

        string? providerFailure = OpenAes(api, BCrypt.BCRYPT_CHAIN_MODE_ECB, out nint ecb);
        nint cbc = 0;
        if (providerFailure is null)
        {
            providerFailure = OpenAes(api, BCrypt.BCRYPT_CHAIN_MODE_CBC, out cbc);
            if (providerFailure is not null)
            {
                _ = api.CloseAlgorithmProvider(ecb);
            }
        }

        if (providerFailure is not null)
        {
            backend = null;
            reason = pseudoFailure is null
                ? $"bcrypt.dll: {providerFailure}"
                : $"bcrypt.dll: {pseudoFailure}; and {providerFailure}";
            return false;
        }

        backend = new CngBackend(api, ecb, cbc, usesPseudoHandles: false);
        reason = null;
        return true;
    }

    /// <inheritdoc />
    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) => mode switch
    {
        BlockCipherMode.Ecb => CngCipher.Create(_api, EcbAlgorithm, EcbKeyObjectLength, mode, encrypting, key),
        BlockCipherMode.Cbc => CngCipher.Create(_api, CbcAlgorithm, CbcKeyObjectLength, mode, encrypting, key),
        _ => throw new ArgumentOutOfRangeException(nameof(mode)),
    };

    [SupportedOSPlatform("windows")]
    private static (CngBackend? Backend, string? Reason) OpenProcessBackend()
    {
        try
        {
            return TryCreate(CngApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10), out CipherBackend? backend, out string? reason)
                ? ((CngBackend)backend, null)
                : (null, reason);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            return (null, $"bcrypt.dll could not be used: {e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>
    /// Opens an AES provider set to <paramref name="chainingMode"/> and checks that it makes a key; on failure, what failed
    /// (the provider is closed again and <paramref name="algorithm"/> is 0).
    /// </summary>
    private static string? OpenAes(ICngApi api, string chainingMode, out nint algorithm)
    {
        int status = api.OpenAlgorithmProvider(BCrypt.BCRYPT_AES_ALGORITHM, out algorithm);
        if (status != 0 || algorithm == 0)
        {
            algorithm = 0;
            return status != 0
                ? BCrypt.Failure("BCryptOpenAlgorithmProvider(AES)", status)
                : Errors.NoNativeHandle("BCryptOpenAlgorithmProvider(AES)", "algorithm handle").Message;
        }

        // The property value is a UTF-16 string; its byte count includes the terminating NUL.
        byte[] value = Encoding.Unicode.GetBytes(chainingMode + "\0");
        status = api.SetProperty(algorithm, BCrypt.BCRYPT_CHAINING_MODE, value);
        string? failure = status != 0
            ? BCrypt.Failure($"BCryptSetProperty(ChainingMode, {chainingMode})", status)
            : ProbeKey(api, algorithm, $"the {chainingMode} provider");
        if (failure is not null)
        {
            _ = api.CloseAlgorithmProvider(algorithm);
            algorithm = 0;
        }

        return failure;
    }

    private static int KeyObjectLength(ICngApi api, nint algorithm) =>
        api.GetObjectLength(algorithm, out int length) == 0 && length > 0 ? length : 0;

    /// <summary>Makes and destroys one throwaway key on <paramref name="algorithm"/>; null when it worked, else what failed.</summary>
    private static string? ProbeKey(ICngApi api, nint algorithm, string what)
    {
        try
        {
            using CngCipher probe = CngCipher.Create(api, algorithm, keyObjectLength: 0, BlockCipherMode.Ecb, encrypting: true, stackalloc byte[16]);
            return null;
        }
        catch (CryptographicException e)
        {
            return $"a key on {what} could not be made ({e.Message})";
        }
    }
}
