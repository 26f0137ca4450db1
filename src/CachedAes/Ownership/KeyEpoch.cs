using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>Uses of a key: what <see cref="KeyEpoch.TryUseKey{TState, TResult}"/> hands a copy of the key to.</summary>
/// <typeparam name="TState">What the caller passes through (a struct, so nothing is allocated).</typeparam>
/// <typeparam name="TResult">What the use returns.</typeparam>
/// <param name="key">A copy of the key, zeroed after the call returns.</param>
/// <param name="version">The version of the key the copy was taken of.</param>
/// <param name="state">The caller's state.</param>
internal delegate TResult KeyUse<TState, TResult>(ReadOnlySpan<byte> key, int version, TState state);

/// <summary>
/// One key and what is made with it: the key bytes in a <see cref="KeyMemory"/>, the native handles keyed from them
/// (<c>KeyEpoch.Handles.cs</c>) and the stock instance for CFB (<c>KeyEpoch.Stock.cs</c>). A plain object, one per key,
/// with no finalizer.
/// </summary>
/// <remarks>
/// <para><b>Holders</b> (docs/design-notes.md, "Ownership", table E): the instance whose current key it is, and each
/// transform made with it. One state word counts them; the holder whose letting go brings it to zero closes the epoch,
/// once: it gives back the idle handles and closes the key memory. Only the instance, under its lifecycle lock, adds a
/// holder or lets go as the instance; a transform lets go in its <c>Dispose</c>. An epoch dropped with holders left (an
/// instance or transform never disposed) is closed by <see cref="Reclaimer"/> once the collector finds it unreachable.</para>
/// <para><b>Key changes in place.</b> While the instance is the only holder, a key change rewrites the key in the same
/// memory (<see cref="TryRewrite"/>) under a version that is odd while the bytes change, and the idle handles are re-keyed
/// or given back. Every handle records the version it was keyed with; a call takes only a handle of the current version,
/// and a transform only one of the version it was made with. Once a transform holds the key, the key is frozen for it: a
/// key change makes a new epoch instead.</para>
/// <para><b>Staying reachable.</b> Every method that changes the epoch's state or its memory's keeps the epoch reachable
/// until the change is made (<see cref="GC.KeepAlive"/> after it): the reclaimer closes a memory on its owner's behalf
/// only once the collector has found the owner unreachable, which must mean the owner will never act again. Without
/// that, an epoch whose last reference was the frame closing it could be found unreachable in the middle of its own
/// close (docs/design-notes.md, "Ownership", the root cause of the hang of issue 41).</para>
/// </remarks>
internal sealed partial class KeyEpoch
{
    // Table E: bit 0, the instance holds the epoch; bits 1 and up, how many transforms hold it; zero once closed, for good.
    // 64 bits: a transform dropped without Dispose never lets go, and a long-lived key can see billions of those.
    private const long InstanceHolds = 1;
    private const long OneTransform = 2;
    private long _holders;

    private readonly CipherBackend _backend;
    private readonly KeyMemory _memory;
    private readonly long _generation;

    // Even while the key is stable; odd while a rewrite writes it. 32 bits: a handle of an older version is given up when
    // it comes back, and every idle one at each key change, so a version could only repeat for a call that stayed in
    // flight across 2^31 key changes.
    private int _version;

    // 16, 24 or 32: a byte, so that the epoch's fields fit in 56 bytes (one epoch per key, so a new instance per message
    // allocates one per message).
    private byte _length;

    /// <summary>An epoch holding a copy of <paramref name="key"/> (16, 24 or 32 bytes, validated by the caller).</summary>
    /// <param name="backend">Makes the epoch's handles.</param>
    /// <param name="key">The key (a private copy: read once).</param>
    /// <param name="heldByInstance">True for an instance's key; false for a transform's own (held by the transform).</param>
    public KeyEpoch(CipherBackend backend, ReadOnlySpan<byte> key, bool heldByInstance)
    {
        _backend = backend;
        _holders = heldByInstance ? InstanceHolds : OneTransform;
        Reclaimer.Arm();
        _memory = KeyMemory.Rent(this, out _generation);

        // Nobody else can reach the memory yet: the first write needs no reference.
        key.CopyTo(_memory.Bytes);
        _length = (byte)key.Length;
    }

    /// <summary>True once no holder is left (for good).</summary>
    internal bool IsClosed => Volatile.Read(ref _holders) == 0;

    /// <summary>The version of the key now (even unless a rewrite is writing it), which handles keyed from it record.</summary>
    public int Version => Volatile.Read(ref _version);

    /// <summary>The memory that holds the key (a test seam).</summary>
    internal KeyMemory Memory => _memory;

    /// <summary>True once the epoch's key memory is zeroed and gone to the pool (a test seam).</summary>
    internal bool KeyMemoryReleased => _memory.IsReleasedFor(_generation);

    /// <summary>An epoch with a new random key of <paramref name="keySizeBits"/>, held by the instance.</summary>
    [SkipLocalsInit] // the key buffer is filled before it is read
    public static KeyEpoch Generate(CipherBackend backend, int keySizeBits)
    {
        Span<byte> bytes = stackalloc byte[KeyMemory.Size];
        bytes = bytes[..(keySizeBits / 8)];
        RandomNumberGenerator.Fill(bytes);
        var epoch = new KeyEpoch(backend, bytes, heldByInstance: true);
        CryptographicOperations.ZeroMemory(bytes);
        return epoch;
    }

    /// <summary>
    /// Transition E1: a transform being made becomes a holder. Called under the instance's lifecycle lock on its current
    /// epoch, which the instance holds, so the epoch cannot close meanwhile.
    /// </summary>
    public void AddTransform()
    {
        long holders = Interlocked.Add(ref _holders, OneTransform);
        Invariant.Check((holders & InstanceHolds) != 0, "E1: a transform joins an epoch the instance holds");
    }

    /// <summary>Transition E2: a transform lets go (once, in its Dispose); the last holder closes the epoch.</summary>
    public void RemoveTransform()
    {
        long holders = Interlocked.Add(ref _holders, -OneTransform);
        Invariant.Check(holders >= 0, "E2: a transform lets go of an epoch it holds");
        if (holders == 0)
        {
            Close(SweepPlan.Release);
        }

        GC.KeepAlive(this);
    }

    /// <summary>
    /// Transition E3: the instance lets go of the epoch (a key change, Dispose, or a key size change; once, under its
    /// lifecycle lock). Its idle handles move to <paramref name="next"/>, re-keyed with <paramref name="nextKey"/>, or go
    /// back to the backend; the epoch closes if no transform holds it.
    /// </summary>
    internal void Retire(KeyEpoch? next, ReadOnlySpan<byte> nextKey)
    {
        SweepPlan plan = next is null ? SweepPlan.Release : SweepPlan.MoveTo(next, nextKey);
        long holders = Interlocked.Add(ref _holders, -InstanceHolds);
        Invariant.Check((holders & InstanceHolds) == 0 && holders >= 0, "E3: the instance lets go of an epoch it holds");
        if (holders == 0)
        {
            Close(plan);
        }
        else
        {
            // Transforms still hold it: what no call is using moves on now; the rest stays cached for the transforms.
            SweepHandles(plan);
            ReleaseIdleStock();
        }

        GC.KeepAlive(this);
    }

    /// <summary>
    /// The instance's key change, under its lifecycle lock: when the instance alone holds the epoch, the new key
    /// overwrites the old one and the idle handles are re-keyed (or given back); false, changing nothing, when a
    /// transform holds the epoch (its key is frozen: the caller makes a new epoch instead).
    /// </summary>
    /// <remarks>
    /// Under the lock no other lifecycle operation runs and no transform can become a holder, so "the instance alone"
    /// cannot change under the rewrite (transforms let go without the lock, but none holds it).
    /// </remarks>
    internal bool TryRewrite(ReadOnlySpan<byte> key)
    {
        if (Volatile.Read(ref _holders) != InstanceHolds)
        {
            return false;
        }

        int version = WriteKey(key);

        // A full fence: the new version is visible to every processor before the sweep reads a single slot (the key
        // change's half of the ordering argument in KeyEpoch.Handles.cs). Idle handles now hold the old key's schedule:
        // each is re-keyed in place, or given back. A handle in use is given back when it returns (its version is old).
        Interlocked.MemoryBarrier();
        SweepUntilSettled(SweepPlan.RekeyTo(key, version));
        ReleaseIdleStock();
        GC.KeepAlive(this);
        return true;
    }

    /// <summary>
    /// Calls <paramref name="use"/> with a copy of the key as it is at one moment (never half rewritten) and returns
    /// true; false, without calling it, when the epoch is closed or a rewrite is writing the key right now (the caller
    /// then retries once under the instance's lifecycle lock, where neither can happen to the instance's epoch). The copy
    /// is zeroed afterwards, whatever <paramref name="use"/> does. One attempt, no retry loop.
    /// </summary>
    [SkipLocalsInit] // the copy is written before it is read
    public bool TryUseKey<TState, TResult>(TState state, KeyUse<TState, TResult> use, out TResult result)
    {
        result = default!;
        if (!_memory.TryAddRef(_generation))
        {
            return false;
        }

        Span<byte> copy = stackalloc byte[KeyMemory.Size];
        try
        {
            if (!TryCopyKey(copy, out int length, out int version))
            {
                return false;
            }

            result = use(copy[..length], version, state);
            return true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(copy);
            _memory.Release();
            GC.KeepAlive(this);
        }
    }

    /// <summary>A copy of the key, or null when the epoch is closed or being rewritten (a test seam).</summary>
    internal byte[]? KeyCopy() => TryUseKey(0, static (key, _, _) => key.ToArray(), out byte[] copy) ? copy : null;

    /// <summary>
    /// Whether this epoch's key is <paramref name="key"/>, compared in constant time (only the lengths are compared
    /// openly); false if the epoch is closed. Called under the instance's lifecycle lock, where no rewrite runs.
    /// </summary>
    public bool HasKey(ReadOnlySpan<byte> key)
    {
        if (!_memory.TryAddRef(_generation))
        {
            return false;
        }

        try
        {
            return key.Length == _length && CryptographicOperations.FixedTimeEquals(key, _memory.Bytes[.._length]);
        }
        finally
        {
            _memory.Release();
            GC.KeepAlive(this);
        }
    }

    // The last holder let go (E4): every idle handle is given back now and every handle in use when its call returns,
    // and the key memory is closed (M4: zeroed and pooled once no reader holds it), even if giving up a handle throws.
    private void Close(scoped in SweepPlan plan)
    {
        try
        {
            SweepUntilSettled(plan);
            ReleaseIdleStock();
        }
        finally
        {
            if (OwnershipAudit.Enabled)
            {
                OwnershipAudit.Give(_memory, this);
            }

            _memory.Close(_generation);

            // The epoch stays reachable until its memory is closed (see the remarks): without this line, optimized code
            // stops reporting the epoch once it has read the two fields above, and a collection inside the close (its
            // compare-exchange loop is a safe point) could find the epoch unreachable.
            GC.KeepAlive(this);
        }
    }

    // The in-place rewrite (the caller holds the lifecycle lock and the instance alone holds the epoch): writes the key
    // with the version odd while the bytes change; returns the new version. No reference is taken on the memory: it
    // stays Owned for this tenure throughout (docs/design-notes.md, "Ownership", E5). Only the owner's close (M4, after
    // the last holder lets go: the instance is a holder, and only this lock's holder lets go for it) or the reclaimer
    // (M5, once the epoch is unreachable: TryRewrite keeps it reachable to its end, and so does the instance's field)
    // can end the tenure, and memory is freed only from the pool (M7).
    private int WriteKey(ReadOnlySpan<byte> key)
    {
        Invariant.Check(Volatile.Read(ref _holders) == InstanceHolds, "E5: the instance alone holds the epoch it rewrites");
        int version = _version + 2;

        // Readers copy the key under the version: odd while the bytes change (a store barrier after it, so the mark is
        // visible before any byte is), even again after (a release, so every byte is visible before the new version
        // is).
        _version = version - 1;
        Volatile.WriteBarrier();
        Span<byte> memory = _memory.Bytes;
        key.CopyTo(memory);
        memory[key.Length..].Clear();
        _length = (byte)key.Length;
        Volatile.Write(ref _version, version);
        return version;
    }

    // Copies the key into `destination` (KeyMemory.Size bytes) as it is at one moment; false when a rewrite is writing
    // it (odd version, or the version moved during the copy). The caller holds a reference on the memory.
    private bool TryCopyKey(Span<byte> destination, out int length, out int version)
    {
        version = Volatile.Read(ref _version);
        length = _length;
        _memory.Bytes.CopyTo(destination);

        // The copy's loads must complete before the version is read again (a later load may not pass them).
        Volatile.ReadBarrier();
        return (version & 1) == 0 && Volatile.Read(ref _version) == version;
    }
}
