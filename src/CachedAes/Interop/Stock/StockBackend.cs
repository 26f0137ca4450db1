using System;
using System.Security.Cryptography;

namespace CachedCryptography.Interop.Stock;

/// <summary>
/// The backend for platforms without a shim: each "handle" is a stock <see cref="Aes"/> instance, which
/// itself creates a native handle per call. Results and costs are those of stock <see cref="Aes.Create()"/>.
/// </summary>
internal sealed class StockBackend : CipherBackend
{
    public static StockBackend Instance { get; } = new();

    public override CachedAesBackend Kind => CachedAesBackend.StockFallback;

    public override IBlockCipher Create(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new StockBlockCipher(mode, encrypting, key);

    private sealed class StockBlockCipher : IBlockCipher
    {
        private const int BlockSize = 16;

        private readonly Aes _aes = Aes.Create();
        private readonly BlockCipherMode _mode;
        private readonly bool _encrypting;
        private readonly byte[] _chain = new byte[BlockSize];
        private bool _disposed;

        public StockBlockCipher(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
        {
            _mode = mode;
            _encrypting = encrypting;
            _aes.SetKey(key);
        }

        public bool IsFaulted { get; private set; }

        public void Reset(ReadOnlySpan<byte> iv) => iv.CopyTo(_chain);

        public void Transform(ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (_disposed)
            {
                IsFaulted = true;
                throw new CryptographicException("The cipher handle has been released.");
            }

            try
            {
                if (_mode == BlockCipherMode.Ecb)
                {
                    _ = _encrypting
                        ? _aes.EncryptEcb(input, output, PaddingMode.None)
                        : _aes.DecryptEcb(input, output, PaddingMode.None);
                    return;
                }

                // Keep the chain going across calls, as a native CBC handle would.
                Span<byte> next = stackalloc byte[BlockSize];
                if (_encrypting)
                {
                    _ = _aes.EncryptCbc(input, _chain, output, PaddingMode.None);
                    output.Slice(input.Length - BlockSize, BlockSize).CopyTo(next);
                }
                else
                {
                    input[^BlockSize..].CopyTo(next);
                    _ = _aes.DecryptCbc(input, _chain, output, PaddingMode.None);
                }

                next.CopyTo(_chain);
            }
            catch (CryptographicException)
            {
                IsFaulted = true;
                throw;
            }
        }

        public void Dispose()
        {
            _disposed = true;
            _aes.Dispose();
        }
    }
}
