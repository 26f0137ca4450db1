using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// What every simulated native layer does the same way, whichever library it stands in for: one lock around every
/// call, a log of the calls, a table of the native handles it gave out with the misuse the real library would punish
/// (a call on an unknown or released handle, a double release, partially overlapping buffers) recorded in
/// <see cref="Violations"/> instead of crashing, failures injected on request, the key buffers it was handed, and
/// the AES itself computed with stock <see cref="Aes"/>. Each subclass follows one API's documented semantics on top
/// of this: <see cref="SimulatedCngApi"/> (CNG) and <see cref="SimulatedCommonCryptoApi"/> (CommonCrypto).
/// </summary>
/// <remarks>Thread-safe (one lock), so one instance can back several CachedAes instances.</remarks>
internal abstract class SimulatedNativeLayer : ISimulatedNativeLayer
{
    private readonly Dictionary<nint, NativeObject> _handles = [];
    private readonly List<string> _violations = [];
    private readonly Dictionary<string, Queue<int?>> _injected = [];
    private readonly string _handleKind;
    private nint _nextHandle;

    /// <param name="handleKind">What the library calls its handle ("key", "cryptor"), for the violation messages.</param>
    /// <param name="firstHandle">Where the handle values start (different per layer, so a handle from one layer never
    /// looks valid to another).</param>
    protected SimulatedNativeLayer(string handleKind, nint firstHandle)
    {
        _handleKind = handleKind;
        _nextHandle = firstHandle;
    }

    /// <summary>Every call, in order, by native function name.</summary>
    public List<string> Calls { get; } = [];

    /// <summary>
    /// Misuse the real library would punish (double free, use after free, ...). Must stay empty. Reading it first runs
    /// the layer's audit of state it cannot see at the calls (see <see cref="Audit"/>).
    /// </summary>
    public List<string> Violations
    {
        get
        {
            lock (Sync)
            {
                Audit();
                return _violations;
            }
        }
    }

    /// <summary>The address of the key buffer passed to each create call (its key bytes are the AES key).</summary>
    public List<nint> KeyAddresses { get; } = [];

    /// <summary>
    /// When true, every transform call reports one block fewer than its input although it succeeded, so a caller can
    /// be checked for noticing a short output count. How it comes about follows the API: see the subclass.
    /// </summary>
    public bool ReportOneBlockShort { get; set; }

    /// <summary>
    /// When true, the create call makes the native handle and attaches it to its owner, then reports a memory failure
    /// anyway, so a caller can be checked for still freeing a handle that exists when the call failed.
    /// </summary>
    public bool FailAfterCreate { get; set; }

    /// <summary>Native handles created and not yet released.</summary>
    public int LiveHandles
    {
        get
        {
            lock (Sync)
            {
                int live = 0;
                foreach (NativeObject entry in _handles.Values)
                {
                    live += entry.Released ? 0 : 1;
                }

                return live;
            }
        }
    }

    IReadOnlyList<string> ISimulatedNativeLayer.Violations { get { lock (Sync) { return [.. Violations]; } } }

    /// <summary>The lock every call of the layer holds.</summary>
    protected object Sync { get; } = new();

    /// <summary>
    /// Forgets the calls logged so far (and what the subclass records per call), keeping every handle and violation: for a
    /// test that starts its count after setting up a backend, whose probe calls the layer.
    /// </summary>
    public virtual void ForgetCalls()
    {
        lock (Sync)
        {
            Calls.Clear();
            KeyAddresses.Clear();
        }
    }

    /// <summary>Makes a future call of <paramref name="function"/> return <paramref name="status"/>, after <paramref name="skip"/> normal calls.</summary>
    public void Inject(string function, int status, int skip = 0)
    {
        lock (Sync)
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

    /// <summary>Logs a call of <paramref name="function"/>; returns the status it must fail with when one was injected.</summary>
    protected int? Enter(string function)
    {
        Calls.Add(function);
        return TakeInjected(function);
    }

    /// <summary>The status the next call of <paramref name="function"/> must fail with when one was injected (not logged).</summary>
    protected int? TakeInjected(string function) =>
        _injected.TryGetValue(function, out Queue<int?>? queue) && queue.Count > 0 ? queue.Dequeue() : null;

    /// <summary>
    /// Checks, when <see cref="Violations"/> is read, what the layer can only see after the fact (for example memory the
    /// real library still owns that its caller freed), and records what it finds with <see cref="RecordViolation"/>.
    /// </summary>
    protected virtual void Audit()
    {
    }

    /// <summary>Records a violation from <see cref="Audit"/> (which must not read <see cref="Violations"/>).</summary>
    protected void RecordViolation(string violation) => _violations.Add(violation);

    /// <summary>The objects of the handle table that were not released, by handle.</summary>
    protected IEnumerable<KeyValuePair<nint, NativeObject>> LiveObjects()
    {
        foreach (KeyValuePair<nint, NativeObject> entry in _handles)
        {
            if (!entry.Value.Released)
            {
                yield return entry;
            }
        }
    }

    /// <summary>A fresh native handle value (also for objects the subclass keeps itself, such as CNG's providers).</summary>
    protected nint NewHandle() => _nextHandle += 0x10;

    /// <summary>Records where the caller's key buffer is.</summary>
    protected unsafe void RecordKeyAddress(ReadOnlySpan<byte> key)
    {
        fixed (byte* p = key)
        {
            KeyAddresses.Add((nint)p);
        }
    }

    /// <summary>Puts a new object in the handle table; returns its handle.</summary>
    protected nint Add(NativeObject entry)
    {
        nint handle = NewHandle();
        _handles[handle] = entry;
        return handle;
    }

    /// <summary>The live object behind <paramref name="handle"/>; false, with a violation recorded, when there is none.</summary>
    protected bool TryGet<TObject>(nint handle, string function, [NotNullWhen(true)] out TObject? entry)
        where TObject : NativeObject
    {
        if (_handles.TryGetValue(handle, out NativeObject? found) && !found.Released)
        {
            entry = (TObject)found;
            return true;
        }

        Violations.Add($"{function} on an unknown or released {_handleKind} 0x{handle:X}");
        entry = null;
        return false;
    }

    /// <summary>Logs a release call and releases <paramref name="handle"/>; false, with a violation recorded, for a double free.</summary>
    protected bool TryRelease(nint handle, string function)
    {
        Calls.Add(function);
        if (!_handles.TryGetValue(handle, out NativeObject? entry) || entry.Released)
        {
            Violations.Add($"{function} on an unknown or released {_handleKind} 0x{handle:X} (double free)");
            return false;
        }

        entry.Released = true;
        entry.Aes.Dispose();
        return true;
    }

    /// <summary>
    /// True, with a violation recorded, when <paramref name="input"/> and <paramref name="output"/> overlap other than
    /// exactly: both libraries document exact in-place operation only.
    /// </summary>
    protected bool PartiallyOverlap(string function, ReadOnlySpan<byte> input, ReadOnlySpan<byte> output)
    {
        if (input.Overlaps(output, out int offset) && offset != 0)
        {
            Violations.Add($"{function} with partially overlapping input and output (offset {offset})");
            return true;
        }

        return false;
    }

    /// <summary>
    /// Transforms whole blocks with stock AES, padding off: ECB, or CBC starting at <paramref name="chain"/>, which then
    /// holds the last ciphertext block (the chaining value the libraries keep or write back). Nothing for no input.
    /// </summary>
    protected static void Transform(Aes aes, bool ecb, bool encrypt, byte[] source, byte[] result, Span<byte> chain)
    {
        if (source.Length == 0)
        {
            return;
        }

        if (ecb)
        {
            _ = encrypt
                ? aes.EncryptEcb(source, result, PaddingMode.None)
                : aes.DecryptEcb(source, result, PaddingMode.None);
        }
        else if (encrypt)
        {
            _ = aes.EncryptCbc(source, chain, result, PaddingMode.None);
            result.AsSpan(^16).CopyTo(chain);
        }
        else
        {
            _ = aes.DecryptCbc(source, chain, result, PaddingMode.None);
            source.AsSpan(^16).CopyTo(chain);
        }
    }

    /// <summary>One native object in the handle table: its stock AES and whether it was released.</summary>
    protected abstract class NativeObject(ReadOnlySpan<byte> key)
    {
        /// <summary>Stock AES keyed with the key the object was created with.</summary>
        public Aes Aes { get; } = CreateAes(key);

        /// <summary>The chaining value the library keeps in its object between calls (where it keeps one).</summary>
        public byte[] Chain { get; } = new byte[16];

        public bool Released { get; set; }

        private static Aes CreateAes(ReadOnlySpan<byte> key)
        {
            Aes aes = Aes.Create();
            aes.Key = key.ToArray();
            return aes;
        }
    }
}
