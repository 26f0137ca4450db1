using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// CachedAes's RFC 3394 key wrap against OpenSSL's own wrap cipher (<see cref="OpenSslKeyWrap"/>), over every backend of
/// the contract list and every AES key size: every plaintext length from 16 to 4096 bytes in steps of 8, both
/// directions; every single-byte change of a wrapped key rejected with the destination cleared; and every one-bit
/// change of the recovered integrity register rejected.
/// </summary>
public sealed class Rfc3394OpenSslDifferentialTests
{
    private const int MinLength = 16;
    private const int MaxLength = 4096;

    // The OpenSSL side does not depend on the backend: compute it once per key size for the whole run.
    private static readonly ConcurrentDictionary<int, Lazy<ReferenceSet>> s_references = new();

    [OpenSslTheory]
    [MemberData(nameof(BackendData.NamesAndKeySizes), MemberType = typeof(BackendData))]
    public void Every_length_from_16_to_4096_wraps_like_OpenSSL_and_unwraps_OpenSSLs_wrap(string backend, int keyBits)
    {
        ReferenceSet reference = Reference(keyBits);
        using CachedAes aes = BackendData.Create(backend, reference.Kek);
        int cases = 0;

        for (int index = 0; index < reference.Plaintexts.Length; index++)
        {
            byte[] plaintext = reference.Plaintexts[index];
            byte[] expected = reference.Wraps[index];
            string what = $"{backend}, AES-{keyBits}, {plaintext.Length} bytes";

            // Wrap: the overloads take turns, so each runs over the whole range of lengths.
            byte[] wrapped;
            switch (index % 3)
            {
                case 0:
                    wrapped = aes.EncryptKeyWrap(plaintext);
                    break;
                case 1:
                    wrapped = aes.EncryptKeyWrap(plaintext.AsSpan());
                    break;
                default:
                    wrapped = TestUtil.Filled(expected.Length);
                    aes.EncryptKeyWrap(plaintext, wrapped);
                    break;
            }

            Assert.True(expected.AsSpan().SequenceEqual(wrapped), $"{what}: wrap differs from OpenSSL's");

            // Unwrap OpenSSL's wrap.
            byte[] unwrapped;
            switch (index % 4)
            {
                case 0:
                    unwrapped = aes.DecryptKeyWrap(expected);
                    break;
                case 1:
                    unwrapped = aes.DecryptKeyWrap(expected.AsSpan());
                    break;
                case 2:
                    unwrapped = TestUtil.Filled(plaintext.Length);
                    Assert.Equal(plaintext.Length, aes.DecryptKeyWrap(expected, unwrapped));
                    break;
                default:
                    unwrapped = TestUtil.Filled(plaintext.Length);
                    Assert.True(aes.TryDecryptKeyWrap(expected, unwrapped, out int written), what);
                    Assert.Equal(plaintext.Length, written);
                    break;
            }

            Assert.True(plaintext.AsSpan().SequenceEqual(unwrapped), $"{what}: unwrap of OpenSSL's wrap differs");
            cases++;
        }

        Assert.Equal((MaxLength - MinLength) / 8 + 1, cases);
    }

    [OpenSslTheory]
    [MemberData(nameof(BackendData.NamesAndKeySizes), MemberType = typeof(BackendData))]
    public void Every_single_byte_change_is_rejected_by_both_and_leaves_the_destination_cleared(string backend, int keyBits)
    {
        var random = new Random(3394 + keyBits);
        byte[] kek = TestUtil.Random(random, keyBits / 8);
        using CachedAes aes = BackendData.Create(backend, kek);
        int rejected = 0;

        foreach (int length in new[] { 16, 24, 32, 40, 64, 256 })
        {
            byte[] plaintext = TestUtil.Random(random, length);
            byte[] wrapped = OpenSslKeyWrap.Wrap(kek, plaintext);

            for (int position = 0; position < wrapped.Length; position++)
            {
                byte[] tampered = (byte[])wrapped.Clone();
                tampered[position] ^= (byte)random.Next(1, 256);
                string what = $"{backend}, AES-{keyBits}, {length} bytes, byte {position} changed";
                Assert.True(OpenSslKeyWrap.Unwrap(kek, tampered) is null, $"{what}: OpenSSL accepted it");

                AssertRejected(what, aes, tampered, length, random);
                rejected++;
            }
        }

        Assert.Equal(new[] { 16, 24, 32, 40, 64, 256 }.Sum(l => l + 8), rejected);
    }

    [OpenSslTheory]
    [MemberData(nameof(BackendData.NamesAndKeySizes), MemberType = typeof(BackendData))]
    public void Every_one_bit_change_of_the_recovered_initial_value_is_rejected(string backend, int keyBits)
    {
        // OpenSSL wraps with an explicit IV that differs from A6A6A6A6A6A6A6A6 in one bit, so unwrapping under the same
        // key recovers exactly that value: each of the 64 bits has to be compared, not only some of them.
        var random = new Random(6494 + keyBits);
        byte[] kek = TestUtil.Random(random, keyBits / 8);
        using CachedAes aes = BackendData.Create(backend, kek);

        for (int bit = 0; bit < 64; bit++)
        {
            byte[] iv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];
            iv[bit / 8] ^= (byte)(1 << (bit % 8));
            byte[] plaintext = TestUtil.Random(random, 16 + 8 * (bit % 4));
            byte[] wrapped = OpenSslKeyWrap.Wrap(kek, plaintext, iv);
            string what = $"{backend}, AES-{keyBits}, IV {TestUtil.Hex(iv)}";
            Assert.True(OpenSslKeyWrap.Unwrap(kek, wrapped) is null, $"{what}: OpenSSL accepted it");

            AssertRejected(what, aes, wrapped, plaintext.Length, random);
        }
    }

    [OpenSslTheory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_wrap_under_another_key_is_rejected_and_OpenSSL_unwraps_CachedAes_wraps(string backend)
    {
        var random = new Random(17);
        byte[] kek = TestUtil.Random(random, 32);
        byte[] otherKek = (byte[])kek.Clone();
        otherKek[31] ^= 0x80;
        using CachedAes aes = BackendData.Create(backend, kek);

        foreach (int length in new[] { 16, 24, 32, 48, 520, 4096 })
        {
            byte[] plaintext = TestUtil.Random(random, length);
            AssertRejected($"{backend}, {length} bytes under another key", aes, OpenSslKeyWrap.Wrap(otherKek, plaintext), length, random);

            byte[] wrapped = aes.EncryptKeyWrap(plaintext);
            byte[]? back = OpenSslKeyWrap.Unwrap(kek, wrapped);
            Assert.True(back is not null && plaintext.AsSpan().SequenceEqual(back), $"{backend}, {length} bytes: OpenSSL unwrap of CachedAes's wrap");
        }
    }

    /// <summary>
    /// Every unwrap overload rejects <paramref name="ciphertext"/> with <see cref="CryptographicException"/>; the span
    /// overloads leave the plaintext part of the destination all zero and never touch the bytes after it.
    /// </summary>
    private static void AssertRejected(string what, CachedAes aes, byte[] ciphertext, int plaintextLength, Random random)
    {
        Assert.Equal(plaintextLength, ciphertext.Length - 8);
        AssertIntegrityFailure(what + ", byte[]", Record.Exception(() => aes.DecryptKeyWrap(ciphertext)));
        AssertIntegrityFailure(what + ", span", Record.Exception(() => aes.DecryptKeyWrap(ciphertext.AsSpan())));

        // A destination longer than needed, pre-filled: the first plaintextLength bytes must end all zero, the rest untouched.
        int spare = random.Next(0, 9);
        byte[] destination = TestUtil.Filled(plaintextLength + spare);
        AssertIntegrityFailure(what + ", span to span", Record.Exception(() => aes.DecryptKeyWrap(ciphertext, destination)));
        AssertCleared(what + ", span to span", destination, plaintextLength);

        destination = TestUtil.Filled(plaintextLength + spare);
        AssertIntegrityFailure(what + ", Try", Record.Exception(() => aes.TryDecryptKeyWrap(ciphertext, destination, out _)));
        AssertCleared(what + ", Try", destination, plaintextLength);
    }

    private static void AssertIntegrityFailure(string what, Exception? thrown)
    {
        Assert.True(thrown is CryptographicException, $"{what}: expected CryptographicException, got {thrown?.GetType().Name ?? "success"}");
        Assert.Equal("The ciphertext did not successfully decrypt with the instance key.", thrown!.Message);
    }

    private static void AssertCleared(string what, byte[] destination, int plaintextLength)
    {
        Assert.True(destination.AsSpan(0, plaintextLength).IndexOfAnyExcept((byte)0) < 0, $"{what}: plaintext area not all zero: {TestUtil.Hex(destination)}");
        Assert.True(destination.AsSpan(plaintextLength).IndexOfAnyExcept(TestUtil.Canary) < 0, $"{what}: bytes after the plaintext area were written");
    }

    private static ReferenceSet Reference(int keyBits) =>
        s_references.GetOrAdd(keyBits, bits => new Lazy<ReferenceSet>(() => ReferenceSet.Create(bits))).Value;

    /// <summary>Seeded plaintexts of every length 16..4096 (step 8) and OpenSSL's wrap of each under one KEK.</summary>
    private sealed class ReferenceSet
    {
        private ReferenceSet(byte[] kek, byte[][] plaintexts, byte[][] wraps)
        {
            Kek = kek;
            Plaintexts = plaintexts;
            Wraps = wraps;
        }

        public byte[] Kek { get; }

        public byte[][] Plaintexts { get; }

        public byte[][] Wraps { get; }

        public static ReferenceSet Create(int keyBits)
        {
            var random = new Random(3394 * keyBits);
            byte[] kek = TestUtil.Random(random, keyBits / 8);
            var plaintexts = new List<byte[]>();
            var wraps = new List<byte[]>();

            for (int length = MinLength; length <= MaxLength; length += 8)
            {
                byte[] plaintext = TestUtil.Random(random, length);
                plaintexts.Add(plaintext);
                wraps.Add(OpenSslKeyWrap.Wrap(kek, plaintext));
            }

            return new ReferenceSet(kek, [.. plaintexts], [.. wraps]);
        }
    }
}
