using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Operations;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Backends.Stock;

namespace CachedCryptography.Tests;

/// <summary>
/// Padding and one-shot buffer cases the random differential tests do not reach: ISO 10126's random pad bytes, source
/// and destination that touch without overlapping, a native failure on the last block of a long message decrypted into
/// a short destination, and depadding of nothing.
/// </summary>
public sealed class PaddingAndBufferTests
{
    private static readonly byte[] s_iv = Enumerable.Range(0, 16).Select(i => (byte)(0x70 - i)).ToArray();

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Iso10126_pad_bytes_are_random(string backend)
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(i * 9)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        byte[] plaintext = [0x42];

        // Sixteen encryptions of one byte: the fourteen pad bytes before the count are fresh random bytes each time.
        string[] padded = Enumerable.Range(0, 16).Select(_ =>
        {
            byte[] ciphertext = cached.EncryptEcb(plaintext, PaddingMode.ISO10126);
            Assert.Equal(plaintext, stock.DecryptEcb(ciphertext, PaddingMode.ISO10126));
            byte[] block = stock.DecryptEcb(ciphertext, PaddingMode.None);
            Assert.Equal(0x42, block[0]);
            Assert.Equal(15, block[15]);
            return Convert.ToHexString(block, 1, 14);
        }).ToArray();

        Assert.Equal(padded.Length, padded.Distinct(StringComparer.Ordinal).Count());
    }

    public static TheoryData<string, bool, bool, bool> AdjacentCases()
    {
        var data = new TheoryData<string, bool, bool, bool>();
        foreach (string backend in BackendData.All)
        {
            foreach (bool cbc in new[] { false, true })
            {
                foreach (bool destinationFirst in new[] { false, true })
                {
                    foreach (bool validPadding in new[] { true, false })
                    {
                        data.Add(backend, cbc, destinationFirst, validPadding);
                    }
                }
            }
        }

        return data;
    }

    /// <summary>
    /// A ciphertext of more than 128 bytes decrypted into a destination one block shorter that ends where the ciphertext
    /// starts or starts where it ends: the buffers touch but do not overlap, so (as for stock) all but the last block
    /// go straight into the destination, and bad padding zeroes them there. The whole buffer afterwards equals stock's.
    /// </summary>
    [Theory]
    [MemberData(nameof(AdjacentCases))]
    public void Touching_but_not_overlapping_buffers_are_treated_as_separate_like_stock(string backend, bool cbc, bool destinationFirst, bool validPadding)
    {
        byte[] key = Enumerable.Range(0, 24).Select(i => (byte)(0xA0 + i)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        using CachedAes cached = BackendData.Create(backend, key);
        byte[] plaintext = Enumerable.Range(0, 144).Select(i => (byte)(i + 1)).ToArray();
        byte[] ciphertext = cbc ? stock.EncryptCbc(plaintext, s_iv, PaddingMode.PKCS7) : stock.EncryptEcb(plaintext, PaddingMode.PKCS7);
        Assert.Equal(160, ciphertext.Length);
        if (!validPadding)
        {
            ciphertext[^1] ^= 0x20; // the last block decrypts to garbage: its padding is invalid
        }

        int destinationLength = ciphertext.Length - 16;
        int ciphertextAt = destinationFirst ? destinationLength : 0;
        int destinationAt = destinationFirst ? 0 : ciphertext.Length;

        (string expected, byte[] expectedBuffer) = Run(stock);
        (string actual, byte[] actualBuffer) = Run(cached);

        string what = $"{backend}, {(cbc ? "CBC" : "ECB")}, destination {(destinationFirst ? "before" : "after")} the ciphertext, {(validPadding ? "valid" : "bad")} padding";
        Assert.True(expected == actual, $"{what}:\n stock:     {expected}\n CachedAes: {actual}");
        Assert.True(expectedBuffer.AsSpan().SequenceEqual(actualBuffer), $"{what}: buffers differ\n stock:     {Convert.ToHexString(expectedBuffer)}\n CachedAes: {Convert.ToHexString(actualBuffer)}");
        Assert.StartsWith(validPadding ? "returned 144" : "threw", expected, StringComparison.Ordinal);

        (string, byte[]) Run(Aes aes)
        {
            byte[] buffer = TestUtil.Filled(ciphertext.Length + destinationLength);
            ciphertext.CopyTo(buffer, ciphertextAt);
            ReadOnlySpan<byte> source = buffer.AsSpan(ciphertextAt, ciphertext.Length);
            Span<byte> destination = buffer.AsSpan(destinationAt, destinationLength);
            try
            {
                int written = cbc ? aes.DecryptCbc(source, s_iv, destination, PaddingMode.PKCS7) : aes.DecryptEcb(source, destination, PaddingMode.PKCS7);
                return ($"returned {written}", buffer);
            }
            catch (CryptographicException e)
            {
                return ($"threw {e.GetType().FullName}: {e.Message}", buffer);
            }
        }
    }

    /// <summary>
    /// The last block of a long message decrypted into a short destination fails natively after writing its output (as
    /// a native call may): the blocks already decrypted into the destination are zeroed and the handle's own exception
    /// is thrown, whatever the failed output looks like.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_native_failure_on_the_last_block_leaves_no_plaintext_in_a_short_destination(bool cbc)
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(0x0F ^ i)).ToArray();
        using Aes stock = TestUtil.Stock(key);
        var backend = new FailSecondTransformBackend(StockBackend.Instance);
        using var cached = new CachedAes(backend) { Key = key };
        byte[] plaintext = Enumerable.Range(0, 150).Select(i => (byte)(i + 1)).ToArray();
        byte[] ciphertext = cbc ? stock.EncryptCbc(plaintext, s_iv, PaddingMode.PKCS7) : stock.EncryptEcb(plaintext, PaddingMode.PKCS7);
        byte[] destination = TestUtil.Filled(150); // shorter than the 160-byte ciphertext, long enough for the plaintext
        byte[] before = (byte[])destination.Clone();

        backend.Arm();
        var e = Assert.Throws<CryptographicException>(() => cbc
            ? cached.DecryptCbc(ciphertext, s_iv, destination, PaddingMode.PKCS7)
            : cached.DecryptEcb(ciphertext, destination, PaddingMode.PKCS7));

        Assert.Equal(FailSecondTransformBackend.Message, e.Message);
        Assert.Equal(2, backend.TransformsSinceArmed);
        TestUtil.AssertNoNewData(before, destination, cbc ? "CBC" : "ECB");

        // The failed handle was not kept: the same call now succeeds.
        Assert.Equal(150, cbc ? cached.DecryptCbc(ciphertext, s_iv, destination, PaddingMode.PKCS7) : cached.DecryptEcb(ciphertext, destination, PaddingMode.PKCS7));
        Assert.Equal(plaintext, destination);
    }

    [Theory]
    [InlineData(PaddingMode.PKCS7, -1)]
    [InlineData(PaddingMode.ANSIX923, -1)]
    [InlineData(PaddingMode.ISO10126, -1)]
    [InlineData(PaddingMode.None, 0)]
    [InlineData(PaddingMode.Zeros, 0)]
    public void Depadding_nothing_finds_no_padding_block(PaddingMode padding, int expected)
    {
        // The one-shots never depad an empty message (they throw first, as stock does); the padding core itself must
        // still report "no valid padding" rather than a length.
        Assert.Equal(expected, SymmetricPadding.GetUnpaddedLength(ReadOnlySpan<byte>.Empty, padding));
    }

    /// <summary>
    /// Wraps a backend: once armed, the second transform (of any handle) writes its output and then reports a native
    /// failure, like a native call that failed after writing.
    /// </summary>
    private sealed class FailSecondTransformBackend(CipherBackend inner) : CipherBackend
    {
        public const string Message = "Injected failure after the output was written.";

        private int _armed;
        private int _transforms;

        public override CachedAesBackend Kind => inner.Kind;

        public override string Description => inner.Description + ", failing a second transform";

        public int TransformsSinceArmed => Volatile.Read(ref _transforms);

        public void Arm()
        {
            Volatile.Write(ref _transforms, 0);
            Volatile.Write(ref _armed, 1);
        }

        protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
            new Handle(this, inner.Create(mode, encrypting, key));

        private bool FailThisOne() => Volatile.Read(ref _armed) == 1 && Interlocked.Increment(ref _transforms) == 2 && Interlocked.Exchange(ref _armed, 0) == 1;

        private sealed class Handle(FailSecondTransformBackend owner, BlockCipher inner) : ForwardingCipher(inner)
        {
            private bool _injected;

            public override bool TryTransform(ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
            {
                bool transformed = base.TryTransform(iv, input, output);
                if (transformed && owner.FailThisOne())
                {
                    _injected = true;
                    Fault();
                    return false;
                }

                return transformed;
            }

            public override CryptographicException CreateFailure() => _injected ? new CryptographicException(Message) : base.CreateFailure();
        }
    }
}
