using System;

namespace CachedCryptography.Backends.Cng;

/// <summary>
/// The thin native-call layer under the CNG backend: one method per <c>bcrypt.dll</c> call, no policy.
/// The real implementation is <see cref="CngApi"/>; tests substitute a simulated layer that follows
/// the documented CNG semantics, so all the managed logic above it runs on any OS.
/// </summary>
/// <remarks>Every method returns the call's <c>NTSTATUS</c> (0 = success) and never throws for a native failure.</remarks>
internal interface ICngApi
{
    /// <summary><c>BCryptOpenAlgorithmProvider(&amp;h, algorithmId, NULL, 0)</c>.</summary>
    int OpenAlgorithmProvider(string algorithmId, out nint algorithm);

    /// <summary><c>BCryptSetProperty(handle, property, value, value.Length, 0)</c>; <paramref name="value"/> is passed as raw bytes.</summary>
    int SetProperty(nint handle, string property, ReadOnlySpan<byte> value);

    /// <summary><c>BCryptCloseAlgorithmProvider(algorithm, 0)</c>.</summary>
    int CloseAlgorithmProvider(nint algorithm);

    /// <summary>
    /// <c>BCryptGetProperty(algorithm, BCRYPT_OBJECT_LENGTH, &amp;length, 4, &amp;result, 0)</c>: how large a key object
    /// buffer a caller must give <see cref="GenerateSymmetricKey"/> to have the key made in memory of its own.
    /// </summary>
    int GetObjectLength(nint algorithm, out int length);

    /// <summary>
    /// <c>BCryptGenerateSymmetricKey(algorithm, &amp;hKey, keyObject, keyObjectLength, secret, secret.Length, 0)</c> with
    /// the key object buffer of <paramref name="key"/> (NULL and 0 when it has none: CNG allocates the object); on
    /// success the new native handle is attached to <paramref name="key"/>, which then owns it.
    /// </summary>
    int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, CngCipher key);

    /// <summary>
    /// <c>BCryptEncrypt(key, input, input.Length, NULL, iv, iv.Length, output, output.Length, &amp;written, 0)</c>;
    /// an empty <paramref name="iv"/> is passed as NULL. CNG overwrites <paramref name="iv"/> with the chaining value.
    /// <paramref name="key"/> is the raw key handle: its owner (a <see cref="CngCipher"/>) keeps it alive for the
    /// call, so no reference is counted per call.
    /// </summary>
    int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written);

    /// <summary><c>BCryptDecrypt</c>, with the same conventions as <see cref="Encrypt"/>.</summary>
    int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written);

    /// <summary><c>BCryptDestroyKey(key)</c>. Called only by <see cref="CngCipher"/>.</summary>
    int DestroyKey(nint key);
}
