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

    private sealed class StockBlockCipher : BlockCipherHandle
    {
        private readonly Aes _aes = Aes.Create();
        private readonly bool _encrypting;
        private readonly byte[] _chain = new byte[BlockSize];

        public StockBlockCipher(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
            : base(mode)
        {
            _encrypting = encrypting;
            _aes.SetKey(key);
        }

        protected override void ResetCore(ReadOnlySpan<byte> iv) => iv.CopyTo(_chain);

        protected override void TransformCore(ReadOnlySpan<byte> input, Span<byte> output)
        {
            if (Mode == BlockCipherMode.Ecb)
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
                output[^BlockSize..].CopyTo(next);
            }
            else
            {
                input[^BlockSize..].CopyTo(next);
                _ = _aes.DecryptCbc(input, _chain, output, PaddingMode.None);
            }

            next.CopyTo(_chain);
        }

        protected override void ReleaseCore() => _aes.Dispose();
    }
}
