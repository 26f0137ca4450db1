using System;
using System.Collections.Generic;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>CreateEncryptor/CreateDecryptor (all overloads) against stock, byte for byte.</summary>
public class TransformTests
{
    public static TheoryData<string, CipherMode, PaddingMode, int> Configurations()
    {
        var data = new TheoryData<string, CipherMode, PaddingMode, int>();
        foreach (string backend in BackendData.All)
        {
            foreach ((CipherMode mode, int feedback) in new[] { (CipherMode.ECB, 128), (CipherMode.CBC, 128), (CipherMode.CFB, 8), (CipherMode.CFB, 128) })
            {
                for (PaddingMode p = PaddingMode.None; p <= PaddingMode.ISO10126; p++)
                {
                    data.Add(backend, mode, p, feedback);
                }
            }
        }

        return data;
    }

    private static byte[] Run(ICryptoTransform t, byte[] data)
    {
        // Feed whole blocks through TransformBlock, the rest through TransformFinalBlock.
        var output = new List<byte>();
        int whole = data.Length / t.InputBlockSize * t.InputBlockSize;
        if (whole > t.InputBlockSize)
        {
            whole -= t.InputBlockSize; // keep the last block for the final call
            byte[] buf = new byte[whole + 32];
            int n = t.TransformBlock(data, 0, whole, buf, 0);
            output.AddRange(buf.AsSpan(0, n).ToArray());
        }
        else
        {
            whole = 0;
        }

        output.AddRange(t.TransformFinalBlock(data, whole, data.Length - whole));
        return output.ToArray();
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public void Transforms_match_stock(string backend, CipherMode mode, PaddingMode padding, int feedback)
    {
        byte[] key = RandomNumberGenerator.GetBytes(24);
        byte[] iv = RandomNumberGenerator.GetBytes(16);
        using Aes stock = Aes.Create();
        using CachedAes cached = BackendData.Create(backend);
        foreach (SymmetricAlgorithm a in new SymmetricAlgorithm[] { stock, cached })
        {
            a.Mode = mode;
            a.Padding = padding;
            a.FeedbackSize = feedback;
            a.Key = key;
            a.IV = iv;
        }

        foreach (int length in new[] { 0, 1, 5, 15, 16, 17, 32, 33, 64, 100 })
        {
            byte[] pt = RandomNumberGenerator.GetBytes(length);
            for (int variant = 0; variant < 2; variant++)
            {
                using ICryptoTransform se = variant == 0 ? stock.CreateEncryptor() : stock.CreateEncryptor(key, iv);
                using ICryptoTransform ce = variant == 0 ? cached.CreateEncryptor() : cached.CreateEncryptor(key, iv);
                Assert.Equal(se.InputBlockSize, ce.InputBlockSize);
                Assert.Equal(se.OutputBlockSize, ce.OutputBlockSize);
                Assert.Equal(se.CanTransformMultipleBlocks, ce.CanTransformMultipleBlocks);
                Assert.Equal(se.CanReuseTransform, ce.CanReuseTransform);

                Exception? stockError = Record.Exception(() => Run(se, pt));
                Exception? cachedError = Record.Exception(() => Run(ce, pt));
                Assert.Equal(stockError?.GetType(), cachedError?.GetType());
                if (stockError is not null)
                {
                    continue;
                }

                using ICryptoTransform se2 = stock.CreateEncryptor(key, iv);
                using ICryptoTransform ce2 = cached.CreateEncryptor(key, iv);
                byte[] sct = Run(se2, pt);
                byte[] cct = Run(ce2, pt);
                Assert.Equal(sct.Length, cct.Length);
                using ICryptoTransform sd = variant == 0 ? stock.CreateDecryptor() : stock.CreateDecryptor(key, iv);
                using ICryptoTransform cd = variant == 0 ? cached.CreateDecryptor() : cached.CreateDecryptor(key, iv);
                if (padding == PaddingMode.ISO10126)
                {
                    // Random pad bytes: check the ciphertext by decrypting it with stock.
                    Assert.Equal(pt, Run(sd, cct));
                    Assert.Equal(pt, Run(cd, sct));
                }
                else
                {
                    Assert.Equal(sct, cct);
                    Assert.Equal(Run(sd, sct), Run(cd, sct));
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Transform_is_independent_of_later_instance_changes(string backend)
    {
        byte[] key = RandomNumberGenerator.GetBytes(16);
        byte[] iv = RandomNumberGenerator.GetBytes(16);
        byte[] pt = RandomNumberGenerator.GetBytes(45);
        using Aes stock = TestUtil.Stock(key);
        stock.IV = iv;
        byte[] expected = stock.EncryptCbc(pt, iv, PaddingMode.PKCS7);

        using CachedAes cached = BackendData.Create(backend, key);
        cached.IV = iv;
        cached.Mode = CipherMode.CBC;
        cached.Padding = PaddingMode.PKCS7;
        using ICryptoTransform enc = cached.CreateEncryptor();
        using ICryptoTransform dec = cached.CreateDecryptor();

        cached.Key = RandomNumberGenerator.GetBytes(32);
        cached.IV = RandomNumberGenerator.GetBytes(16);
        cached.Mode = CipherMode.ECB;
        cached.Padding = PaddingMode.Zeros;
        cached.EncryptEcb(pt, PaddingMode.PKCS7);

        Assert.Equal(expected, Run(enc, pt));
        Assert.Equal(pt, Run(dec, expected));
        cached.Dispose();
        Assert.Equal(expected, Run(enc, pt));
    }

    [Fact]
    public void Transform_validation_matches_stock()
    {
        var calls = new (string Name, Type Expected, Func<SymmetricAlgorithm, ICryptoTransform> Call)[]
        {
            ("null key (encryptor)", typeof(ArgumentNullException), a => a.CreateEncryptor(null!, new byte[16])),
            ("null key (decryptor)", typeof(ArgumentNullException), a => a.CreateDecryptor(null!, new byte[16])),
            ("bad key size", typeof(ArgumentException), a => a.CreateEncryptor(new byte[15], new byte[16])),
            ("bad key size (decryptor)", typeof(ArgumentException), a => a.CreateDecryptor(new byte[33], new byte[16])),
            ("bad IV size", typeof(ArgumentException), a => a.CreateEncryptor(new byte[16], new byte[8])),
            ("bad IV size (decryptor)", typeof(ArgumentException), a => a.CreateDecryptor(new byte[16], new byte[17])),
            ("CBC null IV", typeof(CryptographicException), a => { a.Mode = CipherMode.CBC; return a.CreateEncryptor(new byte[16], null); }),
            ("CFB null IV", typeof(CryptographicException), a => { a.Mode = CipherMode.CFB; return a.CreateDecryptor(new byte[16], null); }),
            ("OFB mode", typeof(CryptographicException), a => { a.Mode = CipherMode.OFB; return a.CreateEncryptor(); }),
            ("CFB feedback 16", typeof(CryptographicException), a => { a.Mode = CipherMode.CFB; a.FeedbackSize = 16; return a.CreateEncryptor(); }),
        };

        foreach ((string name, Type expected, Func<SymmetricAlgorithm, ICryptoTransform> call) in calls)
        {
            using Aes stock = Aes.Create();
            using CachedAes cached = new();
            Exception? s = Record.Exception(() => call(stock).Dispose());
            Exception? c = Record.Exception(() => call(cached).Dispose());
            Assert.True(s is not null, $"{name}: stock threw nothing");
            Assert.True(c is not null, $"{name}: CachedAes threw nothing");
            Assert.True(s.GetType() == expected, $"{name}: stock threw {s.GetType().Name}, the notes say {expected.Name}");
            Assert.True(c.GetType() == s.GetType(), $"{name}: CachedAes threw {c.GetType().Name}, stock {s.GetType().Name}");
            if (s is ArgumentException sa)
            {
                Assert.Equal(sa.ParamName, ((ArgumentException)c).ParamName);
            }
        }

        // ECB ignores a null IV, like stock.
        using (Aes stock = Aes.Create())
        using (CachedAes cached = new())
        {
            stock.Mode = cached.Mode = CipherMode.ECB;
            byte[] key = RandomNumberGenerator.GetBytes(16);
            using ICryptoTransform s = stock.CreateEncryptor(key, null);
            using ICryptoTransform c = cached.CreateEncryptor(key, null);
            Assert.Equal(s.TransformFinalBlock(new byte[20], 0, 20), c.TransformFinalBlock(new byte[20], 0, 20));
        }
    }
}
