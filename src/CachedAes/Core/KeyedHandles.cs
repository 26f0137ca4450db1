using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Interop;

namespace CachedCryptography.Core;

/// <summary>
/// The key of one <see cref="CachedAes"/> and everything made with it: the cached native handles (one slot per
/// mode and direction, plus spare slots used only when threads contend) and the stock instance that serves CFB.
/// Lives inline in its owner (a struct field), so a new instance allocates nothing here until it needs to.
/// </summary>
/// <remarks>
/// <para><b>Ownership.</b> A slot is empty, holds a handle nobody is using, or is reserved: marked busy by the one
/// caller that holds its handle (or is making one for it). <see cref="Rent"/> reserves a slot with one
/// <see cref="Interlocked.Exchange(ref object, object)"/>, which hands it whatever the slot held, and the lease puts the
/// handle back with a plain store: nobody else writes a reserved slot (other callers exchange "busy" for "busy", which
/// changes nothing; key changes leave busy slots alone). So a native handle is never used by two callers at once, each
/// call pays one interlocked operation, and nothing waits or throws because another caller is busy.</para>
/// <para><b>One thread, then several.</b> An instance used by one thread at a time keeps one slot per mode and direction
/// inline. The first time a caller finds that slot reserved, the instance switches for good to shared slots: an array
/// with one slot per processor for each mode and direction, each slot on a cache line of its own, and each thread
/// starting at a slot of its own (<see cref="t_hint"/>). Threads then neither wait for each other nor write a cache
/// line that another thread reads on every call (the inline slots sit beside the key, which every call reads). A
/// caller that finds every shared slot reserved uses a handle of its own for the call.</para>
/// <para><b>Key changes.</b> Every key change makes a new <see cref="KeyBox"/>, and every handle records the box it
/// was keyed with (<see cref="KeyedResource.Key"/>). A key change publishes the new key first and then empties every
/// slot that holds a handle; a handle is reused only if its key is the current one, checked when it is taken and when
/// it is put back, and once more after it is put back. So once a key change returns, no call that starts later can get
/// a handle made with an older key, while calls already running finish with the handle, and key, they started with.
/// The key memory itself is reference counted (<see cref="KeyBox"/>), so a key being read to make a handle is never
/// freed under the reader.</para>
/// <para><b>Bounds.</b> At most <see cref="HandlesPerMode"/> handles per mode and direction stay cached (the processor
/// count, at least 1, at most 64), one per slot; a handle is made only by a caller that reserved an empty slot or found
/// every slot reserved, so with k callers at once no more than k handles per mode and direction are kept.</para>
/// </remarks>
internal struct KeyedHandles
{
    /// <summary>How many handles per mode and direction stay cached at most.</summary>
    internal static readonly int HandlesPerMode = Math.Clamp(Environment.ProcessorCount, 1, 64);

    // Shared slots are this many references apart (64 bytes), so no two share a cache line. The first stride of the
    // array is left empty: a slot there would share a line with the array's length, which every caller reads.
    private const int SharedStride = 8;

    // Marks a reserved slot. Never used as a handle.
    private static readonly BlockCipher s_busy = new BusyMarker();

    // Where a thread starts looking among the shared slots: threads are numbered in the order they first need one, so
    // that concurrent threads start at different slots.
    [ThreadStatic]
    private static int t_hint;

    private static int s_lastHint;

    private readonly CipherBackend _backend;
    private KeyBox? _key;
    private BlockCipher? _ecbEncrypt;
    private BlockCipher? _ecbDecrypt;
    private BlockCipher? _cbcEncrypt;
    private BlockCipher? _cbcDecrypt;

    // HandlesPerMode shared slots per mode and direction, SharedStride apart, allocated the first time two callers
    // contend; from then on the inline slots are no longer used (a handle taken from one moves to a shared slot).
    private BlockCipher?[]? _shared;
    private StockCfb? _cfb;

    public KeyedHandles(CipherBackend backend) => _backend = backend;

    public readonly CipherBackend Backend => _backend;

    /// <summary>
    /// Takes the cached handle for <paramref name="mode"/> and direction, or a spare, or makes one with the current
    /// key (generating a key of <paramref name="keySizeBits"/> first if there is none). Dispose the lease to give it back.
    /// </summary>
    /// <exception cref="CryptographicException">The native library could not make a handle.</exception>
    [UnscopedRef]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public HandleLease Rent(BlockCipherMode mode, bool encrypting, int keySizeBits)
    {
        if (_shared is not null)
        {
            return RentShared(mode, encrypting, keySizeBits);
        }

        ref BlockCipher? slot = ref Slot(mode, encrypting);
        BlockCipher? held = Reserve(ref slot);
        KeyBox? key = Volatile.Read(ref _key);
        if (held is null || key is null || held.Key != key)
        {
            // Also the busy marker: its Key is always null.
            return RentSlow(ref slot, held, mode, encrypting, keySizeBits);
        }

        return new HandleLease(ref this, ref slot, held);
    }

    /// <summary>Gives back a handle taken by <see cref="Rent"/> (called by <see cref="HandleLease.Dispose"/>).</summary>
    /// <param name="slot">The slot the caller reserved, or a null reference for a handle of the caller's own.</param>
    /// <param name="cipher">The handle.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(ref BlockCipher? slot, BlockCipher cipher)
    {
        KeyBox? key = Volatile.Read(ref _key);
        if (!Unsafe.IsNullRef(ref slot) && !cipher.IsFaulted && key is not null && cipher.Key == key
            && (_shared is null || !IsInlineSlot(ref slot)))
        {
            Volatile.Write(ref slot, cipher);

            // A key change since the check above left this slot alone (it was reserved): take the handle back. On its
            // own this read can miss a key change that races the store; see ReleaseCachedHandles for the other half.
            if (Volatile.Read(ref _key) != key)
            {
                ReclaimStale(ref slot, cipher);
            }

            return;
        }

        ReturnSlow(ref slot, cipher, key);
    }

    /// <summary>The current key, with a reference taken (call <see cref="System.Runtime.InteropServices.SafeHandle.DangerousRelease"/>); generated first if there is none.</summary>
    public KeyBox AcquireKey(int keySizeBits)
    {
        while (true)
        {
            KeyBox key = Volatile.Read(ref _key) ?? PublishGeneratedKey(keySizeBits);
            if (key.TryAddRef())
            {
                return key;
            }
        }
    }

    /// <summary>
    /// Makes <paramref name="key"/> (or no key: the next use generates one) the instance's key, releases every cached
    /// handle, and disposes the old key once no reader holds it. Calls running on other threads are not disturbed.
    /// </summary>
    public void ReplaceKey(KeyBox? key)
    {
        KeyBox? old = Interlocked.Exchange(ref _key, key);
        ReleaseCachedHandles();
        if (Volatile.Read(ref _cfb) is not null)
        {
            Take(ref _cfb)?.Release();
        }

        old?.Dispose();
    }

    /// <summary>A new random key of <paramref name="keySizeBits"/>.</summary>
    [SkipLocalsInit] // the key buffer is filled before it is read
    public static KeyBox GenerateKey(int keySizeBits)
    {
        Span<byte> bytes = stackalloc byte[32];
        bytes = bytes[..(keySizeBits / 8)];
        RandomNumberGenerator.Fill(bytes);
        KeyBox key = new(bytes);
        CryptographicOperations.ZeroMemory(bytes);
        return key;
    }

    /// <summary>Takes the stock instance that serves CFB (made with the current key if none is cached). Dispose the lease to give it back.</summary>
    [UnscopedRef]
    public CfbLease RentCfb(int keySizeBits)
    {
        StockCfb? cfb = Take(ref _cfb);
        KeyBox? current = Volatile.Read(ref _key);
        if (cfb is null || current is null || cfb.Key != current)
        {
            cfb?.Release();
            KeyBox key = AcquireKey(keySizeBits);
            try
            {
                cfb = new StockCfb(key.DangerousSpan) { Key = key };
            }
            finally
            {
                key.DangerousRelease();
            }
        }

        return new CfbLease(ref this, cfb);
    }

    // CFB is not a hot path: its slot is filled with an interlocked compare-exchange (and never reserved).
    internal void ReturnCfb(StockCfb cfb)
    {
        KeyBox? key = Volatile.Read(ref _key);
        if (key is not null && cfb.Key == key && Interlocked.CompareExchange(ref _cfb, cfb, null) is null)
        {
            // A key change that emptied the slot before this put would have missed it.
            if (Volatile.Read(ref _key) != key && Interlocked.CompareExchange(ref _cfb, null, cfb) == cfb)
            {
                cfb.Release();
            }

            return;
        }

        cfb.Release();
    }

    /// <summary>How many handles for <paramref name="mode"/> and direction are cached and not in use right now (a test seam).</summary>
    internal int CachedCount(BlockCipherMode mode, bool encrypting)
    {
        int count = IsHandle(Slot(mode, encrypting)) ? 1 : 0;
        if (Volatile.Read(ref _shared) is { } shared)
        {
            for (int i = 0; i < HandlesPerMode; i++)
            {
                count += IsHandle(shared[SharedIndex(mode, encrypting, i)]) ? 1 : 0;
            }
        }

        return count;
    }

    /// <summary>The handle cached in the main slot for <paramref name="mode"/> and direction, or null (a test seam).</summary>
    internal BlockCipher? Peek(BlockCipherMode mode, bool encrypting)
    {
        BlockCipher? held = Slot(mode, encrypting);
        return IsHandle(held) ? held : null;
    }

    [UnscopedRef]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref BlockCipher? Slot(BlockCipherMode mode, bool encrypting)
    {
        if (mode == BlockCipherMode.Ecb)
        {
            return ref encrypting ? ref _ecbEncrypt : ref _ecbDecrypt;
        }

        return ref encrypting ? ref _cbcEncrypt : ref _cbcDecrypt;
    }

    private static int SharedIndex(BlockCipherMode mode, bool encrypting, int i) =>
        ((((int)mode * 2) + (encrypting ? 0 : 1)) * HandlesPerMode + i + 1) * SharedStride;

    private static int ThreadHint
    {
        get
        {
            int hint = t_hint;
            return hint != 0 ? hint : t_hint = Interlocked.Increment(ref s_lastHint) & int.MaxValue;
        }
    }

    private static bool IsHandle(BlockCipher? held) => held is not null && held != s_busy;

    // The object overloads of Interlocked: the generic ones run as shared generic code with a run-time type test on every
    // call (more than a hundred instructions on this hot path, measured with callgrind).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static BlockCipher? Reserve(ref BlockCipher? slot) =>
        Unsafe.As<BlockCipher?>(Interlocked.Exchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), s_busy));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T? Take<T>(ref T? slot)
        where T : class => Unsafe.As<T?>(Interlocked.Exchange(ref Unsafe.As<T?, object?>(ref slot), null));

    // The inline slot was reserved by another caller, empty, or held a handle made with an older key (or there is no key).
    [UnscopedRef]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private HandleLease RentSlow(ref BlockCipher? slot, BlockCipher? held, BlockCipherMode mode, bool encrypting, int keySizeBits)
    {
        if (held != s_busy)
        {
            return RentReserved(ref slot, held, mode, encrypting, keySizeBits);
        }

        // Two callers at once: switch to the shared slots for good.
        if (Volatile.Read(ref _shared) is null)
        {
            Interlocked.CompareExchange(ref _shared, new BlockCipher?[((4 * HandlesPerMode) + 1) * SharedStride], null);
        }

        return RentShared(mode, encrypting, keySizeBits);
    }

    // A shared slot, starting at this thread's own; a handle of the call's own when every one is reserved.
    [UnscopedRef]
    private HandleLease RentShared(BlockCipherMode mode, bool encrypting, int keySizeBits)
    {
        BlockCipher?[] shared = _shared!;
        int count = HandlesPerMode;
        int start = ThreadHint % count;
        for (int n = 0; n < count; n++)
        {
            int i = start + n < count ? start + n : start + n - count;
            ref BlockCipher? slot = ref shared[SharedIndex(mode, encrypting, i)];
            if (Volatile.Read(ref slot) == s_busy)
            {
                continue;
            }

            BlockCipher? held = Reserve(ref slot);
            if (held != s_busy)
            {
                // An empty shared slot: a handle still waiting in the inline slot (made before the switch) moves here.
                return RentReserved(ref slot, held ?? TakeInline(mode, encrypting), mode, encrypting, keySizeBits);
            }
        }

        // Every slot is reserved: a handle of this call's own, released when it returns (not cached).
        return new HandleLease(ref this, ref Unsafe.NullRef<BlockCipher?>(), Create(mode, encrypting, keySizeBits));
    }

    // The handle in the inline slot, if one is waiting there (the slot is left empty); null otherwise.
    private BlockCipher? TakeInline(BlockCipherMode mode, bool encrypting)
    {
        ref BlockCipher? inline = ref Slot(mode, encrypting);
        if (!IsHandle(Volatile.Read(ref inline)))
        {
            return null;
        }

        BlockCipher? held = Reserve(ref inline);
        if (held == s_busy)
        {
            return null;
        }

        Volatile.Write(ref inline, null);
        return held;
    }

    // This caller holds the reservation of `slot`, which held `held` (nothing, or a handle that may be stale).
    [UnscopedRef]
    private HandleLease RentReserved(ref BlockCipher? slot, BlockCipher? held, BlockCipherMode mode, bool encrypting, int keySizeBits)
    {
        KeyBox? key = Volatile.Read(ref _key);
        if (held is not null && key is not null && held.Key == key)
        {
            return new HandleLease(ref this, ref slot, held);
        }

        held?.Release();
        BlockCipher created;
        try
        {
            created = Create(mode, encrypting, keySizeBits);
        }
        catch
        {
            // Give the reservation up, or the slot would stay busy for good.
            Volatile.Write(ref slot, null);
            throw;
        }

        return new HandleLease(ref this, ref slot, created);
    }

    private BlockCipher Create(BlockCipherMode mode, bool encrypting, int keySizeBits)
    {
        KeyBox key = AcquireKey(keySizeBits);
        try
        {
            BlockCipher created = _backend.Create(mode, encrypting, key.DangerousSpan);
            created.Key = key;
            return created;
        }
        finally
        {
            key.DangerousRelease();
        }
    }

    // A handle of the caller's own, a faulted one, one made with an older key (released, and the slot freed), or a
    // handle taken from the inline slot after the switch to shared slots (moved to a free shared slot if there is one).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(ref BlockCipher? slot, BlockCipher cipher, KeyBox? key)
    {
        if (Unsafe.IsNullRef(ref slot))
        {
            cipher.Release();
            return;
        }

        Volatile.Write(ref slot, null);
        if (cipher.IsFaulted || key is null || cipher.Key != key || _shared is not { } shared)
        {
            cipher.Release();
            return;
        }

        BlockCipherMode mode = cipher.Mode;
        bool encrypting = cipher.Encrypting;
        for (int i = 0; i < HandlesPerMode; i++)
        {
            ref BlockCipher? free = ref shared[SharedIndex(mode, encrypting, i)];
            if (Volatile.Read(ref free) is null
                && Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref free), cipher, null) is null)
            {
                if (Volatile.Read(ref _key) != key)
                {
                    ReclaimStale(ref free, cipher);
                }

                return;
            }
        }

        cipher.Release();
    }

    private readonly bool IsInlineSlot(ref BlockCipher? slot) =>
        Unsafe.AreSame(ref slot, ref Unsafe.AsRef(in _ecbEncrypt)) || Unsafe.AreSame(ref slot, ref Unsafe.AsRef(in _ecbDecrypt))
        || Unsafe.AreSame(ref slot, ref Unsafe.AsRef(in _cbcEncrypt)) || Unsafe.AreSame(ref slot, ref Unsafe.AsRef(in _cbcDecrypt));

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReclaimStale(ref BlockCipher? slot, BlockCipher cipher)
    {
        // Unless another caller already reserved the slot (it then checks the handle's key itself and releases it).
        if (Interlocked.CompareExchange(ref Unsafe.As<BlockCipher?, object?>(ref slot), null, cipher) == cipher)
        {
            cipher.Release();
        }
    }

    // Empties every slot that holds a handle. A caller giving its handle back (Return) stores it with a plain store and
    // then rereads the key; the processor may let that read pass the store, so such a caller can miss this key change
    // while the sweep below misses its store. When the sweep found a reserved slot (a call in flight), a process-wide
    // memory barrier then makes every other thread's earlier stores visible here, and any later read of the key there
    // see the new one; a second sweep takes what was put back meanwhile. Paid only when a call was in flight.
    private void ReleaseCachedHandles()
    {
        if (SweepHandles())
        {
            Interlocked.MemoryBarrierProcessWide();
            SweepHandles();
        }
    }

    // True when a slot was reserved.
    private bool SweepHandles()
    {
        bool reserved = Sweep(ref _ecbEncrypt) | Sweep(ref _ecbDecrypt) | Sweep(ref _cbcEncrypt) | Sweep(ref _cbcDecrypt);
        if (Volatile.Read(ref _shared) is { } shared)
        {
            for (int i = SharedStride; i < shared.Length; i += SharedStride)
            {
                reserved |= Sweep(ref shared[i]);
            }
        }

        return reserved;
    }

    private static bool Sweep(ref BlockCipher? slot)
    {
        // A plain read first: most slots are empty, and an interlocked operation on each would cost more than the rest of
        // a key change. A reserved slot is left to the caller that holds it.
        BlockCipher? held = Volatile.Read(ref slot);
        if (held is null)
        {
            return false;
        }

        if (held == s_busy)
        {
            return true;
        }

        ReclaimStale(ref slot, held);
        return false;
    }

    private KeyBox PublishGeneratedKey(int keySizeBits)
    {
        KeyBox generated = GenerateKey(keySizeBits);
        KeyBox? winner = Interlocked.CompareExchange(ref _key, generated, null);
        if (winner is null)
        {
            return generated;
        }

        generated.Dispose();
        return winner;
    }

    /// <summary>The object that marks a reserved slot.</summary>
    private sealed class BusyMarker : BlockCipher
    {
        public BusyMarker()
            : base(null!)
        {
        }

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output) =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        public override CryptographicException CreateFailure() =>
            throw new InvalidOperationException("The busy marker is not a handle.");

        protected override void ReleaseCore() =>
            throw new InvalidOperationException("The busy marker is not a handle.");
    }
}

/// <summary>A cached native handle held by one caller; <see cref="Dispose"/> gives it back. Use it with <c>using</c>.</summary>
internal readonly ref struct HandleLease
{
    private readonly ref KeyedHandles _owner;
    private readonly ref BlockCipher? _slot;

    internal HandleLease(ref KeyedHandles owner, ref BlockCipher? slot, BlockCipher cipher)
    {
        _owner = ref owner;
        _slot = ref slot;
        Cipher = cipher;
    }

    /// <summary>The handle, keyed with the instance's key as of the moment it was taken.</summary>
    public BlockCipher Cipher { get; }

    public void Dispose() => _owner.Return(ref _slot, Cipher);
}

/// <summary>The stock instance that serves CFB, held by one caller; <see cref="Dispose"/> gives it back.</summary>
internal readonly ref struct CfbLease
{
    private readonly ref KeyedHandles _owner;
    private readonly StockCfb _cfb;

    internal CfbLease(ref KeyedHandles owner, StockCfb cfb)
    {
        _owner = ref owner;
        _cfb = cfb;
    }

    /// <summary>A stock <see cref="System.Security.Cryptography.Aes"/> holding the instance's key.</summary>
    public Aes Aes => _cfb.Aes;

    public void Dispose() => _owner.ReturnCfb(_cfb);
}

/// <summary>
/// CFB is not cached natively: its one-shots run on a stock <see cref="Aes"/> holding the same key, kept between
/// calls like a handle.
/// </summary>
internal sealed class StockCfb : KeyedResource
{
    public StockCfb(ReadOnlySpan<byte> key)
    {
        Aes = Aes.Create();
        Aes.SetKey(key);
    }

    public Aes Aes { get; }

    public override void Release() => Aes.Dispose();
}
