using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;
using CachedCryptography.Seam;
using CachedCryptography.Backends.Cng;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// A managed stand-in for <c>bcrypt.dll</c> that follows the documented CNG semantics, computed with stock
/// <see cref="Aes"/>: pseudo-handles (optional), opened AES providers with a <c>ChainingMode</c> property
/// (default CBC, value a NUL-terminated UTF-16 string whose byte count includes the NUL), keys that take
/// the provider's mode at creation, <c>BCryptEncrypt</c>/<c>BCryptDecrypt</c> that overwrite the caller's IV
/// buffer with the chaining value, and the documented error statuses. Misuse (double free, use after destroy,
/// closing a pseudo-handle) is recorded in <see cref="SimulatedNativeLayer.Violations"/> instead of crashing; the
/// bookkeeping shared with the other simulated layers is in <see cref="SimulatedNativeLayer"/>.
/// </summary>
/// <remarks>
/// Stricter than CNG where CNG is vague: an IV given to an ECB key, and partially overlapping input and
/// output buffers (only exact in-place is documented), are rejected with STATUS_INVALID_PARAMETER.
/// <see cref="SimulatedNativeLayer.ReportOneBlockShort"/>: encrypt and decrypt transform everything but report
/// 16 bytes fewer in <c>pcbResult</c>.
/// </remarks>
internal sealed class SimulatedCngApi() : SimulatedNativeLayer("key", firstHandle: 0x10000), ICngApi
{
    public const int STATUS_SUCCESS = 0;
    public const int STATUS_INVALID_HANDLE = unchecked((int)0xC0000008);
    public const int STATUS_INVALID_PARAMETER = unchecked((int)0xC000000D);
    public const int STATUS_NO_MEMORY = unchecked((int)0xC0000017);
    public const int STATUS_BUFFER_TOO_SMALL = unchecked((int)0xC0000023);
    public const int STATUS_NOT_SUPPORTED = unchecked((int)0xC00000BB);
    public const int STATUS_INVALID_BUFFER_SIZE = unchecked((int)0xC0000206);
    public const int STATUS_NOT_FOUND = unchecked((int)0xC0000225);

    /// <summary>
    /// What <c>BCRYPT_OBJECT_LENGTH</c> reports for an AES algorithm handle: a plausible size (the layer only checks that a
    /// caller's key object buffer is at least this large and is not used by two live keys at once).
    /// </summary>
    public const int AesObjectLength = 654;

    private readonly Dictionary<nint, Provider> _providers = [];

    // Key object buffers given by callers, by address: the live key made in each.
    private readonly Dictionary<nint, nint> _keyObjects = [];

    /// <summary>Whether the Windows 10 algorithm pseudo-handles work (false = older Windows: STATUS_INVALID_HANDLE).</summary>
    public bool PseudoHandlesSupported { get; init; } = true;

    /// <summary>
    /// Misbehave like Wine 8.0's bcrypt in CBC: the chaining value is kept in the key object, a call restarts at
    /// <c>pbIV</c> only when it differs from the IV passed in the previous call on that key, and <c>pbIV</c> is never
    /// written back. Status is success throughout, so one key used for two messages with the same IV gives a wrong
    /// second output. (Windows starts every call at <c>pbIV</c> and writes the chaining value back into it.)
    /// </summary>
    public bool Wine8CbcQuirk { get; init; }

    /// <summary>The algorithm handle of every key generation attempt.</summary>
    public List<nint> KeyAlgorithms { get; } = [];

    /// <summary>For every encrypt/decrypt call: the mode of the key and the IV length passed (0 = NULL).</summary>
    public List<(BlockCipherMode Mode, int IvLength)> CipherCalls { get; } = [];

    /// <summary>Each ChainingMode property set: the decoded value and its byte count.</summary>
    public List<(string Value, int ByteCount)> ChainingModesSet { get; } = [];

    /// <summary>Whether BCRYPT_OBJECT_LENGTH can be read (false: BCryptGetProperty fails, and keys are made in objects CNG allocates).</summary>
    public bool ObjectLengthSupported { get; init; } = true;

    /// <summary>For every key made: the size of the caller's key object buffer (0 = NULL, CNG allocates it).</summary>
    public List<int> KeyObjectLengths { get; } = [];

    /// <summary>For every key made: the address of the caller's key object buffer (0 = NULL, CNG allocates it).</summary>
    public List<nint> KeyObjectAddresses { get; } = [];

    /// <summary>Keys created and not yet destroyed: the layer's handles (providers are counted apart).</summary>
    public int LiveKeys => LiveHandles;

    public int LiveProviders { get { lock (Sync) { int n = 0; foreach (Provider p in _providers.Values) { if (!p.Closed) { n++; } } return n; } } }

    public int OpenedProviders { get { lock (Sync) { return _providers.Count; } } }

    public override void ForgetCalls()
    {
        lock (Sync)
        {
            base.ForgetCalls();
            KeyAlgorithms.Clear();
            CipherCalls.Clear();
            ChainingModesSet.Clear();
            KeyObjectLengths.Clear();
            KeyObjectAddresses.Clear();
        }
    }

    public int OpenAlgorithmProvider(string algorithmId, out nint algorithm)
    {
        lock (Sync)
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
        lock (Sync)
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
        lock (Sync)
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

    public int GetObjectLength(nint algorithm, out int length)
    {
        lock (Sync)
        {
            length = 0;
            if (Enter("BCryptGetProperty") is int injected)
            {
                return injected;
            }

            if (!ObjectLengthSupported)
            {
                return STATUS_NOT_SUPPORTED;
            }

            bool known = algorithm is 0x1A1 or 0x1B1
                ? PseudoHandlesSupported
                : _providers.TryGetValue(algorithm, out Provider? provider) && !provider.Closed;
            if (!known)
            {
                return STATUS_INVALID_HANDLE;
            }

            length = AesObjectLength;
            return STATUS_SUCCESS;
        }
    }

    public int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, CngCipher key)
    {
        lock (Sync)
        {
            KeyAlgorithms.Add(algorithm);
            KeyObjectLengths.Add(key.KeyObjectLength);
            KeyObjectAddresses.Add(key.KeyObject);
            RecordKeyAddress(secret);

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

            // A caller's key object: at least BCRYPT_OBJECT_LENGTH bytes, and holding no other live key.
            if (key.KeyObject != 0)
            {
                if (key.KeyObjectLength < AesObjectLength)
                {
                    return STATUS_BUFFER_TOO_SMALL;
                }

                if (_keyObjects.ContainsKey(key.KeyObject))
                {
                    Violations.Add($"BCryptGenerateSymmetricKey into key object 0x{key.KeyObject:X}, which a live key still uses");
                }
            }

            nint handle = Add(new Key(mode, secret) { KeyObject = key.KeyObject, Owner = new WeakReference<CngCipher>(key) });
            if (key.KeyObject != 0)
            {
                // Like CNG, keep the key's state in the caller's buffer: here a mark the audit checks while the key lives.
                _keyObjects[key.KeyObject] = handle;
                WriteMark(key.KeyObject, handle);
            }

            key.Attach(handle);
            return FailAfterCreate ? STATUS_NO_MEMORY : STATUS_SUCCESS;
        }
    }

    public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run("BCryptEncrypt", encrypt: true, key, input, iv, output, out written);

    public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        => Run("BCryptDecrypt", encrypt: false, key, input, iv, output, out written);

    public int DestroyKey(nint key)
    {
        lock (Sync)
        {
            // An injected failure leaves the key alive, and its key object in CNG's use.
            if (TakeInjected("BCryptDestroyKey") is int injected)
            {
                Calls.Add("BCryptDestroyKey");
                return injected;
            }

            foreach ((nint keyObject, nint owner) in _keyObjects)
            {
                if (owner == key)
                {
                    _keyObjects.Remove(keyObject);
                    break;
                }
            }

            return TryRelease(key, "BCryptDestroyKey") ? STATUS_SUCCESS : STATUS_INVALID_HANDLE;
        }
    }

    private int Run(string function, bool encrypt, nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
    {
        lock (Sync)
        {
            written = 0;
            if (Enter(function) is int injected)
            {
                return injected;
            }

            if (!TryGet(key, function, out Key? entry))
            {
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
            if (PartiallyOverlap(function, input, output[..input.Length]))
            {
                return STATUS_INVALID_PARAMETER;
            }

            // Work on copies so that in-place operation behaves as with the real library.
            byte[] source = input.ToArray();
            byte[] result = new byte[source.Length];
            bool ecb = entry.Mode == BlockCipherMode.Ecb;
            if (!ecb && source.Length > 0 && Wine8CbcQuirk)
            {
                // The chain lives in the key object; it restarts at pbIV only when pbIV differs from the previous call's.
                if (entry.LastIv is null || !iv.SequenceEqual(entry.LastIv))
                {
                    entry.LastIv = iv.ToArray();
                    iv.CopyTo(entry.Chain);
                }

                Transform(entry.Aes, ecb, encrypt, source, result, entry.Chain);
            }
            else
            {
                // Windows: every call starts at pbIV and writes the chaining value back into it.
                Transform(entry.Aes, ecb, encrypt, source, result, iv);
            }

            result.CopyTo(output);
            written = result.Length - (ReportOneBlockShort ? 16 : 0);
            return STATUS_SUCCESS;
        }
    }

    /// <summary>
    /// Every live key made in a caller's key object must still have that buffer, untouched: CNG may free or reuse it only
    /// after the key is destroyed (Microsoft Learn, BCryptGenerateSymmetricKey, pbKeyObject). A key whose destroy failed
    /// is still live, so its buffer may never be freed, zeroed or reused.
    /// </summary>
    protected override void Audit()
    {
        foreach ((nint handle, NativeObject entry) in LiveObjects())
        {
            var key = (Key)entry;
            if (key.KeyObject == 0 || key.Audited || !key.Owner.TryGetTarget(out CngCipher? owner))
            {
                continue;
            }

            if (owner.KeyObject != key.KeyObject)
            {
                key.Audited = true;
                RecordViolation($"the key object 0x{key.KeyObject:X} of key 0x{handle:X}, which CNG did not destroy, was freed by its owner");
            }
            else if (!HasMark(key.KeyObject, handle))
            {
                key.Audited = true;
                RecordViolation($"the key object 0x{key.KeyObject:X} of key 0x{handle:X}, which CNG did not destroy, was overwritten");
            }
        }
    }

    private static unsafe void WriteMark(nint keyObject, nint handle) => *(long*)keyObject = ~(long)handle;

    private static unsafe bool HasMark(nint keyObject, nint handle) => *(long*)keyObject == ~(long)handle;

    private sealed class Provider
    {
        public BlockCipherMode Mode { get; set; } = BlockCipherMode.Cbc;

        public bool Closed { get; set; }
    }

    private sealed class Key(BlockCipherMode mode, ReadOnlySpan<byte> secret) : NativeObject(secret)
    {
        public BlockCipherMode Mode { get; } = mode;

        /// <summary>With <see cref="Wine8CbcQuirk"/>: the IV passed last (the chaining value is kept in <c>Chain</c>).</summary>
        public byte[]? LastIv { get; set; }

        /// <summary>The caller's key object buffer the key was made in, or 0.</summary>
        public nint KeyObject { get; init; }

        /// <summary>The handle that owns <see cref="KeyObject"/> (weakly: a dropped one must still be finalized).</summary>
        public required WeakReference<CngCipher> Owner { get; init; }

        /// <summary>Whether the audit already reported this key's buffer.</summary>
        public bool Audited { get; set; }
    }
}
