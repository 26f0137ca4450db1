using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Interop.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A managed stand-in for CommonCrypto's cryptor API that follows its documented semantics, computed with
/// stock <see cref="Aes"/>: a NULL IV means all zeroes; with <c>ccNoPadding</c>, <c>CCCryptorUpdate</c>
/// outputs every whole block and buffers a partial one (returning <c>kCCBufferTooSmall</c>, with no state
/// lost, when the output is too short); CBC keeps its chaining value between updates;
/// <c>CCCryptorReset</c> on an ECB cryptor returns <c>kCCUnimplemented</c> (macOS 10.13+). Misuse
/// (double release, use after release, reset on ECB, partially overlapping buffers: only exact in-place
/// is accepted) is also recorded in <see cref="SimulatedNativeLayer.Violations"/>; the bookkeeping shared with
/// the other simulated layers is in <see cref="SimulatedNativeLayer"/>.
/// </summary>
/// <remarks>
/// <see cref="SimulatedNativeLayer.ReportOneBlockShort"/>: <c>CCCryptorUpdate</c> holds the last whole block back,
/// as a padded decryptor would, and reports the shorter <c>dataOutMoved</c>.
/// </remarks>
internal sealed class SimulatedCommonCryptoApi() : SimulatedNativeLayer("cryptor", firstHandle: 0x20000), ICommonCryptoApi
{
    public const int kCCSuccess = 0;
    public const int kCCParamError = -4300;
    public const int kCCBufferTooSmall = -4301;
    public const int kCCMemoryFailure = -4302;
    public const int kCCAlignmentError = -4303;
    public const int kCCDecodeError = -4304;
    public const int kCCUnimplemented = -4305;

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

            if (operation is not (0 or 1) || key.Length is not (16 or 24 or 32) || (!iv.IsEmpty && iv.Length != 16))
            {
                return kCCParamError;
            }

            if (mode is not (1 or 2))
            {
                return kCCUnimplemented;
            }

            var entry = new Cryptor(operation == 0, mode == 1, key);
            if (mode == 2 && !iv.IsEmpty)
            {
                iv.CopyTo(entry.Chain);
            }

            cryptor.Attach(Add(entry));
            return FailAfterCreate ? kCCMemoryFailure : kCCSuccess;
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

            // Only exact in-place operation is supported; partially overlapping buffers are refused.
            if (PartiallyOverlap("CCCryptorUpdate", input, output))
            {
                return kCCParamError;
            }

            byte[] combined = [.. entry.Pending, .. input];
            int whole = combined.Length / 16 * 16;
            if (ReportOneBlockShort && whole > 0)
            {
                whole -= 16;
            }

            if (output.Length < whole)
            {
                return kCCBufferTooSmall;
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
