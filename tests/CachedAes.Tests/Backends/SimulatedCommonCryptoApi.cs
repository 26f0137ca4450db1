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
/// is accepted) is also recorded in <see cref="Violations"/>.
/// </summary>
/// <remarks>Thread-safe (one lock), so one instance can back several CachedAes instances.</remarks>
internal sealed class SimulatedCommonCryptoApi : ICommonCryptoApi, ISimulatedNativeLayer
{
    public const int kCCSuccess = 0;
    public const int kCCParamError = -4300;
    public const int kCCBufferTooSmall = -4301;
    public const int kCCMemoryFailure = -4302;
    public const int kCCAlignmentError = -4303;
    public const int kCCDecodeError = -4304;
    public const int kCCUnimplemented = -4305;

    private readonly object _lock = new();
    private readonly Dictionary<nint, Cryptor> _cryptors = [];
    private readonly Dictionary<string, Queue<int?>> _injected = [];
    private nint _nextHandle = 0x20000;

    /// <summary>Every call, in order, by CommonCrypto function name.</summary>
    public List<string> Calls { get; } = [];

    /// <summary>Misuse the real library would punish. Must stay empty.</summary>
    public List<string> Violations { get; } = [];

    /// <summary>The address of the key buffer passed to each create call.</summary>
    public List<nint> KeyAddresses { get; } = [];

    /// <summary>
    /// When true, <c>CCCryptorUpdate</c> holds the last whole block back (as a padded decryptor would):
    /// used to check that the caller notices a short <c>dataOutMoved</c>.
    /// </summary>
    public bool HoldBackLastBlock { get; set; }

    public int LiveCryptors { get { lock (_lock) { int n = 0; foreach (Cryptor c in _cryptors.Values) { if (!c.Released) { n++; } } return n; } } }

    int ISimulatedNativeLayer.LiveHandles => LiveCryptors;

    IReadOnlyList<string> ISimulatedNativeLayer.Violations { get { lock (_lock) { return [.. Violations]; } } }

    /// <summary>Makes a future call of <paramref name="function"/> return <paramref name="status"/>, after <paramref name="skip"/> normal calls.</summary>
    public void Inject(string function, int status, int skip = 0)
    {
        lock (_lock)
        {
            if (!_injected.TryGetValue(function, out Queue<int?>? queue))
            {
                _injected[function] = queue = new Queue<int?>();
            }

            for (int i = 0; i < skip; i++)
            {
                queue.Enqueue(null);
            }

            queue.Enqueue(status);
        }
    }

    /// <summary>How many times <c>CCCryptorReset</c> was called.</summary>
    public int ResetCalls { get { lock (_lock) { return Calls.FindAll(c => c == "CCCryptorReset").Count; } } }

    public unsafe int CreateWithMode(uint operation, uint mode, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> key, SafeCCCryptorHandle cryptor)
    {
        lock (_lock)
        {
            fixed (byte* p = key)
            {
                KeyAddresses.Add((nint)p);
            }

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

            Aes aes = Aes.Create();
            aes.Key = key.ToArray();
            var entry = new Cryptor(operation == 0, mode == 1, aes);
            if (mode == 2 && !iv.IsEmpty)
            {
                iv.CopyTo(entry.Chain);
            }

            nint handle = _nextHandle += 0x10;
            _cryptors[handle] = entry;
            cryptor.Attach(handle);
            return kCCSuccess;
        }
    }

    public int Update(nint cryptor, ReadOnlySpan<byte> input, Span<byte> output, out nuint moved)
    {
        lock (_lock)
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
            if (input.Overlaps(output, out int offset) && offset != 0)
            {
                Violations.Add($"CCCryptorUpdate with partially overlapping input and output (offset {offset})");
                return kCCParamError;
            }

            byte[] combined = [.. entry.Pending, .. input];
            int whole = combined.Length / 16 * 16;
            if (HoldBackLastBlock && whole > 0)
            {
                whole -= 16;
            }

            if (output.Length < whole)
            {
                return kCCBufferTooSmall;
            }

            byte[] source = combined[..whole];
            byte[] result = new byte[whole];
            if (whole > 0)
            {
                if (entry.Ecb)
                {
                    _ = entry.Encrypt
                        ? entry.Aes.EncryptEcb(source, result, PaddingMode.None)
                        : entry.Aes.DecryptEcb(source, result, PaddingMode.None);
                }
                else if (entry.Encrypt)
                {
                    _ = entry.Aes.EncryptCbc(source, entry.Chain, result, PaddingMode.None);
                    result.AsSpan(^16).CopyTo(entry.Chain);
                }
                else
                {
                    _ = entry.Aes.DecryptCbc(source, entry.Chain, result, PaddingMode.None);
                    source.AsSpan(^16).CopyTo(entry.Chain);
                }
            }

            entry.Pending = combined[whole..];
            result.CopyTo(output);
            moved = (nuint)whole;
            return kCCSuccess;
        }
    }

    public int Reset(nint cryptor, ReadOnlySpan<byte> iv)
    {
        lock (_lock)
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
        lock (_lock)
        {
            Calls.Add("CCCryptorRelease");
            if (!_cryptors.TryGetValue(cryptor, out Cryptor? entry) || entry.Released)
            {
                Violations.Add($"CCCryptorRelease on an unknown or released cryptor 0x{cryptor:X} (double free)");
                return kCCParamError;
            }

            entry.Released = true;
            entry.Aes.Dispose();
            return kCCSuccess;
        }
    }

    private bool TryGet(nint cryptor, string function, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out Cryptor? entry)
    {
        nint handle = cryptor;
        if (!_cryptors.TryGetValue(handle, out entry) || entry.Released)
        {
            Violations.Add($"{function} on an unknown or released cryptor 0x{handle:X}");
            entry = null;
            return false;
        }

        return true;
    }

    private int? Enter(string function)
    {
        Calls.Add(function);
        return _injected.TryGetValue(function, out Queue<int?>? queue) && queue.Count > 0 ? queue.Dequeue() : null;
    }

    private sealed class Cryptor(bool encrypt, bool ecb, Aes aes)
    {
        public bool Encrypt { get; } = encrypt;

        public bool Ecb { get; } = ecb;

        public Aes Aes { get; } = aes;

        public byte[] Chain { get; } = new byte[16];

        public byte[] Pending { get; set; } = [];

        public bool Released { get; set; }
    }
}
