using System;

namespace CachedCryptography.Backends.CommonCrypto;

/// <summary>
/// The thin native-call layer under the CommonCrypto backend: one method per CommonCrypto call, no policy.
/// The real implementation is <see cref="CommonCryptoApi"/>; tests substitute a simulated layer that
/// follows the documented semantics, so the managed logic above it runs on any OS.
/// </summary>
/// <remarks>Every method returns the call's <c>CCCryptorStatus</c> (0 = <c>kCCSuccess</c>) and never throws for a native failure.</remarks>
internal interface ICommonCryptoApi
{
    /// <summary>
    /// <c>CCCryptorCreateWithMode(operation, mode, kCCAlgorithmAES, ccNoPadding, iv, key, key.Length, NULL, 0, 0, 0, &amp;ref)</c>;
    /// an empty <paramref name="iv"/> is passed as NULL. On success the new cryptor is attached to
    /// <paramref name="cryptor"/>, which then owns it.
    /// </summary>
    int CreateWithMode(uint operation, uint mode, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> key, SafeCCCryptorHandle cryptor);

    /// <summary>
    /// <c>CCCryptorUpdate(cryptor, input, input.Length, output, output.Length, &amp;moved)</c>. <paramref name="cryptor"/> is
    /// the raw reference: its owner (a <see cref="SafeCCCryptorHandle"/>) keeps it alive for the call, so no reference is
    /// counted per call.
    /// </summary>
    int Update(nint cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved);

    /// <summary><c>CCCryptorReset(cryptor, iv)</c>; <paramref name="iv"/> is 16 bytes.</summary>
    int Reset(nint cryptor, ReadOnlySpan<byte> iv);

    /// <summary><c>CCCryptorRelease(cryptor)</c>. Called only by <see cref="SafeCCCryptorHandle"/>.</summary>
    int Release(nint cryptor);
}
