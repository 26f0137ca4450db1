namespace CachedCryptography.Core;

/// <summary>
/// Something an instance keeps between calls that was made with one of its keys: a native cipher handle,
/// or the stock instance that serves CFB. <see cref="KeyedHandles"/> hands each one to exactly one caller
/// at a time and checks that <see cref="Key"/> is still the instance's current key before every reuse.
/// </summary>
internal abstract class KeyedResource
{
    /// <summary>
    /// The key it was made with, compared by reference: every key change makes a new <see cref="KeyBox"/>, so a
    /// handle made with any other key never compares equal. (A plain reference, not a reader's reference count: the
    /// key bytes are not read through it.) Cleared when a pooled handle is keyed again.
    /// </summary>
    internal KeyBox? Key;

    /// <summary>True once a native call has failed: its state is unknown, so it must be released, never reused.</summary>
    public bool IsFaulted { get; protected set; }

    /// <summary>Frees the native state (or, where a backend pools contexts, cleanses and pools it). Called once, by the holder.</summary>
    public abstract void Release();
}
