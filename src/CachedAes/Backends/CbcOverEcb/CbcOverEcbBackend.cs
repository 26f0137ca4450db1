using System;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.CbcOverEcb;

/// <summary>
/// A backend whose ECB handles are another backend's, and whose CBC handles are <see cref="CbcOverEcbCipher"/> over
/// that backend's ECB handles: what selection uses when a backend's ECB passes the self-test and its CBC does not.
/// </summary>
internal sealed class CbcOverEcbBackend : CipherBackend
{
    public CbcOverEcbBackend(CipherBackend inner)
    {
        ArgumentNullException.ThrowIfNull(inner);
        Inner = inner;
    }

    /// <summary>The backend whose ECB handles are used.</summary>
    public CipherBackend Inner { get; }

    /// <inheritdoc />
    public override CachedAesBackend Kind => Inner.Kind;

    /// <inheritdoc />
    public override string Description => Inner.Description + ", CBC chained over its ECB";

    /// <inheritdoc />
    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
    {
        BlockCipher ecb = Inner.Create(BlockCipherMode.Ecb, encrypting, key);
        if (mode == BlockCipherMode.Ecb)
        {
            return ecb;
        }

        // The ECB handle has no owner until the CBC handle exists: given back if making that fails (out of memory).
        bool owned = false;
        try
        {
            var cbc = new CbcOverEcbCipher(ecb, encrypting);
            owned = true;
            return cbc;
        }
        finally
        {
            if (!owned)
            {
                ecb.Release();
            }
        }
    }
}
