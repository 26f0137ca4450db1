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

    /// <summary>The pool whose live-context count this context is part of, until it is freed.</summary>
    internal OpenSslContextPool? Pool { get; set; }

    protected override bool ReleaseHandle()
    {
        Libcrypto.EVP_CIPHER_CTX_free(handle);

        // Also on finalization: a context whose owner was lost (a transform never disposed) is counted as freed here.
        Pool?.OnContextFreed();
        return true;
    }
}
