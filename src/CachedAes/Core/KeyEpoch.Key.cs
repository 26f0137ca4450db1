using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>Uses of a key: what <see cref="KeyEpoch.TryUseKey{TState, TResult}"/> hands a copy of the key to.</summary>
/// <typeparam name="TState">What the caller passes through (a struct, so nothing is allocated).</typeparam>
/// <typeparam name="TResult">What the use returns.</typeparam>
/// <param name="key">A copy of the key, zeroed after the call returns.</param>
/// <param name="version">The version of the key the copy was taken of.</param>
/// <param name="state">The caller's state.</param>
internal delegate TResult KeyUse<TState, TResult>(ReadOnlySpan<byte> key, int version, TState state);

/// <summary>
/// Reading and writing an epoch's key: every access holds a reference on its <see cref="KeyMemory"/>, and readers copy
/// the key under its version, so they never see it half rewritten.
/// </summary>
internal sealed partial class KeyEpoch
{
    // Even while the key is stable; odd while a rewrite writes it. Every handle records the version it was keyed with.
    // 32 bits: a handle of an older version is given up when it comes back, and every idle one at each key change, so a
    // version could only repeat for a call that stayed in flight across 2^31 key changes.
    private int _version;
    private int _length;

    /// <summary>The version of the key in the memory now (even), which handles keyed from it record.</summary>
    public int Version => Volatile.Read(ref _version);

    /// <summary>
    /// Calls <paramref name="use"/> with a copy of the key as it is at one moment (never half rewritten) and returns
    /// true; false, without calling it, when the epoch was released before its key could be read (the caller then
    /// takes the instance's key as it is now). The copy is zeroed afterwards, whatever <paramref name="use"/> does.
    /// </summary>
    [SkipLocalsInit] // the copy is written before it is read
    public bool TryUseKey<TState, TResult>(TState state, KeyUse<TState, TResult> use, out TResult result)
    {
        if (!_memory.TryAddRef(_generation))
        {
            result = default!;
            return false;
        }

        Span<byte> copy = stackalloc byte[KeyMemory.Size];
        try
        {
            int length = CopyKey(copy, out int version);
            result = use(copy[..length], version, state);
            return true;
        }
        finally
        {
            CryptographicOperations.ZeroMemory(copy);
            _memory.Release();
        }
    }

    /// <summary>The memory that holds the key while the epoch has it (a test seam).</summary>
    internal KeyMemory Memory => _memory;

    /// <summary>True once the epoch's key memory is zeroed and gone to another key or freed (a test seam).</summary>
    internal bool KeyMemoryReleased => _memory.IsReleasedFor(_generation);

    /// <summary>A copy of the key, or null once the epoch is released (a test seam).</summary>
    internal byte[]? KeyCopy() => TryUseKey(0, static (key, _, _) => key.ToArray(), out byte[] copy) ? copy : null;

    /// <summary>
    /// Whether this epoch's key is <paramref name="key"/>, compared in constant time (only the lengths are compared
    /// openly); false if the epoch is already released. Called under the instance's lifecycle lock.
    /// </summary>
    public bool HasKey(ReadOnlySpan<byte> key)
    {
        if (!_memory.TryAddRef(_generation))
        {
            return false;
        }

        try
        {
            // Under the lifecycle lock no rewrite runs: the memory holds the key whole.
            return key.Length == _length && CryptographicOperations.FixedTimeEquals(key, _memory.Bytes[.._length]);
        }
        finally
        {
            _memory.Release();
        }
    }

    // The in-place rewrite (the caller holds the lifecycle lock): writes the key under a reference, with the version odd
    // while the bytes change; returns the new version.
    private int WriteKey(ReadOnlySpan<byte> key)
    {
        bool added = _memory.TryAddRef(_generation);
        System.Diagnostics.Debug.Assert(added, "the instance holds the epoch, so its memory is open");
        int version = _version + 2;
        try
        {
            // Readers copy the key under the version: odd while the bytes change (a store barrier after it, so the mark
            // is visible before any byte is), even again after (a release, so every byte is visible before the new
            // version is).
            _version = version - 1;
            Volatile.WriteBarrier();
            Span<byte> memory = _memory.Bytes;
            key.CopyTo(memory);
            memory[key.Length..].Clear();
            _length = key.Length;
            Volatile.Write(ref _version, version);
        }
        finally
        {
            _memory.Release();
        }

        return version;
    }

    // Copies the key into `destination` (KeyMemory.Size bytes) as it is at one moment; returns its length, and its
    // version in `version`. The caller holds a reference on the memory.
    private int CopyKey(Span<byte> destination, out int version)
    {
        var spinner = default(SpinWait);
        while (true)
        {
            version = Volatile.Read(ref _version);
            if ((version & 1) == 0)
            {
                int length = _length;
                _memory.Bytes.CopyTo(destination);

                // The copy's loads must complete before the version is read again (a later load may not pass them).
                Volatile.ReadBarrier();
                if (Volatile.Read(ref _version) == version)
                {
                    return length;
                }
            }

            spinner.SpinOnce();
        }
    }
}
