using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;

namespace CachedCryptography;

/// <summary>SKELETON: replaced by the real implementation.</summary>
public sealed class CachedAes : Aes
{
    private readonly Aes _inner = Aes.Create();

    /// <summary>Creates an instance.</summary>
    public CachedAes() { }

    /// <summary>Creates an instance over a given backend (tests run every backend through one suite).</summary>
    internal CachedAes(CipherBackend backend) { _backendImpl = backend; }

    private readonly CipherBackend? _backendImpl;
    private int _handleCreations;

    /// <summary>Creates an instance.</summary>
    public static new CachedAes Create() => new();

    /// <summary>The backend.</summary>
    public CachedAesBackend Backend => _backendImpl?.Kind ?? CachedAesBackend.StockFallback;

    /// <summary>Number of native handles this instance created (tests).</summary>
    internal int HandleCreations => _handleCreations;

    /// <summary>The cached handle for a mode and direction, or null (tests).</summary>
    internal IBlockCipher? PeekCachedHandle(BlockCipherMode mode, bool encrypting) => _backendImpl is null ? null : null;

    /// <inheritdoc />
    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => _inner.CreateDecryptor(rgbKey, rgbIV);

    /// <inheritdoc />
    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => _inner.CreateEncryptor(rgbKey, rgbIV);

    /// <inheritdoc />
    public override void GenerateIV() => _inner.GenerateIV();

    /// <inheritdoc />
    public override void GenerateKey() { _handleCreations++; _inner.GenerateKey(); }
}
