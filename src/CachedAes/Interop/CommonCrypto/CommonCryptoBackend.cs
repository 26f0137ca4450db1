using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Interop.CommonCrypto;

/// <summary>
/// Makes <see cref="CommonCryptoBlockCipher"/> handles: Apple CommonCrypto AES-ECB and AES-CBC cryptors,
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
            if (TryCreate(CommonCryptoApi.Instance, out backend))
            {
                reason = null;
                return true;
            }
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            backend = null;
        }

        reason = "libcommonCrypto.dylib: CommonCrypto could not create an AES cryptor";
        return false;
    }

    /// <summary>Creates a backend over <paramref name="api"/> (tests pass a simulated layer) if a probe cryptor works.</summary>
    internal static bool TryCreate(ICommonCryptoApi api, [NotNullWhen(true)] out CipherBackend? backend)
    {
        ArgumentNullException.ThrowIfNull(api);
        try
        {
            using SafeCCCryptorHandle probe = CommonCryptoBlockCipher.CreateCryptor(api, BlockCipherMode.Ecb, encrypting: true, stackalloc byte[16]);
        }
        catch (CryptographicException)
        {
            backend = null;
            return false;
        }

        backend = new CommonCryptoBackend(api);
        return true;
    }

    /// <inheritdoc />
    public override BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
        => CommonCryptoBlockCipher.Create(_api, mode, encrypting, key);
}
