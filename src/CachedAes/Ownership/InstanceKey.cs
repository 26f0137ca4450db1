using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>
/// An instance's key: its current <see cref="KeyEpoch"/> and the lifecycle lock that decides what happens to it. A field
/// of <see cref="CachedAes"/> (a struct: nothing allocated per instance), used by reference.
/// </summary>
/// <remarks>
/// <para><b>Who changes what.</b> Only a holder of the lock publishes a new epoch, rewrites the current one's key in
/// place, retires one or makes a transform a holder of one (<see cref="Replace"/>, <see cref="Release"/>,
/// <see cref="HoldCurrent"/>, <see cref="TryHoldIfKey"/>, and the first key's generation), so two lifecycle operations
/// never interleave. A retired epoch is never published again.</para>
/// <para><b>Calls</b> read the current epoch without the lock and use it (<see cref="TryRent"/> then <see cref="RentLocked"/>, <see cref="RentStock"/>,
/// <see cref="CopyKey"/>). One that finds it closed or being rewritten was overtaken by a lifecycle operation; it tries
/// once more under the lock, where the current epoch is open and not being rewritten, so the second try succeeds by
/// construction. If it does not, a rule is broken and the call throws (<see cref="Invariant"/>): no call retries in a
/// loop.</para>
/// <para><b>The lock</b> is one compare-exchange to enter and a release store to leave, not re-entrant; a contended
/// enter spins, then yields, then sleeps (<see cref="SpinWait"/>) until the holder leaves, and every holder does a bounded
/// amount of work (the longest re-keys the instance's idle handles, one native call each), so waiting ends. Every method
/// here either takes it or says that its caller holds it, and none that holds it calls one that takes it.</para>
/// </remarks>
internal struct InstanceKey
{
    private readonly CipherBackend _backend;
    private KeyEpoch? _epoch;
    private int _locked;

    /// <summary>An instance's key, none yet, whose handles <paramref name="backend"/> makes.</summary>
    public InstanceKey(CipherBackend backend) => _backend = backend;

    /// <summary>The library that makes the key's handles.</summary>
    public readonly CipherBackend Backend => _backend;

    /// <summary>The current epoch, or null before a key is set or needed and after <c>Dispose</c> (a test seam).</summary>
    internal readonly KeyEpoch? Epoch => Volatile.Read(in _epoch);

    private readonly bool IsLocked => Volatile.Read(in _locked) != 0;

    /// <summary>Takes the lifecycle lock; pair with <see cref="Exit"/> in a <c>finally</c>.</summary>
    public void Enter()
    {
        if (Interlocked.CompareExchange(ref _locked, 1, 0) != 0)
        {
            EnterContended();
        }
    }

    /// <summary>Lets the lifecycle lock go; the caller holds it.</summary>
    public void Exit()
    {
        Debug.Assert(IsLocked);
        Volatile.Write(ref _locked, 0);
    }

    /// <summary>
    /// Makes <paramref name="key"/> the instance's key (the caller holds the lock): rewritten in place when the instance
    /// alone holds its epoch, otherwise in a new epoch that takes over the old one's idle handles. No call that starts
    /// after this returns uses an older key. <paramref name="key"/> must be a private copy: it is read more than once.
    /// </summary>
    public void Replace(ReadOnlySpan<byte> key)
    {
        Debug.Assert(IsLocked);
        KeyEpoch? current = _epoch;
        if (current is not null && current.TryRewrite(key))
        {
            return;
        }

        var next = new KeyEpoch(_backend, key, heldByInstance: true);
        Volatile.Write(ref _epoch, next);
        current?.Retire(next, key);
    }

    /// <summary>
    /// Leaves the instance with no key (the next use generates one) and retires its epoch (the caller holds the lock).
    /// Calls running on other threads are not disturbed.
    /// </summary>
    public void Release()
    {
        Debug.Assert(IsLocked);
        KeyEpoch? current = _epoch;
        if (current is not null)
        {
            Volatile.Write(ref _epoch, null);
            current.Retire(null, default);
        }
    }

    /// <summary>
    /// The current epoch (generated first if there is none), with the caller, a transform being made, added as a holder
    /// (the caller holds the lock). The transform lets go of it when disposed.
    /// </summary>
    public KeyEpoch HoldCurrent(int keySizeBits)
    {
        Debug.Assert(IsLocked);
        KeyEpoch epoch = CurrentLocked(keySizeBits);
        epoch.AddTransform();
        return epoch;
    }

    /// <summary>
    /// The current epoch with the caller added as a holder when its key is <paramref name="key"/> (compared in constant
    /// time), else null (the caller holds the lock).
    /// </summary>
    public KeyEpoch? TryHoldIfKey(ReadOnlySpan<byte> key)
    {
        Debug.Assert(IsLocked);
        if (_epoch is not { } epoch || !epoch.HasKey(key))
        {
            return null;
        }

        epoch.AddTransform();
        return epoch;
    }

    /// <summary>
    /// Takes a handle for <paramref name="mode"/> and direction keyed with the current key, without the lifecycle lock: the
    /// cached one, a spare, or a new one. Dispose the lease to give it back. A lease with no handle
    /// (<see cref="KeyEpoch.HandleLease.IsTaken"/> false) when there is no key yet or a lifecycle operation overtook the
    /// epoch read: the caller then calls <see cref="RentLocked"/>.
    /// </summary>
    /// <remarks>
    /// Split from <see cref="RentLocked"/> and returned by value so that a one-shot's lease lives in registers: the key
    /// size that only the locked path needs is read only on that path, and no out-of-line call takes the lease's address.
    /// </remarks>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The native library could not make a handle.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public KeyEpoch.HandleLease TryRent(BlockCipherMode mode, bool encrypting) =>
        Volatile.Read(ref _epoch) is { } epoch ? epoch.Rent(mode, encrypting) : default;

    /// <summary>
    /// Takes the stock instance holding the current key (generated first if there is none), made now if none is cached.
    /// Dispose the lease to give it back.
    /// </summary>
    public KeyEpoch.StockLease RentStock(int keySizeBits)
    {
        if (Volatile.Read(ref _epoch) is { } epoch && epoch.TryRentStock(out KeyEpoch.StockLease lease))
        {
            return lease;
        }

        Enter();
        try
        {
            Invariant.Check(CurrentLocked(keySizeBits).TryRentStock(out lease), "I: under the lifecycle lock the current epoch is open and not being rewritten");
            return lease;
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>A copy of the current key (generated first if there is none).</summary>
    public byte[] CopyKey(int keySizeBits)
    {
        if (Volatile.Read(ref _epoch)?.KeyCopy() is { } copy)
        {
            return copy;
        }

        Enter();
        try
        {
            copy = CurrentLocked(keySizeBits).KeyCopy();
            Invariant.Check(copy is not null, "I: under the lifecycle lock the current epoch is open and not being rewritten");
            return copy;
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>
    /// <see cref="TryRent"/> found no epoch, or the one it read was overtaken by a lifecycle operation (closed, or its key
    /// being rewritten): once more under the lifecycle lock, where the current epoch (made now, with a generated key of
    /// <paramref name="keySizeBits"/>, if there is none) is open and stable.
    /// </summary>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The native library could not make a handle.</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public KeyEpoch.HandleLease RentLocked(int keySizeBits, BlockCipherMode mode, bool encrypting)
    {
        Enter();
        try
        {
            Invariant.Check(CurrentLocked(keySizeBits).TryRent(mode, encrypting, out KeyEpoch.HandleLease lease), "I: under the lifecycle lock the current epoch is open and not being rewritten");
            return lease;
        }
        finally
        {
            Exit();
        }
    }

    // The current epoch, generated (with a random key of `keySizeBits`) and published if there is none; the caller holds
    // the lock.
    private KeyEpoch CurrentLocked(int keySizeBits)
    {
        Debug.Assert(IsLocked);
        if (_epoch is { } epoch)
        {
            return epoch;
        }

        epoch = KeyEpoch.Generate(_backend, keySizeBits);
        Volatile.Write(ref _epoch, epoch);
        return epoch;
    }

    private void EnterContended()
    {
        var spinner = default(SpinWait);
        do
        {
            spinner.SpinOnce();
        }
        while (Volatile.Read(ref _locked) != 0 || Interlocked.CompareExchange(ref _locked, 1, 0) != 0);
    }
}
