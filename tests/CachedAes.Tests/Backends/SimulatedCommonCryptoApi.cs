using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Backends.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A managed stand-in for CommonCrypto's cryptor API, computed with stock <see cref="Aes"/>, as strict as Apple's own
/// implementation (CommonCryptor.c, CommonCrypto-600035) wherever CachedAes depends on it:
/// <list type="bullet">
/// <item><c>CCCryptorCreateWithMode</c> returns <c>kCCKeySizeError</c> for a key of no AES size, and on any failure hands
/// back no cryptor (CommonCryptor.c frees what it allocated and sets <c>*cryptorRef</c> to NULL); a NULL IV means all
/// zeroes.</item>
/// <item><c>CCCryptorUpdate</c> with <c>ccNoPadding</c> outputs every whole block and buffers a partial one, reporting the
/// shorter <c>dataOutMoved</c> (it never returns <c>kCCAlignmentError</c>: only <c>CCCryptorFinal</c> does); when the
/// output is too short it returns <c>kCCBufferTooSmall</c> with the length needed in <c>dataOutMoved</c>, and no state
/// lost; CBC keeps its chaining value between updates.</item>
/// <item><c>CCCryptorUpdate</c> in place, or with overlapping buffers, is refused (<c>kCCParamError</c>) and recorded:
/// CommonCryptor.h says in-place operation is not supported for block modes such as CBC and ECB, so a caller must not
/// rely on it whatever the library happens to do.</item>
/// <item><c>CCCryptorReset</c> on an ECB cryptor returns <c>kCCUnimplemented</c> (macOS 10.13+).</item>
/// </list>
/// Misuse (double release, use after release, reset on ECB, in-place or overlapping buffers) is also recorded in
/// <see cref="SimulatedNativeLayer.Violations"/>; the bookkeeping shared with the other simulated layers is in
/// <see cref="SimulatedNativeLayer"/>.
/// </summary>
/// <remarks>
/// Two failures on request, beyond injected statuses: <see cref="SimulatedNativeLayer.FailAfterCreate"/> makes the create
/// call fail after it allocated the cryptor (which it then frees itself, as CommonCryptor.c does, handing back none);
/// <see cref="SimulatedNativeLayer.ReportOneBlockShort"/> makes <c>CCCryptorUpdate</c> keep the last whole block back and
/// report the shorter <c>dataOutMoved</c>, which CommonCryptor.c does only for a partial block (or a padded decryptor):
/// a fault injected so that a caller can be checked for noticing a short output count.
/// </remarks>
internal sealed class SimulatedCommonCryptoApi() : SimulatedNativeLayer("cryptor", firstHandle: 0x20000), ICommonCryptoApi
{
    // CommonCryptoError.h: every CCCryptorStatus.
    public const int kCCSuccess = 0;
    public const int kCCParamError = -4300;
    public const int kCCBufferTooSmall = -4301;
    public const int kCCMemoryFailure = -4302;
    public const int kCCAlignmentError = -4303;
    public const int kCCDecodeError = -4304;
    public const int kCCUnimplemented = -4305;
    public const int kCCOverflow = -4306;
    public const int kCCRNGFailure = -4307;
    public const int kCCUnspecifiedError = -4308;
    public const int kCCCallSequenceError = -4309;
    public const int kCCKeySizeError = -4310;
    public const int kCCInvalidKey = -4311;

    /// <summary>How many times <c>CCCryptorReset</c> was called.</summary>
    public int ResetCalls { get { lock (Sync) { return Calls.FindAll(c => c == "CCCryptorReset").Count; } } }

    public int CreateWithMode(uint operation, uint mode, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> key, SafeCCCryptorHandle cryptor)
    {
        lock (Sync)
        {
            RecordKeyAddress(key);

            if (Enter("CCCryptorCreateWithMode") is int injected)
            {
                return injected;
            }

            // The order of CommonCryptor.c's checks: the operation and mode (ccSetupCryptor), then the key size (ccInitCryptor).
            if (operation is not (0 or 1) || (!iv.IsEmpty && iv.Length != 16))
            {
                return kCCParamError;
            }

            if (mode is not (1 or 2))
            {
                return kCCUnimplemented;
            }

            if (key.Length is not (16 or 24 or 32))
            {
                return kCCKeySizeError;
            }

            if (FailAfterCreate)
            {
                // CommonCryptor.c frees a cryptor whose setup failed and hands back NULL: nothing reaches the caller.
                return kCCMemoryFailure;
            }

            var entry = new Cryptor(operation == 0, mode == 1, key);
            if (mode == 2 && !iv.IsEmpty)
            {
                iv.CopyTo(entry.Chain);
            }

            cryptor.Attach(Add(entry));
            return kCCSuccess;
        }
    }

    public int Update(nint cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved)
    {
        lock (Sync)
        {
            moved = 0;
            if (Enter("CCCryptorUpdate") is int injected)
            {
                return injected;
            }

            if (!TryGet(cryptor, "CCCryptorUpdate", out Cryptor? entry))
            {
                return kCCParamError;
            }

            if (input.IsEmpty)
            {
                return kCCSuccess;
            }

            // With ccNoPadding the output is the whole blocks of what is buffered and given; when it does not fit, the
            // length needed is reported in dataOutMoved and nothing is consumed.
            int pending = entry.Pending.Length;
            int whole = (pending + input.Length) / 16 * 16;
            if (output.Length < whole)
            {
                moved = (nuint)whole;
                return kCCBufferTooSmall;
            }

            if (input.Overlaps(output, out int offset))
            {
                Violations.Add(offset == 0
                    ? "CCCryptorUpdate in place (CommonCryptor.h: not supported for block modes such as ECB and CBC)"
                    : $"CCCryptorUpdate with overlapping input and output (offset {offset})");
                return kCCParamError;
            }

            byte[] combined = [.. entry.Pending, .. input];
            if (ReportOneBlockShort && whole > 0)
            {
                whole -= 16;
            }

            byte[] source = combined[..whole];
            byte[] result = new byte[whole];
            Transform(entry.Aes, entry.Ecb, entry.Encrypt, source, result, entry.Chain);
            entry.Pending = combined[whole..];
            result.CopyTo(output);
            moved = (nuint)whole;
            return kCCSuccess;
        }
    }

    public int Reset(nint cryptor, ReadOnlySpan<byte> iv)
    {
        lock (Sync)
        {
            if (Enter("CCCryptorReset") is int injected)
            {
                return injected;
            }

            if (!TryGet(cryptor, "CCCryptorReset", out Cryptor? entry))
            {
                return kCCParamError;
            }

            if (entry.Ecb)
            {
                Violations.Add("CCCryptorReset on an ECB cryptor (kCCUnimplemented on macOS 10.13+)");
                return kCCUnimplemented;
            }

            entry.Pending = [];
            if (iv.IsEmpty)
            {
                Array.Clear(entry.Chain);
            }
            else
            {
                iv[..16].CopyTo(entry.Chain);
            }

            return kCCSuccess;
        }
    }

    public int Release(nint cryptor)
    {
        lock (Sync)
        {
            return TryRelease(cryptor, "CCCryptorRelease") ? kCCSuccess : kCCParamError;
        }
    }

    private sealed class Cryptor(bool encrypt, bool ecb, ReadOnlySpan<byte> key) : NativeObject(key)
    {
        public bool Encrypt { get; } = encrypt;

        public bool Ecb { get; } = ecb;

        /// <summary>Input bytes short of a whole block, kept for the next update.</summary>
        public byte[] Pending { get; set; } = [];
    }
}
