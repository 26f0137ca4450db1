using System;
using System.Runtime.CompilerServices;
using System.Runtime.Versioning;

namespace CachedCryptography.Backends.Cng;

/// <summary>The real <see cref="ICngApi"/>: straight calls into <c>bcrypt.dll</c>.</summary>
/// <remarks>Every method that makes a native call is never inlined, so that the call is made inline with the vector
/// registers' upper halves cleared before it (docs/design-notes.md, "Native calls out of line").</remarks>
[SupportedOSPlatform("windows")]
internal sealed unsafe class CngApi : ICngApi
{
    /// <summary>The one instance.</summary>
    public static readonly CngApi Instance = new();

    private CngApi() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int OpenAlgorithmProvider(string algorithmId, out nint algorithm)
    {
        // A pinned C# string is NUL-terminated, as LPCWSTR requires.
        fixed (char* pAlgId = algorithmId)
        {
            return BCrypt.BCryptOpenAlgorithmProvider(out algorithm, pAlgId, null, 0);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int SetProperty(nint handle, string property, ReadOnlySpan<byte> value)
    {
        fixed (char* pProperty = property)
        fixed (byte* pValue = value)
        {
            return BCrypt.BCryptSetProperty(handle, pProperty, pValue, (uint)value.Length, 0);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int CloseAlgorithmProvider(nint algorithm) => BCrypt.BCryptCloseAlgorithmProvider(algorithm, 0);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int GetObjectLength(nint algorithm, out int length)
    {
        uint value = 0;
        int status;
        fixed (char* pProperty = BCrypt.BCRYPT_OBJECT_LENGTH)
        {
            status = BCrypt.BCryptGetProperty(algorithm, pProperty, (byte*)&value, sizeof(uint), out uint written, 0);
            status = status == BCrypt.STATUS_SUCCESS && written != sizeof(uint) ? -1 : status;
        }

        length = (int)value;
        return status;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, CngCipher key)
    {
        int status;
        nint raw;
        fixed (byte* pSecret = secret)
        {
            status = BCrypt.BCryptGenerateSymmetricKey(algorithm, out raw, (byte*)key.KeyObject, (uint)key.KeyObjectLength, pSecret, (uint)secret.Length, 0);
        }

        // The key's owner was allocated before the call, so taking ownership cannot fail here.
        if (status == BCrypt.STATUS_SUCCESS)
        {
            key.Attach(raw);
        }

        return status;
    }

    public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run(encrypt: true, key, input, iv, output, out written);

    public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run(encrypt: false, key, input, iv, output, out written);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int DestroyKey(nint key) => BCrypt.BCryptDestroyKey(key);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Run(bool encrypt, nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
    {
        int status;
        uint result;

        // Pinning an empty span yields a null pointer: an empty IV is passed as NULL (ECB).
        fixed (byte* pInput = input)
        fixed (byte* pIv = iv)
        fixed (byte* pOutput = output)
        {
            status = encrypt
                ? BCrypt.BCryptEncrypt(key, pInput, (uint)input.Length, null, pIv, (uint)iv.Length, pOutput, (uint)output.Length, out result, 0)
                : BCrypt.BCryptDecrypt(key, pInput, (uint)input.Length, null, pIv, (uint)iv.Length, pOutput, (uint)output.Length, out result, 0);
        }

        written = (int)result;
        return status;
    }
}
