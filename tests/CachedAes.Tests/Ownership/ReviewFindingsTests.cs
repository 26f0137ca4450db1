using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The review findings of issue 41 that are users' own races or buffer layouts: each test forces the case the review's
/// probe hit by chance, and failed on the code before the fix (docs/design-notes.md, "Ownership").
/// </summary>
public class ReviewFindingsTests
{
    private static readonly byte[] s_iv = [.. Enumerable.Range(0, 16).Select(i => (byte)(0xA0 + i))];

    [Theory]
    [InlineData(CipherMode.ECB)]
    [InlineData(CipherMode.CBC)]
    public void A_transform_disposed_mid_call_never_runs_under_the_key_set_after(CipherMode mode)
    {
        // A call on a transform checks that it is not disposed, then takes a handle. The user's other thread disposes the
        // transform in between and sets the instance's key: the instance then holds the epoch alone, and the key change
        // rewrites it in place. Forced here in that order: the call's rent comes after both. Stock's call there uses the
        // old key or throws ObjectDisposedException; it must never use the new key.
        byte[] oldKey = RandomNumberGenerator.GetBytes(32);
        byte[] newKey = RandomNumberGenerator.GetBytes(32);
        using CachedAes aes = BackendData.Create("PlatformDefault", oldKey);
        aes.Mode = mode;
        aes.IV = s_iv;
        aes.EncryptEcb(new byte[16], PaddingMode.None);
        aes.EncryptEcb(new byte[16], PaddingMode.None);
        KeyEpoch epoch = aes.KeyEpoch!;
        int version = epoch.Version;
        ICryptoTransform transform = aes.CreateEncryptor();
        transform.Dispose();
        aes.Key = newKey;
        Assert.Same(epoch, aes.KeyEpoch);
        Assert.NotEqual(version, epoch.Version);

        BlockCipherMode blockMode = mode == CipherMode.ECB ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
        Assert.Throws<ObjectDisposedException>(() => RentAndGiveBack(epoch, blockMode, version));
        Assert.Throws<ObjectDisposedException>(() => transform.TransformFinalBlock(new byte[16], 0, 16));
    }

    [Fact]
    public void A_transform_racing_its_own_dispose_and_a_key_change_never_outputs_under_the_new_key()
    {
        // The same race through the public surface only, for a second: every output is under the transform's key, or the
        // call throws ObjectDisposedException.
        byte[] plaintext = RandomNumberGenerator.GetBytes(16);
        byte[][] keys = [.. Enumerable.Range(0, 2).Select(_ => RandomNumberGenerator.GetBytes(16))];
        byte[][] expected = [.. keys.Select(k =>
        {
            using Aes stock = TestUtil.Stock(k);
            return stock.EncryptEcb(plaintext, PaddingMode.None);
        })];
        using CachedAes aes = BackendData.Create("PlatformDefault", keys[0]);
        aes.Mode = CipherMode.ECB;
        aes.Padding = PaddingMode.None;
        int wrong = 0, rounds = 0;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(1))
        {
            int k = rounds++ & 1;
            aes.Key = keys[k];
            ICryptoTransform transform = aes.CreateEncryptor();
            using var ready = new Barrier(2);
            var disposer = new Thread(() =>
            {
                ready.SignalAndWait();
                transform.Dispose();
                aes.Key = keys[k ^ 1];
            });
            disposer.Start();
            ready.SignalAndWait();
            for (int i = 0; i < 8; i++)
            {
                try
                {
                    if (!transform.TransformFinalBlock(plaintext, 0, 16).AsSpan().SequenceEqual(expected[k]))
                    {
                        wrong++;
                    }
                }
                catch (ObjectDisposedException)
                {
                }
            }

            disposer.Join();
        }

        Assert.Equal(0, wrong);
    }

    [Fact]
    public void A_key_array_changed_while_the_key_is_set_leaves_one_key_in_the_key_and_every_handle()
    {
        // The caller's array changes while Key is being set (another thread of the user's writes it): here, forced to
        // happen while the key change re-keys the cached handles. The key the instance returns and the key its handles
        // encrypt with must be the same one.
        byte[] first = RandomNumberGenerator.GetBytes(32);
        byte[] second = RandomNumberGenerator.GetBytes(32);
        byte[] plaintext = RandomNumberGenerator.GetBytes(32);
        byte[] caller = (byte[])second.Clone();
        var backend = new RekeyHookBackend(BackendData.IsolatedBackend("PlatformDefault"));
        using var aes = new CachedAes(backend) { Key = first };
        for (int i = 0; i < 2; i++)
        {
            aes.EncryptEcb(plaintext, PaddingMode.None);
            aes.EncryptCbc(plaintext, s_iv, PaddingMode.None);
        }

        backend.BeforeRekey = () => caller.AsSpan().Fill(0x5A);
        aes.Key = caller;
        backend.BeforeRekey = null;
        Assert.True(backend.Rekeys > 0);

        byte[] stored = aes.Key;
        using Aes stock = TestUtil.Stock(stored);
        Assert.Equal(stock.EncryptEcb(plaintext, PaddingMode.None), aes.EncryptEcb(plaintext, PaddingMode.None));
        Assert.Equal(stock.EncryptCbc(plaintext, s_iv, PaddingMode.None), aes.EncryptCbc(plaintext, s_iv, PaddingMode.None));
        Assert.Equal(second, stored);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void The_iv_inside_the_destination_is_read_before_the_destination_is_written(string backend)
    {
        // The IV lies inside the destination (or overlaps the input too): stock reads it first, so its bytes are the IV.
        byte[] key = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        var random = new Random(41);
        foreach (int length in (int[])[0, 1, 15, 16, 17, 31, 32, 33, 100, 1023, 1024, 1025, 2048])
        {
            foreach (PaddingMode padding in (PaddingMode[])[PaddingMode.PKCS7, PaddingMode.Zeros, PaddingMode.None])
            {
                if (padding == PaddingMode.None && length % 16 != 0)
                {
                    continue;
                }

                foreach (int ivOffset in (int[])[0, 16, length / 2 & ~15])
                {
                    byte[] plaintext = new byte[length];
                    random.NextBytes(plaintext);
                    int size = Math.Max(ivOffset + 16, length + 16);
                    byte[] seed = new byte[size];
                    random.NextBytes(seed);

                    byte[] expectedBuffer = (byte[])seed.Clone();
                    byte[] actualBuffer = (byte[])seed.Clone();
                    int expectedWritten = Encrypt(stock, plaintext, expectedBuffer, ivOffset, padding);
                    int actualWritten = Encrypt(cached, plaintext, actualBuffer, ivOffset, padding);
                    Assert.Equal(expectedWritten, actualWritten);
                    Assert.Equal(expectedBuffer, actualBuffer);

                    // Decryption: the ciphertext at the start of the destination, the IV inside it too.
                    byte[] ciphertext = stock.EncryptCbc(plaintext, seed.AsSpan(ivOffset, 16), padding);
                    expectedBuffer = (byte[])seed.Clone();
                    ciphertext.CopyTo(expectedBuffer, 0);
                    actualBuffer = (byte[])expectedBuffer.Clone();
                    Assert.Equal(Decrypt(stock, expectedBuffer, ciphertext.Length, ivOffset, padding), Decrypt(cached, actualBuffer, ciphertext.Length, ivOffset, padding));
                    Assert.Equal(expectedBuffer, actualBuffer);
                }
            }
        }
    }

    private static int Encrypt(Aes aes, byte[] plaintext, byte[] buffer, int ivOffset, PaddingMode padding) =>
        aes.TryEncryptCbc(plaintext, buffer.AsSpan(ivOffset, 16), buffer, out int written, padding) ? written : -1;

    private static string Decrypt(Aes aes, byte[] buffer, int length, int ivOffset, PaddingMode padding)
    {
        try
        {
            return aes.TryDecryptCbc(buffer.AsSpan(0, length), buffer.AsSpan(ivOffset, 16), buffer, out int written, padding) ? $"{written}" : "false";
        }
        catch (CryptographicException e)
        {
            return e.Message;
        }
    }

    private static void RentAndGiveBack(KeyEpoch epoch, BlockCipherMode mode, int version)
    {
        using KeyEpoch.HandleLease lease = epoch.RentHeld(mode, encrypting: true, version);
    }

    // A backend whose handles run a hook before each re-key: where a user's write to the key array would land mid-change.
    private sealed class RekeyHookBackend(CipherBackend inner) : CipherBackend
    {
        private int _rekeys;

        public Action? BeforeRekey { get; set; }

        public int Rekeys => Volatile.Read(ref _rekeys);

        public override CachedAesBackend Kind => inner.Kind;

        public override string Description => inner.Description;

        protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
            new Hooked(this, inner.Create(mode, encrypting, key));

        private sealed class Hooked(RekeyHookBackend owner, BlockCipher wrapped) : ForwardingCipher(wrapped)
        {
            protected override bool TryRekeyCore(ReadOnlySpan<byte> key)
            {
                owner.BeforeRekey?.Invoke();
                Interlocked.Increment(ref owner._rekeys);
                return base.TryRekeyCore(key);
            }
        }
    }
}
