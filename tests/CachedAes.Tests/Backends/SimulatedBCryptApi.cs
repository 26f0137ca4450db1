using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;
using CachedCryptography.Seam;
using CachedCryptography.Interop.Cng;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A managed stand-in for <c>bcrypt.dll</c> that follows the documented CNG semantics, computed with stock
/// <see cref="Aes"/>: pseudo-handles (optional), opened AES providers with a <c>ChainingMode</c> property
/// (default CBC, value a NUL-terminated UTF-16 string whose byte count includes the NUL), keys that take
/// the provider's mode at creation, <c>BCryptEncrypt</c>/<c>BCryptDecrypt</c> that overwrite the caller's IV
/// buffer with the chaining value, and the documented error statuses. Handle tables record misuse
/// (double free, use after destroy, closing a pseudo-handle) in <see cref="Violations"/> instead of crashing.
/// </summary>
/// <remarks>
/// Stricter than CNG where CNG is vague: an IV given to an ECB key, and partially overlapping input and
/// output buffers (only exact in-place is documented), are rejected with STATUS_INVALID_PARAMETER.
/// Thread-safe (one lock), so one instance can back several CachedAes instances.
/// </remarks>
internal sealed class SimulatedBCryptApi : IBCryptApi, ISimulatedNativeLayer
{
    public const int STATUS_SUCCESS = 0;
    public const int STATUS_INVALID_HANDLE = unchecked((int)0xC0000008);
    public const int STATUS_INVALID_PARAMETER = unchecked((int)0xC000000D);
    public const int STATUS_NO_MEMORY = unchecked((int)0xC0000017);
    public const int STATUS_BUFFER_TOO_SMALL = unchecked((int)0xC0000023);
    public const int STATUS_NOT_SUPPORTED = unchecked((int)0xC00000BB);
    public const int STATUS_INVALID_BUFFER_SIZE = unchecked((int)0xC0000206);
    public const int STATUS_NOT_FOUND = unchecked((int)0xC0000225);

    private readonly object _lock = new();
    private readonly Dictionary<nint, Provider> _providers = [];
    private readonly Dictionary<nint, Key> _keys = [];
    private readonly Dictionary<string, Queue<int?>> _injected = [];
    private nint _nextHandle = 0x10000;

    /// <summary>Whether the Windows 10 algorithm pseudo-handles work (false = older Windows: STATUS_INVALID_HANDLE).</summary>
    public bool PseudoHandlesSupported { get; init; } = true;

    /// <summary>
    /// Misbehave like Wine 8.0's bcrypt in CBC: the chaining value is kept in the key object, a call restarts at
    /// <c>pbIV</c> only when it differs from the IV passed in the previous call on that key, and <c>pbIV</c> is never
    /// written back. Status is success throughout, so one key used for two messages with the same IV gives a wrong
    /// second output. (Windows starts every call at <c>pbIV</c> and writes the chaining value back into it.)
    /// </summary>
    public bool Wine8CbcQuirk { get; init; }

    /// <summary>Every call, in order, by CNG function name.</summary>
    public List<string> Calls { get; } = [];

    /// <summary>Misuse the real library would punish (double free, use after destroy, ...). Must stay empty.</summary>
    public List<string> Violations { get; } = [];

    /// <summary>The algorithm handle of every key generation attempt.</summary>
    public List<nint> KeyAlgorithms { get; } = [];

    /// <summary>For every encrypt/decrypt call: the mode of the key and the IV length passed (0 = NULL).</summary>
    public List<(BlockCipherMode Mode, int IvLength)> CipherCalls { get; } = [];

    /// <summary>Each ChainingMode property set: the decoded value and its byte count.</summary>
    public List<(string Value, int ByteCount)> ChainingModesSet { get; } = [];

    /// <summary>The address of the secret buffer passed to each key generation.</summary>
    public List<nint> SecretAddresses { get; } = [];

    public int LiveKeys { get { lock (_lock) { return CountLive(_keys.Values); } } }

    public int LiveProviders { get { lock (_lock) { int n = 0; foreach (Provider p in _providers.Values) { if (!p.Closed) { n++; } } return n; } } }

    public int OpenedProviders { get { lock (_lock) { return _providers.Count; } } }

    int ISimulatedNativeLayer.LiveHandles => LiveKeys;

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

    public int OpenAlgorithmProvider(string algorithmId, out nint algorithm)
    {
        lock (_lock)
        {
            algorithm = 0;
            if (Enter("BCryptOpenAlgorithmProvider") is int injected)
            {
                return injected;
            }

            if (algorithmId != "AES")
            {
                return STATUS_NOT_FOUND;
            }

            algorithm = NewHandle();
            _providers[algorithm] = new Provider();
            return STATUS_SUCCESS;
        }
    }

    public int SetProperty(nint handle, string property, ReadOnlySpan<byte> value)
    {
        lock (_lock)
        {
            if (Enter("BCryptSetProperty") is int injected)
            {
                return injected;
            }

            if (!_providers.TryGetValue(handle, out Provider? provider) || provider.Closed)
            {
                Violations.Add($"BCryptSetProperty on an unknown or closed handle 0x{handle:X}");
                return STATUS_INVALID_HANDLE;
            }

            if (property != "ChainingMode")
            {
                return STATUS_NOT_SUPPORTED;
            }

            // A NUL-terminated UTF-16 string, the byte count including the NUL.
            if (value.Length < 2 || value.Length % 2 != 0 || value[^1] != 0 || value[^2] != 0)
            {
                return STATUS_INVALID_PARAMETER;
            }

            string text = Encoding.Unicode.GetString(value[..^2]);
            if (text.Contains('\0', StringComparison.Ordinal))
            {
                return STATUS_INVALID_PARAMETER;
            }

            ChainingModesSet.Add((text, value.Length));
            switch (text)
            {
                case "ChainingModeECB":
                    provider.Mode = BlockCipherMode.Ecb;
                    return STATUS_SUCCESS;
                case "ChainingModeCBC":
                    provider.Mode = BlockCipherMode.Cbc;
                    return STATUS_SUCCESS;
                default:
                    return STATUS_NOT_SUPPORTED;
            }
        }
    }

    public int CloseAlgorithmProvider(nint algorithm)
    {
        lock (_lock)
        {
            Calls.Add("BCryptCloseAlgorithmProvider");
            if (algorithm is 0x1A1 or 0x1B1)
            {
                Violations.Add("BCryptCloseAlgorithmProvider on a pseudo-handle");
                return STATUS_INVALID_HANDLE;
            }

            if (!_providers.TryGetValue(algorithm, out Provider? provider) || provider.Closed)
            {
                Violations.Add($"BCryptCloseAlgorithmProvider on an unknown or closed handle 0x{algorithm:X}");
                return STATUS_INVALID_HANDLE;
            }

            provider.Closed = true;
            return STATUS_SUCCESS;
        }
    }

    public unsafe int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, SafeBCryptKeyHandle key)
    {
        lock (_lock)
        {
            KeyAlgorithms.Add(algorithm);
            fixed (byte* p = secret)
            {
                SecretAddresses.Add((nint)p);
            }

            if (Enter("BCryptGenerateSymmetricKey") is int injected)
            {
                return injected;
            }

            BlockCipherMode mode;
            if (algorithm is 0x1A1 or 0x1B1)
            {
                if (!PseudoHandlesSupported)
                {
                    return STATUS_INVALID_HANDLE;
                }

                mode = algorithm == 0x1B1 ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
            }
            else if (_providers.TryGetValue(algorithm, out Provider? provider) && !provider.Closed)
            {
                mode = provider.Mode;
            }
            else
            {
                return STATUS_INVALID_HANDLE;
            }

            if (secret.Length is not (16 or 24 or 32))
            {
                return STATUS_INVALID_PARAMETER;
            }

            Aes aes = Aes.Create();
            aes.Key = secret.ToArray();
            nint handle = NewHandle();
            _keys[handle] = new Key(mode, aes);
            key.Attach(handle);
            return STATUS_SUCCESS;
        }
    }

    public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run("BCryptEncrypt", encrypt: true, key, input, iv, output, out written);

    public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run("BCryptDecrypt", encrypt: false, key, input, iv, output, out written);

    public int DestroyKey(nint key)
    {
        lock (_lock)
        {
            Calls.Add("BCryptDestroyKey");
            if (!_keys.TryGetValue(key, out Key? entry) || entry.Destroyed)
            {
                Violations.Add($"BCryptDestroyKey on an unknown or destroyed key 0x{key:X} (double free)");
                return STATUS_INVALID_HANDLE;
            }

            entry.Destroyed = true;
            entry.Aes.Dispose();
            return STATUS_SUCCESS;
        }
    }

    private int Run(string function, bool encrypt, nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
    {
        lock (_lock)
        {
            written = 0;
            if (Enter(function) is int injected)
            {
                return injected;
            }

            nint handle = key;
            if (!_keys.TryGetValue(handle, out Key? entry) || entry.Destroyed)
            {
                Violations.Add($"{function} with an unknown or destroyed key 0x{handle:X}");
                return STATUS_INVALID_HANDLE;
            }

            CipherCalls.Add((entry.Mode, iv.Length));
            if (input.Length % 16 != 0)
            {
                return STATUS_INVALID_BUFFER_SIZE;
            }

            if (output.Length < input.Length)
            {
                return STATUS_BUFFER_TOO_SMALL;
            }

            if (entry.Mode == BlockCipherMode.Ecb ? !iv.IsEmpty : iv.Length != 16)
            {
                return STATUS_INVALID_PARAMETER;
            }

            // CNG documents exact in-place operation; partially overlapping buffers are not supported.
            if (input.Overlaps(output[..input.Length], out int offset) && offset != 0)
            {
                Violations.Add($"{function} with partially overlapping input and output (offset {offset})");
                return STATUS_INVALID_PARAMETER;
            }

            // Work on copies so that in-place operation behaves as with the real library.
            byte[] source = input.ToArray();
            byte[] result = new byte[source.Length];
            if (entry.Mode == BlockCipherMode.Ecb)
            {
                _ = encrypt
                    ? entry.Aes.EncryptEcb(source, result, PaddingMode.None)
                    : entry.Aes.DecryptEcb(source, result, PaddingMode.None);
            }
            else if (source.Length > 0 && Wine8CbcQuirk)
            {
                if (entry.LastIv is null || !iv.SequenceEqual(entry.LastIv))
                {
                    entry.LastIv = iv.ToArray();
                    iv.CopyTo(entry.Chain);
                }

                if (encrypt)
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
            else if (source.Length > 0)
            {
                if (encrypt)
                {
                    _ = entry.Aes.EncryptCbc(source, iv, result, PaddingMode.None);
                    result.AsSpan(^16).CopyTo(iv);
                }
                else
                {
                    _ = entry.Aes.DecryptCbc(source, iv, result, PaddingMode.None);
                    source.AsSpan(^16).CopyTo(iv);
                }
            }

            result.CopyTo(output);
            written = result.Length;
            return STATUS_SUCCESS;
        }
    }

    private int? Enter(string function)
    {
        Calls.Add(function);
        return _injected.TryGetValue(function, out Queue<int?>? queue) && queue.Count > 0 ? queue.Dequeue() : null;
    }

    private nint NewHandle() => _nextHandle += 0x10;

    private static int CountLive(IEnumerable<Key> keys)
    {
        int n = 0;
        foreach (Key k in keys)
        {
            if (!k.Destroyed)
            {
                n++;
            }
        }

        return n;
    }

    private sealed class Provider
    {
        public BlockCipherMode Mode { get; set; } = BlockCipherMode.Cbc;

        public bool Closed { get; set; }
    }

    private sealed class Key(BlockCipherMode mode, Aes aes)
    {
        public BlockCipherMode Mode { get; } = mode;

        public Aes Aes { get; } = aes;

        public bool Destroyed { get; set; }

        /// <summary>With <see cref="Wine8CbcQuirk"/>: the IV passed last, and the chaining value kept in the key.</summary>
        public byte[]? LastIv { get; set; }

        public byte[] Chain { get; } = new byte[16];
    }
}
