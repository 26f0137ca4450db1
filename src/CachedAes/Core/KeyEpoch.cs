using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Threading;

namespace CachedCryptography.Core;

/// <summary>
/// One key of a <see cref="CachedAes"/> and everything made with it: the key bytes, in unmanaged memory that the GC
/// never moves or copies, and the native handles keyed from them (<c>KeyEpoch.Handles.cs</c>, <c>KeyEpoch.Cfb.cs</c>).
/// Every key change makes a new epoch and retires the old one, so an epoch's handles can only ever hold its own key.
/// </summary>
/// <remarks>
/// <para><b>Lifetime.</b> The instance points at its current epoch. A key change publishes the new one and then calls
/// <see cref="Retire"/> on the old one: from then on no call that starts can reach the old epoch, its idle handles are
/// released at once, and the handles that calls in flight still hold are released when those calls give them back.
/// Calls in flight finish with the key they started with, as on stock.</para>
/// <para><b>Key memory.</b> Being a <see cref="SafeHandle"/>, the epoch stays readable for a caller that holds a
/// reference (<see cref="TryAddRef"/>) even while its owner retires it at the same moment; the memory is zeroed and freed
/// when the last reference goes, or by the finalizer if the instance is never disposed. A caller whose
/// <see cref="TryAddRef"/> fails was overtaken by a key change and uses the instance's new key instead.</para>
/// </remarks>
internal sealed unsafe partial class KeyEpoch : SafeHandle
{
    private readonly int _length;

    // 1 once retired (an int, for Interlocked.Exchange). Read on every handle return; see KeyEpoch.Handles.cs.
    private int _retired;

    /// <summary>An epoch holding a copy of <paramref name="key"/> (16, 24 or 32 bytes, validated by the caller).</summary>
    public KeyEpoch(ReadOnlySpan<byte> key)
        : base(IntPtr.Zero, ownsHandle: true)
    {
        _length = key.Length;
        void* memory = NativeMemory.Alloc((nuint)Math.Max(1, key.Length));
        SetHandle((IntPtr)memory);
        key.CopyTo(new Span<byte>(memory, key.Length));
    }

    /// <inheritdoc />
    public override bool IsInvalid => handle == IntPtr.Zero;

    /// <summary>True once a key change replaced this epoch (or the instance was disposed).</summary>
    public bool IsRetired => Volatile.Read(ref _retired) != 0;

    /// <summary>
    /// The key bytes. Valid only while the caller holds a reference (<see cref="TryAddRef"/>) or otherwise knows the
    /// epoch cannot be released.
    /// </summary>
    public ReadOnlySpan<byte> DangerousKey => new((void*)handle, _length);

    /// <summary>An epoch with a new random key of <paramref name="keySizeBits"/>.</summary>
    [SkipLocalsInit] // the key buffer is filled before it is read
    public static KeyEpoch Generate(int keySizeBits)
    {
        Span<byte> bytes = stackalloc byte[32];
        bytes = bytes[..(keySizeBits / 8)];
        RandomNumberGenerator.Fill(bytes);
        var epoch = new KeyEpoch(bytes);
        CryptographicOperations.ZeroMemory(bytes);
        return epoch;
    }

    /// <summary>
    /// The epoch in <paramref name="current"/>, or, when there is none yet, a generated one of
    /// <paramref name="keySizeBits"/> published there (a caller that loses the race takes the winner's).
    /// </summary>
    public static KeyEpoch CurrentOrGenerated(ref KeyEpoch? current, int keySizeBits) =>
        Volatile.Read(ref current) ?? PublishGenerated(ref current, keySizeBits);

    /// <summary>
    /// Makes <paramref name="next"/> (or nothing: the next use generates a key) the instance's epoch and retires the
    /// one it replaces. Calls running on other threads are not disturbed.
    /// </summary>
    public static void Replace(ref KeyEpoch? current, KeyEpoch? next) => Interlocked.Exchange(ref current, next)?.Retire();

    /// <summary>Takes a reference that keeps the key readable; false if the epoch is already released.</summary>
    public bool TryAddRef()
    {
        bool added = false;
        try
        {
            DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            // Retired and disposed after the caller read it: the caller moves to the instance's new epoch.
        }

        return added;
    }

    /// <summary>
    /// Retires the epoch: marks it, releases every handle it keeps that no call is using (the rest are released as
    /// they come back), and disposes the key memory once no reader holds it. Called once, by the key change.
    /// </summary>
    private void Retire()
    {
        // A full fence: the mark is visible before the sweep reads a single slot (the ordering argument is in
        // KeyEpoch.Handles.cs, next to the code it protects).
        Interlocked.Exchange(ref _retired, 1);
        ReleaseIdleHandles();
        ReleaseIdleStock();
        Dispose();
    }

    private static KeyEpoch PublishGenerated(ref KeyEpoch? current, int keySizeBits)
    {
        KeyEpoch generated = Generate(keySizeBits);
        KeyEpoch? winner = Interlocked.CompareExchange(ref current, generated, null);
        if (winner is null)
        {
            return generated;
        }

        generated.Dispose();
        return winner;
    }

    /// <inheritdoc />
    protected override bool ReleaseHandle()
    {
        CryptographicOperations.ZeroMemory(new Span<byte>((void*)handle, _length));
        NativeMemory.Free((void*)handle);
        return true;
    }
}
