using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Selection;

namespace CachedCryptography;

/// <summary>
/// A drop-in replacement for <see cref="Aes.Create()"/> that keeps its native AES handles between calls. One
/// instance may be shared by any number of threads: concurrent calls run in parallel, each on a native handle of
/// its own, and a key change applies to every call that starts after it returns.
/// </summary>
/// <remarks>
/// <para>
/// Stock <see cref="Aes"/> creates, keys and frees a native cipher for every one-shot call
/// (<see cref="SymmetricAlgorithm.EncryptEcb(ReadOnlySpan{byte}, PaddingMode)"/>,
/// <see cref="SymmetricAlgorithm.DecryptCbc(ReadOnlySpan{byte}, ReadOnlySpan{byte}, PaddingMode)"/>, ...).
/// <see cref="CachedAes"/> keeps a native handle per mode (ECB, CBC) and direction, keyed once and reused by every later
/// call, including each step of <see cref="Aes.EncryptKeyWrapPadded(ReadOnlySpan{byte})"/> and
/// <see cref="Aes.DecryptKeyWrapPadded(ReadOnlySpan{byte})"/>. A key's first call runs on a pooled handle keyed for it
/// and gives it back, so that an instance used once and never disposed holds no handle; handles are kept from a key's
/// second call on. At most about 4,096 keys in the process keep handles at once (instances never disposed count until
/// the collector finds them); every call under a key past that bound runs as a first call does.
/// </para>
/// <para>
/// <b>Threads.</b> Everything stock allows from several threads at once works the same way here. Calls take no lock
/// and never wait; key changes, <see cref="SymmetricAlgorithm.Dispose()"/> and the making of a transform take a short
/// per-instance lock, so that they take turns. A native handle is used by one call at a time; a call that finds the
/// cached handle busy takes another from a small per-instance set, created on demand, that keeps at most one handle
/// per processor (64 at most) for each mode and direction (beyond that, a call uses a handle of its own and frees it
/// afterwards). A key change
/// (<see cref="Key"/>, <see cref="SymmetricAlgorithm.SetKey(ReadOnlySpan{byte})"/>, <see cref="KeySize"/>,
/// <see cref="GenerateKey"/>) is atomic: no call that starts after it returns uses an older key, while calls already
/// running finish with the key they started with, as on stock; the handles made with the old key are released as
/// soon as no call is using them. <see cref="SymmetricAlgorithm.Dispose()"/> never throws, releases every handle once
/// no call is using it, and, like stock, a later use silently generates a new key.
/// </para>
/// <para>
/// Everything else behaves like stock <see cref="Aes.Create()"/>: the same bytes, the same exceptions for the same
/// bad input, the same five padding modes, CFB one-shots, and <see cref="CreateEncryptor(byte[], byte[])"/> /
/// <see cref="CreateDecryptor(byte[], byte[])"/> transforms that do not depend on the instance afterwards.
/// </para>
/// <para>The key is held in unmanaged memory that the garbage collector never moves, zeroed when replaced or disposed.</para>
/// </remarks>
public sealed partial class CachedAes : Aes
{
    // The backend, the current key and the native handles made with it (none until a key is set or first needed, and
    // after Dispose), and the lock every lifecycle operation takes (see InstanceKey). Used by reference: never copied.
    private InstanceKey _key;

    /// <summary>Creates an instance with a 256-bit key generated on first use, like <see cref="Aes.Create()"/>.</summary>
    public CachedAes()
        : this(ProcessBackend.Current)
    {
    }

    /// <summary>Creates an instance over a given backend (the contract suite runs every backend through it).</summary>
    internal CachedAes(CipherBackend backend) => _key = new InstanceKey(backend);

    /// <summary>Creates a new <see cref="CachedAes"/> instance.</summary>
    /// <returns>A new instance; the caller disposes it.</returns>
    public static new CachedAes Create() => new();

    /// <summary>The native library whose handles this instance caches.</summary>
    /// <value>
    /// <see cref="CachedAesBackend.OpenSsl"/> on Linux, <see cref="CachedAesBackend.Cng"/> on Windows,
    /// <see cref="CachedAesBackend.CommonCrypto"/> on macOS, or <see cref="CachedAesBackend.StockFallback"/> where
    /// none is available (every call then behaves and costs like stock <see cref="Aes"/>); or
    /// <see cref="CachedAesBackend.CpuIntrinsics"/> where that opt-in backend was asked for and could be used (see
    /// <see cref="CachedAesDiagnostics.UseCpuIntrinsicsSwitchName"/>).
    /// </value>
    public CachedAesBackend Backend => _key.Backend.Kind;

    /// <summary>Gets or sets the secret key.</summary>
    /// <value>A copy of the key; a random key of <see cref="KeySize"/> bits is generated on first read if none was set.
    /// Read while another thread changes the key, it returns the old or the new key.</value>
    /// <exception cref="CryptographicException">The key set is null or not 16, 24 or 32 bytes long.</exception>
    public override byte[] Key
    {
        get => _key.CopyKey(KeySizeValue);

        // A key of a legal length goes straight to SetKeyCore: the base class's check (ValidKeySize) would build a new
        // LegalKeySizes array for every key set. Anything else goes through that check, which throws what stock throws
        // (a null key is an invalid key size, a CryptographicException, not an ArgumentNullException).
        set
        {
            if (value is null || !BlockCipher.IsKeySize(value.Length))
            {
                SetKey(value);
                return;
            }

            SetKeyCore(value);
        }
    }

    /// <summary>Gets the key sizes AES supports: 128 to 256 bits in steps of 64.</summary>
    /// <value>A new array on every call, as stock's, holding the same (immutable) <see cref="KeySizes"/>.</value>
    /// <remarks>
    /// Stock copies the array with <see cref="Array.Clone"/>; a new array filled here gives the same result at a
    /// fraction of the cost, and <see cref="SymmetricAlgorithm.ValidKeySize"/> reads this on every <c>Key</c> and
    /// <c>SetKey</c> (docs/design-notes.md, "Key size checks").
    /// </remarks>
    public override KeySizes[] LegalKeySizes => LegalKeySizesValue.AsSpan().ToArray();

    /// <summary>Gets or sets the key size in bits. Setting it discards the current key and its native handles.</summary>
    /// <exception cref="CryptographicException">The size is not 128, 192 or 256.</exception>
    public override int KeySize
    {
        get => base.KeySize;
        set
        {
            _key.Enter();
            try
            {
                base.KeySize = value;
                _key.Release();
            }
            finally
            {
                _key.Exit();
            }
        }
    }

    /// <summary>Replaces the key with a random one of <see cref="KeySize"/> bits and releases the native handles.</summary>
    [SkipLocalsInit] // the key buffer is filled before it is read
    public override void GenerateKey()
    {
        Span<byte> key = stackalloc byte[KeyMemory.Size];
        key = key[..(KeySizeValue / 8)];
        RandomNumberGenerator.Fill(key);
        _key.Enter();
        try
        {
            _key.Replace(key);
        }
        finally
        {
            _key.Exit();
            CryptographicOperations.ZeroMemory(key);
        }
    }

    /// <summary>Replaces <see cref="SymmetricAlgorithm.IV"/> with a random 16-byte value.</summary>
    public override void GenerateIV() => IV = RandomNumberGenerator.GetBytes(BlockSize / 8);

    /// <inheritdoc />
    /// <remarks>
    /// Validated by the base class; replaces the key and re-keys or releases the native handles made with the old one.
    /// The caller's key is read once, so a key array that another thread changes meanwhile sets one key, whole.
    /// </remarks>
    [SkipLocalsInit] // the copy is written before it is read
    protected override void SetKeyCore(ReadOnlySpan<byte> key)
    {
        // One read of the caller's memory: the stored key and every handle re-keyed with it come from this copy.
        Span<byte> copy = stackalloc byte[KeyMemory.Size];
        copy = copy[..key.Length];
        key.CopyTo(copy);
        _key.Enter();
        try
        {
            KeySizeValue = checked(8 * copy.Length);
            _key.Replace(copy);
        }
        finally
        {
            _key.Exit();
            CryptographicOperations.ZeroMemory(copy);
        }
    }

    /// <summary>
    /// Releases the key (zeroed) and every native handle once no call is using it. Never throws; a later use generates a
    /// new key, as stock does.
    /// </summary>
    /// <param name="disposing">True when called from <see cref="SymmetricAlgorithm.Dispose()"/>.</param>
    protected override void Dispose(bool disposing)
    {
        if (!disposing)
        {
            base.Dispose(disposing);
            return;
        }

        // Under the lifecycle lock, so that a transform made on another thread reads the IV before or after the base
        // class clears it, never in between.
        _key.Enter();
        try
        {
            _key.Release();
            base.Dispose(disposing);
        }
        finally
        {
            _key.Exit();
        }
    }

    // A handle for `mode` and direction with the current key, held until the lease is disposed.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private KeyEpoch.HandleLease Rent(BlockCipherMode mode, bool encrypting)
    {
        KeyEpoch.HandleLease lease = _key.TryRent(mode, encrypting);
        return lease.IsTaken ? lease : RentLocked(mode, encrypting);
    }

    // No key yet, or a lifecycle operation overtook the call: the key size is read here, off the one-shots' path.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private KeyEpoch.HandleLease RentLocked(BlockCipherMode mode, bool encrypting) => _key.RentLocked(KeySizeValue, mode, encrypting);
}
