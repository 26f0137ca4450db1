using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Interop.OpenSsl;

/// <summary>
/// Owns an <c>EVP_CIPHER_CTX*</c>: released with <c>EVP_CIPHER_CTX_free</c> (which also cleanses any key schedule),
/// by <see cref="SafeHandle.Dispose()"/> or, if its owner is lost without being released, by the finalizer.
/// </summary>
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
