using CachedCryptography.Operations;
using System;
using System.Buffers.Binary;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Tests of the platform-neutral <see cref="KeyWrap"/> core itself: agreement with stock .NET, the
/// integrity checks one at a time, clean-up on failure, how it drives the seam, and allocations.
/// </summary>
public sealed class KeyWrapCoreTests
{
    private const string IntegrityMessage = "The ciphertext did not successfully decrypt with the instance key.";

    [Theory]
    [InlineData(16)]
    [InlineData(24)]
    [InlineData(32)]
    public void Core_over_stock_ECB_matches_stock_wrap_and_unwrap_for_lengths_1_to_300(int keyLength)
    {
        var random = new Random(1000 + keyLength);
        byte[] key = new byte[keyLength];
        random.NextBytes(key);
        using Aes stock = Aes.Create();
        stock.Key = key;
        using var encryptor = new StockEcbCipher(key, encrypting: true);
        using var decryptor = new StockEcbCipher(key, encrypting: false);

        foreach (int length in Enumerable.Range(1, 300).Concat([1023, 1024, 1025, 4096, 4097]))
        {
            byte[] plaintext = new byte[length];
            random.NextBytes(plaintext);
            byte[] expected = stock.EncryptKeyWrapPadded(plaintext);

            byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
            wrapped.AsSpan().Fill(0x5A);
            KeyWrap.WrapPadded(encryptor, plaintext, wrapped);
            Assert.True(expected.AsSpan().SequenceEqual(wrapped), $"wrap of {length} bytes differs from stock");

            byte[] unwrapped = new byte[wrapped.Length - 8];
            unwrapped.AsSpan().Fill(0x5A);
            int written = KeyWrap.UnwrapPadded(decryptor, wrapped, unwrapped);
            Assert.Equal(length, written);
            Assert.True(plaintext.AsSpan().SequenceEqual(unwrapped.AsSpan(0, written)), $"unwrap of {length} bytes differs");
            Assert.All(unwrapped.Skip(written), b => Assert.Equal(0, b));
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(5)]
    [InlineData(8)]
    [InlineData(20)]
    [InlineData(32)]
    [InlineData(100)]
    public void Flipping_any_single_byte_of_the_wrapped_key_is_rejected_and_leaves_no_plaintext(int length)
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(i * 7 + 1)).ToArray();
        byte[] plaintext = Enumerable.Range(0, length).Select(i => (byte)(i + 1)).ToArray();
        using var encryptor = new StockEcbCipher(key, encrypting: true);
        using var decryptor = new StockEcbCipher(key, encrypting: false);
        byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
        KeyWrap.WrapPadded(encryptor, plaintext, wrapped);

        foreach (byte flip in new byte[] { 0x01, 0x80, 0xFF })
        {
            for (int i = 0; i < wrapped.Length; i++)
            {
                byte[] tampered = (byte[])wrapped.Clone();
                tampered[i] ^= flip;
                byte[] destination = new byte[wrapped.Length - 8];
                destination.AsSpan().Fill(0xCC);

                var e = Assert.Throws<CryptographicException>(() => KeyWrap.UnwrapPadded(decryptor, tampered, destination));
                Assert.Equal(IntegrityMessage, e.Message);
                Assert.All(destination, b => Assert.Equal(0, b));
            }
        }
    }

    /// <summary>
    /// Builds ciphertexts whose decryption has a chosen integrity value and padded plaintext, so each
    /// check can be exercised alone. Each case's accept/reject result and plaintext are also compared
    /// with stock .NET, so the core is exactly as strict as stock.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Each_integrity_check_alone_decides_like_stock(int blocks)
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(0xF0 - i)).ToArray();
        using Aes stock = Aes.Create();
        stock.Key = key;
        using var encryptor = new StockEcbCipher(key, encrypting: true);
        using var decryptor = new StockEcbCipher(key, encrypting: false);
        int padded = 8 * blocks;
        int cases = 0;

        // Lengths around both bounds and extreme values, with an all-zero pad.
        foreach (long length in new long[] { 0, padded - 9, padded - 8, padded - 7, padded - 1, padded, padded + 1, padded + 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF })
        {
            if (length < 0)
            {
                continue;
            }

            bool valid = length > padded - 8 && length <= padded;
            byte[] data = DataWithZeroPad(padded, (int)Math.Clamp(length, 0, padded));
            Check(0xA65959A6, (uint)length, data, valid);
        }

        // A wrong constant, one bit at a time, with a valid length.
        for (int bit = 0; bit < 32; bit++)
        {
            Check(0xA65959A6 ^ (1u << bit), (uint)padded, DataWithZeroPad(padded, padded), valid: false);
        }

        // A non-zero byte in each pad position, for every valid length with a pad.
        for (int length = padded - 7; length < padded; length++)
        {
            for (int position = length; position < padded; position++)
            {
                foreach (byte value in new byte[] { 0x01, 0x80 })
                {
                    byte[] data = DataWithZeroPad(padded, length);
                    data[position] = value;
                    Check(0xA65959A6, (uint)length, data, valid: false);
                }
            }

            // And a non-zero last data byte next to the pad is fine.
            Check(0xA65959A6, (uint)length, DataWithZeroPad(padded, length), valid: true);
        }

        Assert.True(cases > 40);

        void Check(uint prefix, uint length, byte[] data, bool valid)
        {
            cases++;
            byte[] iv = new byte[8];
            BinaryPrimitives.WriteUInt32BigEndian(iv, prefix);
            BinaryPrimitives.WriteUInt32BigEndian(iv.AsSpan(4), length);
            byte[] ciphertext = new byte[data.Length + 8];

            if (data.Length == 8)
            {
                iv.CopyTo(ciphertext, 0);
                data.CopyTo(ciphertext, 8);
                Assert.True(encryptor.TryTransform(default, ciphertext, ciphertext));
            }
            else
            {
                KeyWrap.Wrap(encryptor, iv, data, ciphertext);
            }

            string what = $"prefix {prefix:X8}, L {length}, data {Convert.ToHexString(data)}";
            byte[] destination = new byte[data.Length];
            destination.AsSpan().Fill(0xCC);
            Exception? coreError = Record.Exception(() => KeyWrap.UnwrapPadded(decryptor, ciphertext, destination));
            Exception? stockError = Record.Exception(() => stock.DecryptKeyWrapPadded(ciphertext));

            // Compared with the stock of the runtime this runs on. Stock .NET 11 on Linux rejects with an internal
            // subclass of CryptographicException (OpenSSL's wrap cipher); the core throws CryptographicException itself,
            // which Runtimes.ExpectedTypeFor accepts there and only there.
            Assert.Equal(Runtimes.ExpectedTypeFor(stockError), coreError?.GetType());

            if (valid)
            {
                Assert.True(coreError is null, $"{what}: rejected: {coreError?.Message}");
                Assert.True(data.AsSpan().SequenceEqual(destination), what);
                Assert.Equal(data.AsSpan(0, (int)length).ToArray(), stock.DecryptKeyWrapPadded(ciphertext));
            }
            else
            {
                Assert.True(coreError is CryptographicException, $"{what}: expected rejection, got {coreError?.GetType().Name ?? "success"}");
                Assert.Equal(IntegrityMessage, coreError!.Message);
                Assert.All(destination, b => Assert.Equal(0, b));
            }
        }
    }

    [Fact]
    public void Single_block_paths_make_exactly_one_ECB_call_and_longer_ones_six_per_block()
    {
        foreach (int length in new[] { 1, 7, 8, 9, 16, 17, 32, 100, 4097 })
        {
            var encryptor = new ToyBlockCipher(3, encrypting: true);
            var decryptor = new ToyBlockCipher(3, encrypting: false);
            byte[] plaintext = Enumerable.Range(0, length).Select(i => (byte)(i * 3)).ToArray();
            byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
            KeyWrap.WrapPadded(encryptor, plaintext, wrapped);
            byte[] unwrapped = new byte[wrapped.Length - 8];
            Assert.Equal(length, KeyWrap.UnwrapPadded(decryptor, wrapped, unwrapped));
            Assert.True(plaintext.AsSpan().SequenceEqual(unwrapped.AsSpan(0, length)));

            int n = (wrapped.Length - 8) / 8;
            int expectedCalls = n == 1 ? 1 : 6 * n;
            Assert.Equal(expectedCalls, encryptor.TransformCalls);
            Assert.Equal(expectedCalls, decryptor.TransformCalls);
            Assert.Equal(16, encryptor.LastInputLength);
            Assert.Equal(16, decryptor.LastInputLength);

            // The core uses the handle it is given: it never releases or replaces it.
            Assert.Equal(0, encryptor.ReleaseCalls + decryptor.ReleaseCalls);
        }
    }

    [Fact]
    public void Warm_calls_allocate_nothing()
    {
        var encryptor = new ToyBlockCipher(9, encrypting: true);
        var decryptor = new ToyBlockCipher(9, encrypting: false);
        ReadOnlySpan<byte> iv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];

        foreach (int length in new[] { 1, 8, 9, 32, 4097 })
        {
            byte[] plaintext = new byte[length];
            plaintext.AsSpan().Fill(0x42);
            byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
            byte[] unwrapped = new byte[wrapped.Length - 8];
            byte[] data = new byte[wrapped.Length - 8];
            byte[] wrapped3394 = new byte[data.Length + 8];
            bool rfc3394 = data.Length >= 16;

            for (int pass = 0; pass < 2; pass++)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                KeyWrap.WrapPadded(encryptor, plaintext, wrapped);
                int written = KeyWrap.UnwrapPadded(decryptor, wrapped, unwrapped);

                if (rfc3394)
                {
                    KeyWrap.Wrap(encryptor, iv, data, wrapped3394);
                    KeyWrap.Unwrap(decryptor, iv, wrapped3394, data);
                }

                long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                Assert.Equal(length, written);

                if (pass == 1)
                {
                    Assert.True(allocated == 0, $"length {length}: {allocated} bytes allocated");
                }
            }
        }
    }

    [Theory]
    [InlineData(5, 0)]
    [InlineData(32, 0)]
    [InlineData(32, 7)]
    [InlineData(32, 23)]
    public void A_failing_handle_propagates_its_exception_and_leaves_no_plaintext(int length, int failAt)
    {
        byte[] plaintext = Enumerable.Range(1, length).Select(i => (byte)i).ToArray();
        var encryptor = new ToyBlockCipher(1, encrypting: true) { FailAtCall = failAt };
        byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
        var e = Assert.Throws<CryptographicException>(() => KeyWrap.WrapPadded(encryptor, plaintext, wrapped));
        Assert.Equal("Simulated native failure.", e.Message);
        Assert.All(wrapped, b => Assert.Equal(0, b));

        KeyWrap.WrapPadded(new ToyBlockCipher(1, encrypting: true), plaintext, wrapped);
        var decryptor = new ToyBlockCipher(1, encrypting: false) { FailAtCall = failAt };
        byte[] destination = new byte[wrapped.Length - 8];
        destination.AsSpan().Fill(0xCC);
        e = Assert.Throws<CryptographicException>(() => KeyWrap.UnwrapPadded(decryptor, wrapped, destination));
        Assert.Equal("Simulated native failure.", e.Message);
        Assert.All(destination, b => Assert.Equal(0, b));
    }

    [Fact]
    public void Rfc3394_core_allows_overlapping_buffers()
    {
        byte[] key = Enumerable.Range(0, 24).Select(i => (byte)i).ToArray();
        using var encryptor = new StockEcbCipher(key, encrypting: true);
        using var decryptor = new StockEcbCipher(key, encrypting: false);
        byte[] iv = [1, 2, 3, 4, 5, 6, 7, 8];
        byte[] data = Enumerable.Range(0, 40).Select(i => (byte)(200 - i)).ToArray();
        byte[] expected = new byte[48];
        KeyWrap.Wrap(encryptor, iv, data, expected);

        // Data at the end of the buffer (destination starts 8 bytes before it), and at the start.
        foreach (int dataOffset in new[] { 8, 0 })
        {
            byte[] buffer = new byte[56];
            data.CopyTo(buffer, dataOffset);
            KeyWrap.Wrap(encryptor, iv, buffer.AsSpan(dataOffset, 40), buffer.AsSpan(0, 48));
            Assert.True(expected.AsSpan().SequenceEqual(buffer.AsSpan(0, 48)), $"wrap, data offset {dataOffset}");

            byte[] back = new byte[56];
            expected.CopyTo(back, 0);
            int destinationOffset = dataOffset == 8 ? 8 : 0;
            KeyWrap.Unwrap(decryptor, iv, back.AsSpan(0, 48), back.AsSpan(destinationOffset, 40));
            Assert.True(data.AsSpan().SequenceEqual(back.AsSpan(destinationOffset, 40)), $"unwrap, destination offset {destinationOffset}");
        }
    }

    private static byte[] DataWithZeroPad(int padded, int length)
    {
        byte[] data = new byte[padded];

        for (int i = 0; i < length; i++)
        {
            data[i] = (byte)(0x11 + i);
        }

        return data;
    }
}
