using System;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.Stock;

/// <summary>
/// The backend for platforms without a shim: each "handle" is a stock <see cref="Aes"/> instance, which itself
/// creates a native handle per call. Results and costs are those of stock <see cref="Aes.Create()"/>.
/// </summary>
internal sealed class StockBackend : CipherBackend
{
    /// <summary>The process-wide instance.</summary>
    public static StockBackend Instance { get; } = new();

    /// <summary>Tests make their own instances to count handles in isolation; everything else uses <see cref="Instance"/>.</summary>
    internal StockBackend()
    {
    }

    public override CachedAesBackend Kind => CachedAesBackend.StockFallback;

    protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new StockBlockCipher(this, mode, encrypting, key);

    private sealed class StockBlockCipher : BlockCipher
    {
        private readonly Aes _aes = Aes.Create();
        private CryptographicException? _failure;

        public StockBlockCipher(CipherBackend backend, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
            : base(backend)
        {
            Mode = mode;
            Encrypting = encrypting;
            _aes.SetKey(key);
        }

        public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
        {
            try
            {
                _ = (Mode, Encrypting) switch
                {
                    (BlockCipherMode.Ecb, true) => _aes.EncryptEcb(input, output, PaddingMode.None),
                    (BlockCipherMode.Ecb, false) => _aes.DecryptEcb(input, output, PaddingMode.None),
                    (_, true) => _aes.EncryptCbc(input, iv, output, PaddingMode.None),
                    (_, false) => _aes.DecryptCbc(input, iv, output, PaddingMode.None),
                };
                return true;
            }
            catch (CryptographicException e)
            {
                // Reported through the seam like a native failure.
                _failure = e;
                Fault();
                return false;
            }
        }

        public override CryptographicException CreateFailure() => _failure ?? new CryptographicException("No failure was recorded.");

        protected override void ReleaseCore() => _aes.Dispose();
    }
}
