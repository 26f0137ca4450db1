using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Core;

/// <summary>
/// Where one key epoch caches its native handles: one inline slot per mode and direction, then (once two callers meet)
/// the shared slots. The lease protocol that fills and empties them is <c>KeyEpoch.Slots.cs</c>.
/// </summary>
/// <remarks>
/// A separate object from its epoch, made when the epoch caches its first handle, so that when the epoch is dropped
/// without being released the handles are still reachable from its key memory, and the sweep that finds dropped keys
/// gives them back (<see cref="ReleaseDropped"/>, <see cref="DroppedKeys"/>). Fields, not properties: the lease protocol
/// takes references to the slots.
/// </remarks>
internal sealed class HandleSlots
{
    /// <summary>Marks a reserved slot (<see cref="BusyMarker"/>). Never used as a handle.</summary>
    internal static readonly BlockCipher Busy = new BusyMarker();

    /// <summary>The inline slots, used until two callers meet on one of them.</summary>
    internal BlockCipher? EcbEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? EcbDecrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? CbcEncrypt;

    /// <inheritdoc cref="EcbEncrypt"/>
    internal BlockCipher? CbcDecrypt;

    /// <summary>The shared slots (<c>KeyEpoch.SharedSlots.cs</c>), once two callers have met; null until then.</summary>
    internal BlockCipher?[]? Shared;

    /// <summary>Whether <paramref name="held"/> is a handle: neither empty nor the busy marker.</summary>
    internal static bool IsHandle(BlockCipher? held) => held is not null && held != Busy;

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

    /// <summary>
    /// The epoch was dropped without being released, and the collector has found it unreachable: gives back every handle
    /// in the slots (to its backend, which may pool it) and returns how many. Nothing else can reach these slots any more:
    /// a call in flight holds its epoch, and the epoch is gone.
    /// </summary>
    internal int ReleaseDropped()
    {
        int released = Release(ref EcbEncrypt) + Release(ref EcbDecrypt) + Release(ref CbcEncrypt) + Release(ref CbcDecrypt);
        if (Volatile.Read(ref Shared) is { } shared)
        {
            for (int i = 0; i < shared.Length; i++)
            {
                released += Release(ref shared[i]);
            }
        }

        return released;
    }

    private static int Release(ref BlockCipher? slot)
    {
        BlockCipher? held = Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null));
        if (!IsHandle(held))
        {
            return 0;
        }

        held!.Release();
        return 1;
    }

}
