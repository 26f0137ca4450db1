using System;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// One thread, then several: the shared slots an epoch switches to the first time two callers meet on one of its
/// inline slots (<c>KeyEpoch.Slots.cs</c> holds the inline slots and the lease protocol both follow).
/// </summary>
/// <remarks>
/// <para><b>One thread, then several.</b> An epoch used by one thread at a time keeps one slot per mode and direction
/// inline. The first time a caller finds that slot reserved, the epoch switches for good to shared slots: an array with
/// one slot per processor (64 at most) for each mode and direction, each slot on a cache line of its own, and each
/// thread starting at a slot of its own (<see cref="t_hint"/>). Threads then neither wait for each other nor write a
/// cache line that another thread reads on every call (the inline slots sit beside the fields every call reads). A
/// caller that finds every shared slot reserved uses a handle of its own for the call.</para>
/// </remarks>
internal sealed partial class KeyEpoch
{
    // Where a thread starts looking among the shared slots: threads are numbered in the order they first need one, so
    // that concurrent threads start at different slots.
    [ThreadStatic]
    private static int t_hint;

    private static int s_lastHint;

    private static int ThreadHint
    {
        get
        {
            int hint = t_hint;
            return hint != 0 ? hint : t_hint = Interlocked.Increment(ref s_lastHint) & int.MaxValue;
        }
    }

    // A shared slot, starting at this thread's own; a handle of the call's own when every one is reserved.
    private bool TryRentShared(HandleSlots slots, BlockCipherMode mode, bool encrypting, out HandleLease lease)
    {
        BlockCipher?[] shared = Volatile.Read(ref slots.Shared)!;
        int count = HandlesPerMode;
        int start = ThreadHint % count;
        for (int n = 0; n < count; n++)
        {
            int i = start + n < count ? start + n : start + n - count;
            ref BlockCipher? slot = ref shared[SharedIndex(mode, encrypting, i)];
            if (Volatile.Read(ref slot) == HandleSlots.Busy)
            {
                continue;
            }

            BlockCipher? held = Reserve(ref slot);
            if (held == HandleSlots.Busy)
            {
                continue;
            }

            // An empty shared slot: a handle still waiting in the inline slot (made before the switch) moves here.
            held ??= TakeInline(slots, mode, encrypting);
            if (held is not null && held.KeyVersion == Volatile.Read(ref _version))
            {
                held.Used = true;
                lease = new HandleLease(this, ref slot, held);
                return true;
            }

            // None, or one of an older key that a key change's sweep has not reached yet.
            if (held is not null)
            {
                GiveBack(held);
            }

            return TryFill(ref slot, mode, encrypting, out lease);
        }

        // Every slot is reserved: a handle of this call's own, released when it returns (not cached).
        CachedAesMetrics.CallContended();
        BlockCipher? own = TryCreate(mode, encrypting);
        lease = own is null ? default : new HandleLease(this, ref Unsafe.NullRef<BlockCipher?>(), own);
        return own is not null;
    }

    // The handle in the inline slot, if one is waiting there (the slot is left empty); null otherwise.
    private static BlockCipher? TakeInline(HandleSlots slots, BlockCipherMode mode, bool encrypting)
    {
        ref BlockCipher? inline = ref slots.Inline(mode, encrypting);
        if (!IsHandle(Volatile.Read(ref inline)))
        {
            return null;
        }

        BlockCipher? held = Reserve(ref inline);
        if (held == HandleSlots.Busy)
        {
            return null;
        }

        Volatile.Write(ref inline, null);
        return held;
    }

    private static int SharedIndex(BlockCipherMode mode, bool encrypting, int i) =>
        ((((int)mode * 2) + (encrypting ? 0 : 1)) * HandlesPerMode + i + 1) * SharedStride;
}
