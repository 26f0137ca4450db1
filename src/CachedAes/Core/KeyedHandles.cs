using System;
using System.Diagnostics;
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
/// <para><b>Ownership.</b> A slot holds a handle nobody is using. <see cref="Rent"/> takes a handle out with
/// <see cref="Interlocked.Exchange{T}(ref T, T)"/>, so exactly one caller holds it, and the lease puts it back with
/// <see cref="Interlocked.CompareExchange{T}(ref T, T, T)"/> into an empty slot. Nothing waits and nothing
/// throws because another caller is busy: a caller that finds the slot empty takes a spare, or makes a new
/// handle. Slots only ever move between "empty" and "a handle nobody holds", so an exchange can never hand
/// out a handle that is in use (no ABA).</para>
/// <para><b>Key changes.</b> Every key change makes a new <see cref="KeyBox"/>, and every handle records the box it
/// was keyed with (<see cref="KeyedResource.Key"/>). A key change publishes the new key first and then empties every
/// slot; a handle is reused only if its key is the current one, checked when it is taken and when it is put back
/// (and once more after it is put back, in case a key change emptied the slots in between). So
/// once a key change returns, no call that starts later can get a handle made with an older key, while calls
/// already running finish with the handle, and key, they started with. The key memory itself is reference
/// counted (<see cref="KeyBox"/>), so a key being read to make a handle is never freed under the reader.</para>
/// <para><b>Bounds.</b> At most <see cref="HandlesPerMode"/> handles per mode and direction stay cached
/// (the processor count, at least 1, at most 64); a caller that finds all of them busy uses a handle of its own
/// for that call and releases it afterwards. Handles alive therefore never exceed the number of calls running
/// at once, and cached ones never exceed that bound.</para>
/// </remarks>
internal struct KeyedHandles
{
    /// <summary>How many handles per mode and direction stay cached at most.</summary>
    internal static readonly int HandlesPerMode = Math.Clamp(Environment.ProcessorCount, 1, 64);

    private readonly CipherBackend _backend;
    private KeyBox? _key;
    private BlockCipher? _ecbEncrypt;
    private BlockCipher? _ecbDecrypt;
    private BlockCipher? _cbcEncrypt;
    private BlockCipher? _cbcDecrypt;

    // HandlesPerMode - 1 spare slots per mode and direction, allocated the first time two callers contend.
    private BlockCipher?[]? _spares;
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
        ref BlockCipher? home = ref Slot(mode, encrypting);
        BlockCipher? cipher = Take(ref home);
        KeyBox? key = Volatile.Read(ref _key);
        if (cipher is null || key is null || cipher.Key != key)
        {
            cipher = RentSlow(mode, encrypting, keySizeBits, cipher);
        }

        return new HandleLease(ref this, ref home, cipher);
    }

    /// <summary>Gives back a handle taken by <see cref="Rent"/> (called by <see cref="HandleLease.Dispose"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(ref BlockCipher? home, BlockCipher cipher)
    {
        KeyBox? key = Volatile.Read(ref _key);
        if (!cipher.IsFaulted && key is not null && cipher.Key == key && TryPut(ref home, cipher))
        {
            // Put back. A key change publishes its key before it empties the slots; if it did both since the check above,
            // the slot now holds a stale handle that its sweep missed, so look once more.
            if (Volatile.Read(ref _key) != key)
            {
                TakeBackStale(ref home, cipher);
            }

            return;
        }

        ReturnSlow(cipher, key);
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
        ReleaseCached(ref _ecbEncrypt);
        ReleaseCached(ref _ecbDecrypt);
        ReleaseCached(ref _cbcEncrypt);
        ReleaseCached(ref _cbcDecrypt);
        if (Volatile.Read(ref _spares) is { } spares)
        {
            for (int i = 0; i < spares.Length; i++)
            {
                ReleaseCached(ref spares[i]);
            }
        }

        ReleaseCached(ref _cfb);
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

    internal void ReturnCfb(StockCfb cfb)
    {
        KeyBox? key = Volatile.Read(ref _key);
        if (key is null || cfb.Key != key || !TryPutBack(ref _cfb, cfb, key))
        {
            cfb.Release();
        }
    }

    /// <summary>How many handles for <paramref name="mode"/> and direction are cached right now (a test seam).</summary>
    internal int CachedCount(BlockCipherMode mode, bool encrypting)
    {
        int count = Slot(mode, encrypting) is null ? 0 : 1;
        if (Volatile.Read(ref _spares) is { } spares)
        {
            int start = SpareStart(mode, encrypting);
            for (int i = 0; i < HandlesPerMode - 1; i++)
            {
                count += spares[start + i] is null ? 0 : 1;
            }
        }

        return count;
    }

    /// <summary>The handle cached in the main slot for <paramref name="mode"/> and direction, or null (a test seam).</summary>
    internal BlockCipher? Peek(BlockCipherMode mode, bool encrypting) => Slot(mode, encrypting);

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

    private static int SpareStart(BlockCipherMode mode, bool encrypting) =>
        ((int)mode * 2 + (encrypting ? 0 : 1)) * (HandlesPerMode - 1);

    // The main slot was empty or held a handle from an older key: try the spares, then make a new handle.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private BlockCipher RentSlow(BlockCipherMode mode, bool encrypting, int keySizeBits, BlockCipher? stale)
    {
        stale?.Release();

        if (Volatile.Read(ref _spares) is { } spares)
        {
            int start = SpareStart(mode, encrypting);
            for (int i = 0; i < HandlesPerMode - 1; i++)
            {
                ref BlockCipher? slot = ref spares[start + i];
                if (Volatile.Read(ref slot) is not null && Take(ref slot) is { } spare)
                {
                    KeyBox? current = Volatile.Read(ref _key);
                    if (current is not null && spare.Key == current)
                    {
                        return spare;
                    }

                    spare.Release();
                }
            }
        }

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

    // The slot operations, on the object overloads of Interlocked: the generic overloads run as shared generic code with
    // a run-time type test on every call (more than a hundred instructions on this hot path, measured with callgrind).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T? Take<T>(ref T? slot)
        where T : class => Unsafe.As<T?>(Interlocked.Exchange(ref Unsafe.As<T?, object?>(ref slot), null));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool TryPut<T>(ref T? slot, T item)
        where T : class => Interlocked.CompareExchange(ref Unsafe.As<T?, object?>(ref slot), item, null) is null;

    // A handle was put back just as a key change emptied the slots: take it out again and release it, unless another
    // caller already took it (that caller checks its generation and releases it).
    private static void TakeBackStale<T>(ref T? slot, T item)
        where T : KeyedResource
    {
        if (Interlocked.CompareExchange(ref Unsafe.As<T?, object?>(ref slot), null, item) == item)
        {
            item.Release();
        }
    }

    // The main slot was taken (another caller put its handle there first), the handle is stale or faulted, or there
    // is no key: try a spare slot, else release the handle.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(BlockCipher cipher, KeyBox? key)
    {
        if (!cipher.IsFaulted && key is not null && cipher.Key == key && TryPutSpare(cipher, key))
        {
            return;
        }

        cipher.Release();
    }

    // Puts an unused resource into an empty slot, checking afterwards that no key change raced the put. True when the
    // caller no longer holds it.
    private bool TryPutBack<T>(ref T? slot, T item, KeyBox key)
        where T : KeyedResource
    {
        if (!TryPut(ref slot, item))
        {
            return false;
        }

        if (Volatile.Read(ref _key) != key)
        {
            TakeBackStale(ref slot, item);
        }

        return true;
    }

    private bool TryPutSpare(BlockCipher cipher, KeyBox key)
    {
        if (HandlesPerMode == 1)
        {
            return false;
        }

        BlockCipher?[] spares = Volatile.Read(ref _spares) ?? AllocateSpares();
        int start = SpareStart(cipher.Mode, cipher.Encrypting);
        for (int i = 0; i < HandlesPerMode - 1; i++)
        {
            ref BlockCipher? slot = ref spares[start + i];
            if (Volatile.Read(ref slot) is null && TryPutBack(ref slot, cipher, key))
            {
                return true;
            }
        }

        return false;
    }

    private BlockCipher?[] AllocateSpares()
    {
        var spares = new BlockCipher?[4 * (HandlesPerMode - 1)];
        return Interlocked.CompareExchange(ref _spares, spares, null) ?? spares;
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

    private static void ReleaseCached<T>(ref T? slot)
        where T : KeyedResource
    {
        // A plain read first: most slots are empty, and an interlocked exchange on each would cost more than the rest
        // of a key change. A handle put there after this read is taken back by its own post-put check.
        if (Volatile.Read(ref slot) is not null)
        {
            Take(ref slot)?.Release();
        }
    }
}

/// <summary>A cached native handle held by one caller; <see cref="Dispose"/> gives it back. Use it with <c>using</c>.</summary>
internal ref struct HandleLease
{
    private readonly ref KeyedHandles _owner;
    private readonly ref BlockCipher? _home;

    internal HandleLease(ref KeyedHandles owner, ref BlockCipher? home, BlockCipher cipher)
    {
        _owner = ref owner;
        _home = ref home;
        Cipher = cipher;
    }

    /// <summary>The handle, keyed with the instance's key as of the moment it was taken.</summary>
    public BlockCipher Cipher { get; }

    public readonly void Dispose() => _owner.Return(ref _home, Cipher);
}

/// <summary>The stock instance that serves CFB, held by one caller; <see cref="Dispose"/> gives it back.</summary>
internal ref struct CfbLease
{
    private readonly ref KeyedHandles _owner;
    private readonly StockCfb _cfb;

    internal CfbLease(ref KeyedHandles owner, StockCfb cfb)
    {
        _owner = ref owner;
        _cfb = cfb;
    }

    /// <summary>A stock <see cref="System.Security.Cryptography.Aes"/> holding the instance's key.</summary>
    public readonly Aes Aes => _cfb.Aes;

    public readonly void Dispose() => _owner.ReturnCfb(_cfb);
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
