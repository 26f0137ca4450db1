using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>Owns an <c>EVP_CIPHER_CTX*</c>; released with <c>EVP_CIPHER_CTX_free</c> (which also cleanses the key schedule).</summary>
internal sealed class SafeEvpCipherCtxHandle : SafeHandle
{
    public SafeEvpCipherCtxHandle()
        : base(IntPtr.Zero, ownsHandle: true)
    {
    }

    public override bool IsInvalid => handle == IntPtr.Zero;

    protected override bool ReleaseHandle()
    {
        Libcrypto.EVP_CIPHER_CTX_free(handle);
        return true;
    }
}
