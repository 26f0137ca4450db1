using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;

namespace CachedCryptography.Backends.Stock;

/// <summary>
/// A handle of the <see cref="StockBackend"/>: one stock <see cref="Aes"/> instance keyed for one mode and direction,
/// padding off. A stock failure comes back through the seam like a native one (false, and the exception's message).
/// </summary>
internal sealed class StockCipher : BlockCipher
{
    private readonly Aes _aes = Aes.Create();

    public StockCipher(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key)
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
            return Fail(e.Message);
        }
    }

    public override void Release() => _aes.Dispose();

    protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
    {
        try
        {
            _aes.SetKey(key);
            return true;
        }
        catch (CryptographicException e)
        {
            return Fail(e.Message);
        }
    }
}
