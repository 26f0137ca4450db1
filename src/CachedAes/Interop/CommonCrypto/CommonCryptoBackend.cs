using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.Versioning;
using System.Security.Cryptography;

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

    /// <summary>
    /// A backend over the real <c>libcommonCrypto.dylib</c>, after a probe cryptor was created and released;
    /// false (and <paramref name="backend"/> null) if CommonCrypto is unusable here.
    /// </summary>
    [SupportedOSPlatform("macos")]
    public static bool TryCreate([NotNullWhen(true)] out CipherBackend? backend)
    {
        try
        {
            return TryCreate(CommonCryptoApi.Instance, out backend);
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            backend = null;
            return false;
        }
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
    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
        => CommonCryptoBlockCipher.Create(this, _api, mode, encrypting, key);
}
