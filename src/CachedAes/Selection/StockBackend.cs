using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Selection;

/// <summary>
/// The backend selection falls back to when no native backend can be used (none for the platform, its library missing,
/// its self-test failed, or the stock path forced): each "handle" is a stock <see cref="Aes"/> instance, which itself
/// creates a native handle per call. Results and costs are those of stock <see cref="Aes.Create()"/>.
/// </summary>
internal sealed class StockBackend : CipherBackend
{
    /// <summary>The process-wide instance.</summary>
    public static StockBackend Instance { get; } = new();

    private StockBackend()
    {
    }

    public override CachedAesBackend Kind => CachedAesBackend.StockFallback;

    public override string Description => "stock System.Security.Cryptography.Aes";

    public override BlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new StockBlockCipher(mode, encrypting, key);

    private sealed class StockBlockCipher : BlockCipher
    {
        private readonly Aes _aes = Aes.Create();
        private CryptographicException? _failure;

        public StockBlockCipher(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
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

        public override CryptographicException CreateFailure() => _failure ?? Errors.NoFailureRecorded("stock Aes");

        public override void Release() => _aes.Dispose();

        public override bool TryRekey(ReadOnlySpan<byte> key)
        {
            try
            {
                _aes.SetKey(key);
                return true;
            }
            catch (CryptographicException e)
            {
                // Reported by return value, as the seam asks: the caller gives the handle back.
                _failure = e;
                Fault();
                return false;
            }
        }
    }
}
