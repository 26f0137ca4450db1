using System;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Benchmarks;

// Compiled into both CachedAes.Benchmarks and CachedAes.Breakdown (a linked source file, as CipherCase.cs).

/// <summary>
/// The least an <c>Aes</c> subclass can do per new key on OpenSSL, for the benchmarks' <c>NewKeyApiFloor.ApiFloor</c> row
/// and the breakdown's apifloor-newkey row: the key is copied into a pinned field, and each one-shot (16 B plaintexts
/// padded to 32 B with PKCS7, or 32 B without padding) re-keys the caller's context (keyed for the one-shot's mode and
/// direction) and updates once. Not a usable <c>Aes</c>: it keeps no promise about key schedules, and it supports only
/// what those rows call.
/// </summary>
internal sealed unsafe partial class ApiFloorAes(IntPtr ctx) : Aes
{
    private readonly byte[] _keyBytes = GC.AllocateArray<byte>(32, pinned: true);

    // What CachedAes's setter does too: a legal length goes straight to the copy (no LegalKeySizes array).
    public override byte[] Key
    {
        get => _keyBytes[..(KeySizeValue / 8)];
        set
        {
            if (value is null || value.Length is not (16 or 24 or 32))
            {
                SetKey(value);
                return;
            }

            SetKeyCore(value);
        }
    }

    // CachedAes's cheaper key size check for SetKey (a new array without Array.Clone), so the floor is what CachedAes could reach.
    public override KeySizes[] LegalKeySizes => [.. LegalKeySizesValue!];

    public override ICryptoTransform CreateEncryptor(byte[] rgbKey, byte[]? rgbIV) => throw new NotSupportedException();

    public override ICryptoTransform CreateDecryptor(byte[] rgbKey, byte[]? rgbIV) => throw new NotSupportedException();

    public override void GenerateIV() => throw new NotSupportedException();

    public override void GenerateKey() => throw new NotSupportedException();

    protected override void SetKeyCore(ReadOnlySpan<byte> key)
    {
        key.CopyTo(_keyBytes);
        KeySizeValue = 8 * key.Length;
    }

    protected override bool TryEncryptEcbCore(ReadOnlySpan<byte> plaintext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Run(plaintext, default, destination, encrypting: true, out bytesWritten);

    protected override bool TryDecryptEcbCore(ReadOnlySpan<byte> ciphertext, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Run(ciphertext, default, destination, encrypting: false, out bytesWritten);

    protected override bool TryEncryptCbcCore(ReadOnlySpan<byte> plaintext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Run(plaintext, iv, destination, encrypting: true, out bytesWritten);

    protected override bool TryDecryptCbcCore(ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> iv, Span<byte> destination, PaddingMode paddingMode, out int bytesWritten) =>
        Run(ciphertext, iv, destination, encrypting: false, out bytesWritten);

    // Encrypt: 16 B padded with PKCS7 to 32 B; decrypt: 32 B, no padding.
    private bool Run(ReadOnlySpan<byte> input, ReadOnlySpan<byte> iv, Span<byte> destination, bool encrypting, out int bytesWritten)
    {
        Span<byte> padded = stackalloc byte[32];
        if (encrypting)
        {
            input.CopyTo(padded);
            padded[16..].Fill(16);
        }

        int written = 0;
        fixed (byte* k = _keyBytes)
        fixed (byte* v = iv)
        fixed (byte* source = encrypting ? padded : input)
        fixed (byte* target = destination)
        {
            if (EVP_CipherInit_ex(ctx, IntPtr.Zero, IntPtr.Zero, k, iv.IsEmpty ? null : v, encrypting ? 1 : 0) != 1
                || EVP_CipherUpdate(ctx, target, &written, source, 32) != 1)
            {
                throw new CryptographicException("OpenSSL failed.");
            }
        }

        bytesWritten = written;
        return true;
    }

    [LibraryImport("libcrypto.so.3")]
    private static partial int EVP_CipherInit_ex(IntPtr ctx, IntPtr cipher, IntPtr engine, byte* key, byte* iv, int enc);

    // Without the GC transition, as CachedAes's short updates.
    [LibraryImport("libcrypto.so.3")]
    [SuppressGCTransition]
    private static partial int EVP_CipherUpdate(IntPtr ctx, byte* output, int* outputLength, byte* input, int inputLength);
}
