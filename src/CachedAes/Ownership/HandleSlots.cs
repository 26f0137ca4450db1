using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Ownership;

/// <summary>
/// Where one key epoch caches its native handles: one inline slot per mode and direction, then (once two callers meet on
/// one) the shared slots. The lease protocol that fills and empties them is in <c>KeyEpoch.Handles.cs</c>; the slot
/// states (empty, a handle, busy) are table S of docs/design-notes.md ("Ownership").
/// </summary>
/// <remarks>
/// A separate object from its epoch, made when the epoch caches its first handle and attached to its key memory, so that
/// when the epoch is dropped without being closed the handles are still reachable, and the reclaimer gives them back
/// (<see cref="GiveBackDropped"/>). Fields, not properties: the lease protocol takes references to the slots.
/// </remarks>
internal sealed class HandleSlots
{
    /// <summary>How many handles per mode and direction stay cached at most: the processor count, at least 1, at most 64.</summary>
    internal static readonly int PerMode = Math.Clamp(Environment.ProcessorCount, 1, 64);

    /// <summary>Shared slots are this many references apart (64 bytes), so no two share a cache line.</summary>
    internal const int SharedStride = 8;

    /// <summary>Marks a busy slot. Never used as a handle: every member throws.</summary>
    internal static readonly BlockCipher Busy = new BusyMarker();

    // Where a thread starts looking among the shared slots: threads are numbered in the order they first need one, so
    // that concurrent threads start at different slots.
    [ThreadStatic]
    private static int t_hint;

    private static int s_lastHint;

    /// <summary>The inline slots, used until two callers meet on one of them.</summary>
    internal BlockCipher? EcbEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? EcbDecrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? CbcEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? CbcDecrypt;

    /// <summary>
    /// The shared slots, once two callers have met; null until then. Slot i of a mode and direction is at
    /// <see cref="SharedIndex"/>; the first stride is left empty, so that no slot shares a line with the array's length,
    /// which every caller reads.
    /// </summary>
    internal BlockCipher?[]? Shared;

    /// <summary>This thread's starting slot among the shared ones (modulo their count).</summary>
    internal static int ThreadHint
    {
        get
        {
            int hint = t_hint;
            return hint != 0 ? hint : t_hint = Interlocked.Increment(ref s_lastHint) & int.MaxValue;
        }
    }

    /// <summary>Whether <paramref name="held"/> is a handle: neither empty nor the busy marker.</summary>
    internal static bool IsHandle(BlockCipher? held) => held is not null && held != Busy;

    /// <summary>The index of shared slot <paramref name="i"/> for a mode and direction.</summary>
    internal static int SharedIndex(BlockCipherMode mode, bool encrypting, int i) =>
        ((((int)mode * 2) + (encrypting ? 0 : 1)) * PerMode + i + 1) * SharedStride;

    /// <summary>
    /// Reserves <paramref name="slot"/> (marks it busy) and returns what it held: a handle (now the caller's), null (the
    /// caller holds an empty slot's reservation), or <see cref="Busy"/> (another caller holds it; nothing changed). The
    /// object overload of the exchange: the generic one runs as shared generic code with a type test on every call.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static BlockCipher? Reserve(ref BlockCipher? slot)
    {
        BlockCipher? held = Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), Busy));
        if (OwnershipAudit.Enabled && IsHandle(held))
        {
            OwnershipAudit.Slot(into: false, handle: held!);
        }

        return held;
    }

    /// <summary>Empties <paramref name="slot"/> if it still holds <paramref name="cipher"/> idle; true if this caller did (it then owns the handle).</summary>
    internal static bool TryTake(ref BlockCipher? slot, BlockCipher cipher)
    {
        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null, cipher) != cipher)
        {
            return false;
        }

        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Slot(into: false, handle: cipher);
        }

        return true;
    }

    /// <summary>Puts <paramref name="cipher"/> into <paramref name="slot"/> if it is empty; true if it did (a full fence).</summary>
    internal static bool TryFill(ref BlockCipher? slot, BlockCipher cipher)
    {
        // Recorded before the handle is visible in the slot (and undone if it does not go in), so that another thread
        // taking it out never finds the record behind.
        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Slot(into: true, handle: cipher);
        }

        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), cipher, null) is null)
        {
            return true;
        }

        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Slot(into: false, handle: cipher);
        }

        return false;
    }

    /// <summary>Puts <paramref name="cipher"/> into an empty shared slot of its mode and direction; a null reference if none is empty.</summary>
    internal static ref BlockCipher? TryFillFree(BlockCipher?[] shared, BlockCipher cipher)
    {
        for (int i = 0; i < PerMode; i++)
        {
            ref BlockCipher? free = ref shared[SharedIndex(cipher.Mode, cipher.Encrypting, i)];
            if (Volatile.Read(ref free) is null && TryFill(ref free, cipher))
            {
                return ref free;
            }
        }

        return ref Unsafe.NullRef<BlockCipher?>();
    }

    /// <summary>The inline slot for <paramref name="mode"/> and direction.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal ref BlockCipher? Inline(BlockCipherMode mode, bool encrypting)
    {
        if (mode == BlockCipherMode.Ecb)
        {
            return ref encrypting ? ref EcbEncrypt : ref EcbDecrypt;
        }

        return ref encrypting ? ref CbcEncrypt : ref CbcDecrypt;
    }

    /// <summary>Whether <paramref name="slot"/> is one of the inline slots.</summary>
    internal bool IsInline(ref BlockCipher? slot) =>
        Unsafe.AreSame(ref slot, ref EcbEncrypt) || Unsafe.AreSame(ref slot, ref EcbDecrypt)
        || Unsafe.AreSame(ref slot, ref CbcEncrypt) || Unsafe.AreSame(ref slot, ref CbcDecrypt);

    /// <summary>Makes the shared slots if nobody has yet (the switch is for good).</summary>
    internal void EnsureShared()
    {
        if (Volatile.Read(ref Shared) is null)
        {
            Interlocked.CompareExchange(ref Shared, new BlockCipher?[((4 * PerMode) + 1) * SharedStride], null);
        }
    }

    /// <summary>The handle waiting in the inline slot for <paramref name="mode"/> and direction, taken out; null if none.</summary>
    internal BlockCipher? TakeInline(BlockCipherMode mode, bool encrypting)
    {
        ref BlockCipher? inline = ref Inline(mode, encrypting);
        return Volatile.Read(ref inline) is { } held && held != Busy && TryTake(ref inline, held) ? held : null;
    }

    /// <summary>How many idle handles for a mode and direction the slots hold (a test seam).</summary>
    internal int IdleCount(BlockCipherMode mode, bool encrypting)
    {
        int count = IsHandle(Volatile.Read(ref Inline(mode, encrypting))) ? 1 : 0;
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < PerMode; i++)
            {
                count += IsHandle(Volatile.Read(ref shared[SharedIndex(mode, encrypting, i)])) ? 1 : 0;
            }
        }

        return count;
    }

    /// <summary>How many idle handles were keyed with another version than <paramref name="version"/> (a test seam).</summary>
    internal int IdleNotOfVersion(int version)
    {
        int count = 0;
        foreach (BlockCipher? held in (BlockCipher?[])[EcbEncrypt, EcbDecrypt, CbcEncrypt, CbcDecrypt, .. Volatile.Read(ref Shared) ?? []])
        {
            count += IsHandle(held) && held!.KeyVersion != version ? 1 : 0;
        }

        return count;
    }

    /// <summary>
    /// The epoch was dropped without being closed, and the collector has found it unreachable: gives back every handle
    /// in the slots and returns how many. Nothing else can reach these slots any more: a call in flight holds its epoch,
    /// and the epoch is gone.
    /// </summary>
    internal int GiveBackDropped()
    {
        int released = GiveBack(ref EcbEncrypt) + GiveBack(ref EcbDecrypt) + GiveBack(ref CbcEncrypt) + GiveBack(ref CbcDecrypt);
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < shared.Length; i++)
            {
                released += GiveBack(ref shared[i]);
            }
        }

        return released;
    }

    private static int GiveBack(ref BlockCipher? slot)
    {
        BlockCipher? held = Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null));
        Invariant.Check(held != Busy, "S: a dropped epoch has no call in flight, so no busy slot");
        if (held is null)
        {
            return 0;
        }

        if (OwnershipAudit.Enabled)
        {
            OwnershipAudit.Slot(into: false, handle: held);
            OwnershipAudit.GiveDropped(held);
        }

        held.Release();
        return 1;
    }

    // The busy marker: a BlockCipher only so that a slot can hold it.
    private sealed class BusyMarker : BlockCipher
    {
        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output) =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        public override CryptographicException CreateFailure() =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        public override void Release() =>
            throw new InvalidOperationException("The busy marker is not a handle.");
    }
}
