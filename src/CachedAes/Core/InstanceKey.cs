using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// An instance's key: its current <see cref="KeyEpoch"/> and the <see cref="LifecycleLock"/> that decides what happens
/// to it. A field of <see cref="CachedAes"/> (a struct: nothing allocated per instance), used by reference.
/// </summary>
/// <remarks>
/// <para><b>Who changes what.</b> Only a holder of the lock publishes a new epoch, rewrites the current one's key in
/// place, retires one or makes a transform a holder of one (<see cref="Replace"/>, <see cref="Release"/>,
/// <see cref="HoldCurrent"/>, <see cref="TryHoldIfKey"/>, and the first key's generation in <see cref="Current"/>). So
/// two lifecycle operations never interleave, and the argument that a key rewrite does not race a release is one line:
/// both need the lock. Calls read the current epoch without the lock and hold what keeps their native memory alive (a
/// reference on the key memory, a reserved slot; see <c>KeyEpoch.Key.cs</c> and <c>KeyEpoch.Slots.cs</c>); a call that
/// finds its epoch released by a lifecycle operation meanwhile moves to the new one.</para>
/// <para>The lock is not re-entrant: every method here either takes it or says that its caller holds it, and none that
/// holds it calls one that takes it.</para>
/// </remarks>
internal struct InstanceKey
{
    private readonly CipherBackend _backend;
    private KeyEpoch? _epoch;
    private LifecycleLock _lock;

    /// <summary>An instance's key, none yet, whose handles <paramref name="backend"/> makes.</summary>
    public InstanceKey(CipherBackend backend) => _backend = backend;

    /// <summary>The library that makes the key's handles.</summary>
    public readonly CipherBackend Backend => _backend;

    /// <summary>The current epoch, or null before a key is set or needed and after <c>Dispose</c> (a test seam).</summary>
    internal readonly KeyEpoch? Epoch => Volatile.Read(in _epoch);

    /// <summary>Takes the lifecycle lock; pair with <see cref="Exit"/> in a <c>finally</c>.</summary>
    public void Enter() => _lock.Enter();

    /// <summary>Lets the lifecycle lock go.</summary>
    public void Exit() => _lock.Exit();

    /// <summary>The current epoch, generated first (with a random key of <paramref name="keySizeBits"/>) if there is none.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public KeyEpoch Current(int keySizeBits) => Volatile.Read(ref _epoch) ?? Generate(keySizeBits);

    /// <summary>
    /// Makes <paramref name="key"/> the instance's key (the caller holds the lock): rewritten in place when the instance
    /// alone holds its epoch, otherwise in a new epoch that takes over the old one's idle handles. No call that starts
    /// after this returns uses an older key.
    /// </summary>
    public void Replace(ReadOnlySpan<byte> key)
    {
        Debug.Assert(_lock.IsHeld);
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
        Debug.Assert(_lock.IsHeld);
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
        Debug.Assert(_lock.IsHeld);
        KeyEpoch epoch = _epoch ?? Publish(KeyEpoch.Generate(_backend, keySizeBits));
        epoch.AddHolder();
        return epoch;
    }

    /// <summary>
    /// The current epoch with the caller added as a holder when its key is <paramref name="key"/> (compared in constant
    /// time), else null (the caller holds the lock).
    /// </summary>
    public KeyEpoch? TryHoldIfKey(ReadOnlySpan<byte> key)
    {
        Debug.Assert(_lock.IsHeld);
        if (_epoch is not { } epoch || !epoch.HasKey(key))
        {
            return null;
        }

        epoch.AddHolder();
        return epoch;
    }

    /// <summary>
    /// Takes a handle for <paramref name="mode"/> and direction keyed with the current key (generated first if there is
    /// none): the cached one, a spare, or a new one. Dispose the lease to give it back.
    /// </summary>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public HandleLease Rent(int keySizeBits, BlockCipherMode mode, bool encrypting) =>
        Current(keySizeBits).TryRent(mode, encrypting, out HandleLease lease)
            ? lease
            : RentAfterRelease(keySizeBits, mode, encrypting);

    /// <summary>
    /// Takes the stock instance holding the current key (generated first if there is none), made now if none is cached.
    /// Dispose the lease to give it back.
    /// </summary>
    public StockLease RentStock(int keySizeBits)
    {
        while (true)
        {
            if (Current(keySizeBits).TryRentStock(out StockLease lease))
            {
                return lease;
            }

            // Released by a lifecycle operation before an instance could be made with its key: take the new key.
        }
    }

    /// <summary>A copy of the current key (generated first if there is none).</summary>
    public byte[] CopyKey(int keySizeBits)
    {
        while (true)
        {
            if (Current(keySizeBits).TryUseKey(0, static (key, _, _) => key.ToArray(), out byte[] copy))
            {
                return copy;
            }

            // Released after it was read: read the new key.
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private HandleLease RentAfterRelease(int keySizeBits, BlockCipherMode mode, bool encrypting)
    {
        // The epoch read was released by a lifecycle operation before a handle could be made with its key: the call was
        // overtaken by a key change or Dispose, and takes the instance's key as it is now.
        while (true)
        {
            if (Current(keySizeBits).TryRent(mode, encrypting, out HandleLease lease))
            {
                return lease;
            }
        }
    }

    // No key yet (never set, or released by Dispose or a key size change): a generated one, published under the lock
    // unless another thread published one first.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private KeyEpoch Generate(int keySizeBits)
    {
        _lock.Enter();
        try
        {
            return _epoch ?? Publish(KeyEpoch.Generate(_backend, keySizeBits));
        }
        finally
        {
            _lock.Exit();
        }
    }

    private KeyEpoch Publish(KeyEpoch epoch)
    {
        Volatile.Write(ref _epoch, epoch);
        return epoch;
    }
}
