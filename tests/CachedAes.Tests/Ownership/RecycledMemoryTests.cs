using System;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading.Tasks;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// Issue 41's recycled-memory probe: a transform outlives its instance (dropped, or disposed) while collections run and
/// thousands of new instances with other keys take and give back key memory on several threads. The transform keeps
/// its own key (a reference on its epoch's memory), so every later output is stock's under that key.
/// </summary>
public class RecycledMemoryTests
{
    private static readonly byte[] s_iv = RandomNumberGenerator.GetBytes(16);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_transform_keeps_its_key_while_its_instance_is_gone_and_key_memory_is_recycled(bool disposeInstance)
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(48);
        byte[] expected;
        using (Aes stock = TestUtil.Stock(key))
        {
            expected = stock.EncryptCbc(plaintext, s_iv);
        }

        ICryptoTransform encryptor = TransformOfAnInstanceLetGo(key, disposeInstance, plaintext, expected);
        for (int round = 0; round < 5; round++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            Parallel.For(0, 4, thread =>
            {
                byte[] message = new byte[16];
                for (int i = 0; i < 1_000; i++)
                {
                    // Half disposed, half dropped: both kinds of key memory go back to the pool.
                    var other = new CachedAes { Key = RandomNumberGenerator.GetBytes(32) };
                    other.EncryptCbc(message, s_iv);
                    other.EncryptCbc(message, s_iv);
                    if ((i & 1) == 0)
                    {
                        other.Dispose();
                    }
                }
            });

            Assert.Equal(expected, encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        }

        encryptor.Dispose();
    }

    // In a frame of its own, so that nothing of the instance stays reachable from the test's frame.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ICryptoTransform TransformOfAnInstanceLetGo(byte[] key, bool dispose, byte[] plaintext, byte[] expected)
    {
        var aes = new CachedAes { Key = key, IV = s_iv };

        // Two calls: the second caches a handle in the instance's slots.
        aes.EncryptCbc(plaintext, s_iv);
        aes.EncryptCbc(plaintext, s_iv);
        ICryptoTransform encryptor = aes.CreateEncryptor();
        Assert.Equal(expected, encryptor.TransformFinalBlock(plaintext, 0, plaintext.Length));
        if (dispose)
        {
            aes.Dispose();
        }

        return encryptor;
    }
}
