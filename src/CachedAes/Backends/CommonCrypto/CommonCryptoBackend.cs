using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>
/// Makes <see cref="CommonCryptoCipher"/> handles: Apple CommonCrypto AES-ECB and AES-CBC cryptors,
/// one per mode and direction.
/// </summary>
internal sealed class CommonCryptoBackend : CipherBackend
{
    private readonly ICommonCryptoApi _api;

    private CommonCryptoBackend(ICommonCryptoApi api)
    {
        _api = api;
    }

    /// <inheritdoc />
    public override CachedAesBackend Kind => CachedAesBackend.CommonCrypto;

    /// <inheritdoc />
    public override string Description => "libcommonCrypto.dylib";

    /// <summary>
    /// A backend over the real <c>libcommonCrypto.dylib</c>, after a probe cryptor was created and released; false,
    /// with the reason, when CommonCrypto is unusable here. Nothing is kept open, so each call probes afresh.
    /// </summary>
    [SupportedOSPlatform("macos")]
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        try
        {
            return TryCreate(CommonCryptoApi.Instance, out backend, out reason);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            backend = null;
            reason = $"libcommonCrypto.dylib could not be used: {e.GetType().Name}: {e.Message}";
            return false;
        }
    }

    /// <summary>
    /// A backend over <paramref name="api"/> (tests pass a simulated layer) if a probe cryptor works; false, with what
    /// failed, if not.
    /// </summary>
    internal static bool TryCreate(ICommonCryptoApi api, [NotNullWhen(true)] out CipherBackend? backend, [NotNullWhen(false)] out string? reason)
    {
        ArgumentNullException.ThrowIfNull(api);
        try
        {
            using SafeCCCryptorHandle probe = CommonCryptoCipher.CreateCryptor(api, BlockCipherMode.Ecb, encrypting: true, stackalloc byte[16]);
        }
        catch (CryptographicException e)
        {
            backend = null;
            reason = $"libcommonCrypto.dylib: a probe AES cryptor could not be created ({e.Message})";
            return false;
        }

        backend = new CommonCryptoBackend(api);
        reason = null;
        return true;
    }

    /// <inheritdoc />
    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
        => CommonCryptoCipher.Create(_api, mode, encrypting, key);
}
