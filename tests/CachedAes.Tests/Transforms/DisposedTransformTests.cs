using System;
using System.Collections.Generic;
using System.Security.Cryptography;

namespace CachedCryptography.Tests.Transforms;

/// <summary>
/// A transform used after its own <c>Dispose</c> throws what stock's throws on this platform and runtime: the same type
/// and the same message (on Linux an <see cref="ObjectDisposedException"/> whose message names stock's native handle
/// type), for ECB and CBC, both directions, every padding mode, <c>TransformBlock</c> and <c>TransformFinalBlock</c> with
/// and without bytes.
/// </summary>
public sealed class DisposedTransformTests
{
    public static TheoryData<CipherMode, bool, PaddingMode> Configurations()
    {
        var data = new TheoryData<CipherMode, bool, PaddingMode>();
        foreach (CipherMode mode in new[] { CipherMode.ECB, CipherMode.CBC })
        {
            foreach (bool encrypting in new[] { true, false })
            {
                foreach (PaddingMode padding in Enum.GetValues<PaddingMode>())
                {
                    data.Add(mode, encrypting, padding);
                }
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public void A_disposed_transform_throws_stocks_exception_and_message(CipherMode mode, bool encrypting, PaddingMode padding)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] iv = RandomNumberGenerator.GetBytes(16);
        using Aes stock = Aes.Create();
        using CachedAes cached = CachedAes.Create();
        var calls = new List<(string Name, Func<ICryptoTransform, object> Call)>
        {
            ("TransformBlock of 32 bytes", t => t.TransformBlock(new byte[32], 0, 32, new byte[48], 0)),
            ("TransformFinalBlock of 16 bytes", t => t.TransformFinalBlock(new byte[16], 0, 16)),
            ("TransformFinalBlock of 0 bytes", t => t.TransformFinalBlock([], 0, 0)),
        };
        foreach ((string name, Func<ICryptoTransform, object> call) in calls)
        {
            Exception? expected = Record.Exception(() => call(Disposed(stock, encrypting, mode, padding, key, iv)));
            Exception? actual = Record.Exception(() => call(Disposed(cached, encrypting, mode, padding, key, iv)));
            string what = $"{mode} {(encrypting ? "encryptor" : "decryptor")} {padding}, {name} after Dispose";
            Assert.True(expected?.GetType() == actual?.GetType(), $"{what}: stock {expected?.GetType().Name ?? "no exception"}, CachedAes {actual?.GetType().Name ?? "no exception"}");
            Assert.True(expected?.Message == actual?.Message, $"{what}: stock's message \"{expected?.Message}\", CachedAes's \"{actual?.Message}\"");
            Assert.Equal((expected as ObjectDisposedException)?.ObjectName, (actual as ObjectDisposedException)?.ObjectName);
        }
    }

    private static ICryptoTransform Disposed(Aes aes, bool encrypting, CipherMode mode, PaddingMode padding, byte[] key, byte[] iv)
    {
        aes.Mode = mode;
        aes.Padding = padding;
        ICryptoTransform transform = encrypting ? aes.CreateEncryptor(key, iv) : aes.CreateDecryptor(key, iv);
        transform.Dispose();
        return transform;
    }
}
