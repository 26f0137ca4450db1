using System;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// The one sweep over an epoch's slots: what a key change or a release does with every handle no call is
/// using (a reserved slot is left to the call that holds it, which checks the epoch when it gives the handle back; see
/// the ordering argument in <c>KeyEpoch.Slots.cs</c>).
/// </summary>
internal sealed partial class KeyEpoch
{
    /// <summary>What a sweep does with each idle handle it takes out of its slot, and with what.</summary>
    private readonly ref struct SweepPlan
    {
        private SweepPlan(SweepKind kind, KeyEpoch? target, ReadOnlySpan<byte> key, int version)
        {
            Kind = kind;
            Target = target;
            Key = key;
            Version = version;
        }

        /// <summary>Give every idle handle back to the backend (<see cref="BlockCipher.Release"/>).</summary>
        public static SweepPlan Release => new(SweepKind.Release, null, default, 0);

        public SweepKind Kind { get; }

        /// <summary><see cref="SweepKind.MoveTo"/>: the epoch the handles move to.</summary>
        public KeyEpoch? Target { get; }

        /// <summary><see cref="SweepKind.RekeyTo"/> and <see cref="SweepKind.MoveTo"/>: the key the handles get.</summary>
        public ReadOnlySpan<byte> Key { get; }

        /// <summary><see cref="SweepKind.RekeyTo"/>: the key version the handles record.</summary>
        public int Version { get; }

        /// <summary>This epoch's key was rewritten to <paramref name="key"/> at <paramref name="version"/>: re-key every idle handle in place.</summary>
        public static SweepPlan RekeyTo(ReadOnlySpan<byte> key, int version) => new(SweepKind.RekeyTo, null, key, version);

        /// <summary>A key change made <paramref name="target"/>: move every idle handle there, re-keyed with <paramref name="key"/>.</summary>
        public static SweepPlan MoveTo(KeyEpoch target, ReadOnlySpan<byte> key) => new(SweepKind.MoveTo, target, key, 0);
    }

    private enum SweepKind
    {
        Release,

        /// <summary>Re-key the handle and put it back, if a call used it since it was last keyed and the backend can; otherwise give it back.</summary>
        RekeyTo,

        /// <summary>Re-key the handle and give it to the target epoch, if a call used it since it was last keyed and the backend can; otherwise give it back.</summary>
        MoveTo,
    }

    // After a release or a key change whose full fence made it visible (their half of the ordering argument): a sweep,
    // and when it found a slot reserved by a call in flight, a process-wide barrier and a second sweep, so that a handle
    // the caller stored without seeing the change is found now.
    private void SweepUntilSettled(scoped in SweepPlan plan)
    {
        if (SweepHandles(plan))
        {
            Interlocked.MemoryBarrierProcessWide();
            SweepHandles(plan);
        }
    }

    // Every slot once; true when one was reserved by a call in flight.
    private bool SweepHandles(scoped in SweepPlan plan)
    {
        // No slots yet: no handle is cached. Slots made after this read are made by a call whose interlocked operations
        // follow the release's or key change's fence, so that call sees the change (the ordering argument).
        if (Volatile.Read(ref _slots) is not { } slots)
        {
            return false;
        }

        bool reserved = Sweep(ref slots.EcbEncrypt, plan) | Sweep(ref slots.EcbDecrypt, plan) | Sweep(ref slots.CbcEncrypt, plan) | Sweep(ref slots.CbcDecrypt, plan);
        if (Volatile.Read(ref slots.Shared) is { } shared)
        {
            for (int i = SharedStride; i < shared.Length; i += SharedStride)
            {
                reserved |= Sweep(ref shared[i], plan);
            }
        }

        return reserved;
    }

    private bool Sweep(ref BlockCipher? slot, scoped in SweepPlan plan)
    {
        // A plain read first: most slots are empty, and an interlocked operation on each would cost more than the rest of
        // a key change. A reserved slot is left to the caller that holds it.
        BlockCipher? held = Volatile.Read(ref slot);
        if (held is null)
        {
            return false;
        }

        if (held == HandleSlots.Busy)
        {
            return true;
        }

        switch (plan.Kind)
        {
            case SweepKind.RekeyTo:
                RekeyInPlace(ref slot, plan.Key, plan.Version);
                break;
            case SweepKind.MoveTo:
                MoveTo(ref slot, held, plan.Target!, plan.Key);
                break;
            default:
                GiveBackFromSlot(ref slot, held);
                break;
        }

        return false;
    }

    // A key rewrite: the handle in `slot` (if still idle) gets the new key and goes back, or is given up.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RekeyInPlace(ref BlockCipher? slot, ReadOnlySpan<byte> key, int version)
    {
        BlockCipher? held = Reserve(ref slot);
        if (held is null || held == HandleSlots.Busy)
        {
            // Emptied or taken since the slot was read; a caller holding it gives it back (and checks its version then).
            if (held is null)
            {
                Volatile.Write(ref slot, null);
            }

            return;
        }

        if (held.KeyVersion != version)
        {
            bool rekeyed = false;
            try
            {
                rekeyed = held.Used && held.TryRekey(key);
            }
            finally
            {
                if (!rekeyed)
                {
                    // Not used since it was keyed, or the backend cannot re-key it (or threw): its slot is freed and the
                    // handle given back, so neither stays with the old key's schedule.
                    Volatile.Write(ref slot, null);
                    GiveBack(held);
                }
            }

            if (!rekeyed)
            {
                return;
            }

            held.KeyVersion = version;
            held.Used = false;
            CachedAesMetrics.HandleRekeyed();
        }

        Return(ref slot, held);
    }

    // A key change to a new epoch: the handle in `slot` (if still idle) leaves this epoch for `target`, re-keyed, or is
    // given up.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void MoveTo(ref BlockCipher? slot, BlockCipher held, KeyEpoch target, ReadOnlySpan<byte> key)
    {
        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null, held) != held)
        {
            return;
        }

        bool rekeyed = false;
        try
        {
            rekeyed = held.Used && !held.IsFaulted && held.TryRekey(key);
        }
        finally
        {
            if (!rekeyed)
            {
                GiveBack(held);
            }
        }

        if (rekeyed)
        {
            // A new epoch's key is version 0 (a later rewrite of it makes this handle's version old, and it is dropped).
            held.KeyVersion = 0;
            held.Used = false;
            CachedAesMetrics.HandleRekeyed();
            target.Adopt(held);
        }
    }

    /// <summary>Gives a handle that a key change re-keyed to this epoch: into an empty slot for its mode and direction, or back to the backend.</summary>
    private void Adopt(BlockCipher cipher)
    {
        HandleSlots slots = EnsureSlots();
        ref BlockCipher? slot = ref Volatile.Read(ref slots.Shared) is { } shared
            ? ref FirstFreeShared(shared, cipher.Mode, cipher.Encrypting)
            : ref slots.Inline(cipher.Mode, cipher.Encrypting);
        if (Unsafe.IsNullRef(ref slot)
            || Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), cipher, null) is not null)
        {
            GiveBack(cipher);
            return;
        }

        // The compare-exchange is a full fence: a release or key change that missed the handle is seen here (the ordering
        // argument).
        if (IsStale(cipher))
        {
            GiveBackFromSlot(ref slot, cipher);
        }
    }

    private static ref BlockCipher? FirstFreeShared(BlockCipher?[] shared, BlockCipherMode mode, bool encrypting)
    {
        for (int i = 0; i < HandlesPerMode; i++)
        {
            ref BlockCipher? slot = ref shared[SharedIndex(mode, encrypting, i)];
            if (Volatile.Read(ref slot) is null)
            {
                return ref slot;
            }
        }

        return ref Unsafe.NullRef<BlockCipher?>();
    }

}
