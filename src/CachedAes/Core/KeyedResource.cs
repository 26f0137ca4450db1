namespace CachedCryptography.Core;

/// <summary>
/// Something an instance keeps between calls that was made with one of its keys: a native cipher handle,
/// or the stock instance that serves CFB. <see cref="KeyedHandles"/> hands each one to exactly one caller
/// at a time and compares <see cref="KeyGeneration"/> with the current key's before every reuse.
/// </summary>
internal abstract class KeyedResource
{
    /// <summary>The <see cref="KeyBox.Generation"/> of the key it was made with.</summary>
    internal long KeyGeneration;

    /// <summary>True once a native call has failed: its state is unknown, so it must be released, never reused.</summary>
    public bool IsFaulted { get; protected set; }

    /// <summary>Frees the native state (or, where a backend pools contexts, cleanses and pools it). Called once, by the holder.</summary>
    public abstract void Release();
}
