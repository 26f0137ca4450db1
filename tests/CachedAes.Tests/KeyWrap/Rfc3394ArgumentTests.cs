using System;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Argument validation of the RFC 3394 members, with the exception types, parameter names and order of checks of
/// .NET 11's <c>Aes</c> (dotnet/runtime PR #132349: the <c>Aes</c> class and its <c>AesKeyWrapTests</c>): the expected types
/// below are written from that source, not computed. Every rejection happens before the instance creates a native
/// handle, which the tests check with the instance's handle count (<c>HandleCreations</c>, Infrastructure/Internals.cs).
/// On CachedAes's net10.0 build (run on .NET 10) these are CachedAes's own checks; on its net11.0 build (run on .NET 11)
/// the public members are <see cref="Aes"/>'s own, so the same expectations check them against the real .NET 11, and
/// that no rejection reaches CachedAes's cores.
/// </summary>
public sealed class Rfc3394ArgumentTests
{
    // RFC 3394 section 4.1: 128-bit KEK, 128 bits of key data.
    private static readonly byte[] s_kek = Convert.FromHexString("000102030405060708090A0B0C0D0E0F");
    private static readonly byte[] s_data = Convert.FromHexString("00112233445566778899AABBCCDDEEFF");
    private static readonly byte[] s_wrapped = Convert.FromHexString("1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5");

    [Theory]
    [InlineData(16, 24)]
    [InlineData(24, 32)]
    [InlineData(4096, 4104)]
    [InlineData(0x7FFF_FFF0, 0x7FFF_FFF8)]
    public void GetKeyWrapLength_adds_8(int plaintextLength, int expected) =>
        Assert.Equal(expected, CachedAes.GetKeyWrapLength(plaintextLength));

    [Fact]
    public void GetKeyWrapLength_rejects_short_unaligned_and_too_large_lengths_with_ArgumentOutOfRangeException()
    {
        int[] invalid =
        [
            int.MinValue, -16, -8, -1, 0, 1, 7, 8, 9, 15, 17, 19, 23, 25, 4095, 4097,
            0x7FFF_FFF1, 0x7FFF_FFF7, 0x7FFF_FFF8, 0x7FFF_FFFF,
        ];

        foreach (int length in invalid)
        {
            var e = Assert.Throws<ArgumentOutOfRangeException>(() => CachedAes.GetKeyWrapLength(length));
            Assert.Equal("plaintextLengthInBytes", e.ParamName);
        }

        // Every multiple of 8 from 16 up to the limit is accepted.
        for (int length = 16; length <= 1024; length += 8)
        {
            Assert.Equal(length + 8, CachedAes.GetKeyWrapLength(length));
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void EncryptKeyWrap_rejects_null_and_bad_plaintext_lengths_before_any_native_work(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);

        Assert.Equal("plaintext", Assert.Throws<ArgumentNullException>(() => aes.EncryptKeyWrap((byte[])null!)).ParamName);

        for (int length = 0; length <= 41; length++)
        {
            if (length >= 16 && length % 8 == 0)
            {
                continue;
            }

            byte[] plaintext = new byte[length];
            byte[] destination = TestUtil.Filled(length + 8);
            AssertArgument("plaintext", () => aes.EncryptKeyWrap(plaintext));
            AssertArgument("plaintext", () => aes.EncryptKeyWrap(plaintext.AsSpan()));

            // The plaintext is checked before the destination, whatever the destination's size.
            AssertArgument("plaintext", () => aes.EncryptKeyWrap(plaintext, destination));
            AssertArgument("plaintext", () => aes.EncryptKeyWrap(plaintext, Span<byte>.Empty));
            Assert.True(destination.All(b => b == TestUtil.Canary));
        }

        Assert.Equal(0, aes.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void EncryptKeyWrap_into_a_span_needs_exactly_the_wrap_length(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);

        foreach (int length in new[] { 16, 24, 64 })
        {
            byte[] plaintext = new byte[length];

            for (int size = 0; size <= length + 16; size++)
            {
                if (size == length + 8)
                {
                    continue;
                }

                byte[] destination = TestUtil.Filled(size);
                var e = AssertArgument("destination", () => aes.EncryptKeyWrap(plaintext, destination));
                Assert.Equal($"Destination must be exactly {length + 8} bytes. (Parameter 'destination')", e.Message);
                Assert.True(destination.All(b => b == TestUtil.Canary), $"destination of {size} bytes was written");
            }
        }

        Assert.Equal(0, aes.HandleCreations);

        byte[] exact = TestUtil.Filled(24);
        aes.EncryptKeyWrap(s_data, exact);
        Assert.Equal(s_wrapped, exact);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void EncryptKeyWrap_rejects_overlapping_buffers_with_CryptographicException_and_accepts_adjacent_ones(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);
        byte[] buffer = new byte[48];

        // Partial overlap at both ends, and the plaintext inside the destination (as for an in-place wrap).
        foreach ((int source, int destination) in new[] { (24, 1), (0, 15), (8, 0), (0, 0) })
        {
            s_data.CopyTo(buffer, source);
            Assert.Throws<CryptographicException>(() => aes.EncryptKeyWrap(buffer.AsSpan(source, 16), buffer.AsSpan(destination, 24)));
        }

        Assert.Equal(0, aes.HandleCreations);

        // Adjacent on either side is fine.
        s_data.CopyTo(buffer, 24);
        aes.EncryptKeyWrap(buffer.AsSpan(24, 16), buffer.AsSpan(0, 24));
        Assert.Equal(s_wrapped, buffer.AsSpan(0, 24).ToArray());
        s_data.CopyTo(buffer, 0);
        aes.EncryptKeyWrap(buffer.AsSpan(0, 16), buffer.AsSpan(16, 24));
        Assert.Equal(s_wrapped, buffer.AsSpan(16, 24).ToArray());
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void DecryptKeyWrap_rejects_null_and_bad_ciphertext_lengths_before_any_native_work(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);

        Assert.Equal("ciphertext", Assert.Throws<ArgumentNullException>(() => aes.DecryptKeyWrap((byte[])null!)).ParamName);

        for (int length = 0; length <= 57; length++)
        {
            if (length >= 24 && length % 8 == 0)
            {
                continue;
            }

            byte[] ciphertext = new byte[length];
            byte[] destination = TestUtil.Filled(64);
            AssertArgument("ciphertext", () => aes.DecryptKeyWrap(ciphertext));
            AssertArgument("ciphertext", () => aes.DecryptKeyWrap(ciphertext.AsSpan()));
            AssertArgument("ciphertext", () => aes.DecryptKeyWrap(ciphertext, destination));
            AssertArgument("ciphertext", () => aes.TryDecryptKeyWrap(ciphertext, destination, out _));

            // The ciphertext is checked first: a too-short destination does not turn this into false or "destination".
            AssertArgument("ciphertext", () => aes.DecryptKeyWrap(ciphertext, Span<byte>.Empty));
            AssertArgument("ciphertext", () => aes.TryDecryptKeyWrap(ciphertext, Span<byte>.Empty, out _));
            Assert.True(destination.All(b => b == TestUtil.Canary));
        }

        Assert.Equal(0, aes.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void DecryptKeyWrap_destination_shorter_than_the_key_throws_or_returns_false_without_writing(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);

        for (int size = 0; size < s_data.Length; size++)
        {
            byte[] destination = TestUtil.Filled(size);
            var e = AssertArgument("destination", () => aes.DecryptKeyWrap(s_wrapped, destination));
            Assert.Equal("Destination is too short. (Parameter 'destination')", e.Message);

            Assert.False(aes.TryDecryptKeyWrap(s_wrapped, destination, out int written));
            Assert.Equal(0, written);
            Assert.True(destination.All(b => b == TestUtil.Canary), $"destination of {size} bytes was written");
        }

        Assert.Equal(0, aes.HandleCreations);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void DecryptKeyWrap_into_a_longer_destination_writes_only_the_key(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);

        for (int spare = 0; spare <= 9; spare++)
        {
            byte[] destination = TestUtil.Filled(s_data.Length + spare);
            Assert.Equal(s_data.Length, aes.DecryptKeyWrap(s_wrapped, destination));
            Assert.Equal(s_data, destination.AsSpan(0, s_data.Length).ToArray());
            Assert.True(destination.AsSpan(s_data.Length).IndexOfAnyExcept(TestUtil.Canary) < 0);

            destination = TestUtil.Filled(s_data.Length + spare);
            Assert.True(aes.TryDecryptKeyWrap(s_wrapped, destination, out int written));
            Assert.Equal(s_data.Length, written);
            Assert.Equal(s_data, destination.AsSpan(0, s_data.Length).ToArray());
            Assert.True(destination.AsSpan(s_data.Length).IndexOfAnyExcept(TestUtil.Canary) < 0);
        }
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void DecryptKeyWrap_rejects_overlap_with_the_key_area_only(string backend)
    {
        using CachedAes aes = BackendData.Create(backend, s_kek);
        byte[] buffer = new byte[64];

        foreach ((int source, int destination) in new[] { (0, 23), (15, 0), (8, 8), (0, 0) })
        {
            s_wrapped.CopyTo(buffer, source);
            Assert.Throws<CryptographicException>(() => aes.DecryptKeyWrap(buffer.AsSpan(source, 24), buffer.AsSpan(destination, 16)));
            Assert.Throws<CryptographicException>(() => aes.TryDecryptKeyWrap(buffer.AsSpan(source, 24), buffer.AsSpan(destination, 16), out _));
        }

        Assert.Equal(0, aes.HandleCreations);

        // Adjacent is fine.
        s_wrapped.CopyTo(buffer, 0);
        Assert.Equal(16, aes.DecryptKeyWrap(buffer.AsSpan(0, 24), buffer.AsSpan(24, 16)));
        Assert.Equal(s_data, buffer.AsSpan(24, 16).ToArray());

        // Only the first ciphertext.Length - 8 bytes of the destination count: a longer destination whose unused tail
        // overlaps the ciphertext is accepted, as .NET 11 slices the destination before its overlap check.
        Array.Clear(buffer);
        s_wrapped.CopyTo(buffer, 16);
        Assert.True(aes.TryDecryptKeyWrap(buffer.AsSpan(16, 24), buffer.AsSpan(0, 40), out int written));
        Assert.Equal(16, written);
        Assert.Equal(s_data, buffer.AsSpan(0, 16).ToArray());
    }

    [Fact]
    public void Conditions_shared_with_the_padded_key_wrap_use_stocks_own_messages()
    {
        // The texts for these conditions are taken from the running stock at run time, not written here: on .NET 10
        // CachedAes's own texts match stock's padded key wrap; on .NET 11 the checks are Aes's own.
        using Aes stock = TestUtil.Stock(s_kek);
        using CachedAes aes = BackendData.Create("PlatformDefault", s_kek);
        byte[] buffer = new byte[64];

        // Overlap.
        Exception stockOverlap = Assert.Throws<CryptographicException>(() => stock.EncryptKeyWrapPadded(buffer.AsSpan(24, 16), buffer.AsSpan(1, 24)));
        Assert.Equal(stockOverlap.Message, Assert.Throws<CryptographicException>(() => aes.EncryptKeyWrap(buffer.AsSpan(24, 16), buffer.AsSpan(1, 24))).Message);
        Assert.Equal(stockOverlap.Message, Assert.Throws<CryptographicException>(() => aes.DecryptKeyWrap(buffer.AsSpan(0, 24), buffer.AsSpan(23, 16))).Message);

        // Destination of the wrong size (for 16 bytes of plaintext both algorithms need exactly 24 bytes).
        Exception stockImprecise = Assert.Throws<ArgumentException>(() => stock.EncryptKeyWrapPadded(new byte[16], new byte[25]));
        Assert.Equal(stockImprecise.Message, Assert.Throws<ArgumentException>(() => aes.EncryptKeyWrap(new byte[16], new byte[25])).Message);

        // Destination too short.
        Exception stockShort = Assert.Throws<ArgumentException>(() => stock.DecryptKeyWrapPadded(new byte[24], new byte[4]));
        Assert.Equal(stockShort.Message, Assert.Throws<ArgumentException>(() => aes.DecryptKeyWrap(s_wrapped, new byte[4])).Message);

        // Too large a plaintext (the padded length helper has the same limit).
        Exception stockTooLarge = Assert.Throws<ArgumentOutOfRangeException>(() => Aes.GetKeyWrapPaddedLength(0x7FFF_FFF8));
        Assert.Equal(stockTooLarge.Message, Assert.Throws<ArgumentOutOfRangeException>(() => CachedAes.GetKeyWrapLength(0x7FFF_FFF8)).Message);
    }

    [RuntimeFact(10, 10, "stock .NET 11 on Linux unwraps in OpenSSL and reports a failure with OpenSSL's error text in an internal " +
        "CryptographicException subclass; CachedAes keeps .NET 10's text (Rfc3394Net11StockTests compares it with .NET 11's KW)")]
    public void An_integrity_failure_uses_NET_10s_padded_key_wrap_message()
    {
        // Taken from stock .NET 10 at run time, not written here.
        using Aes stock = TestUtil.Stock(s_kek);
        using CachedAes aes = BackendData.Create("PlatformDefault", s_kek);
        Exception stockIntegrity = Assert.Throws<CryptographicException>(() => stock.DecryptKeyWrapPadded(new byte[24]));
        Assert.Equal(stockIntegrity.Message, Assert.Throws<CryptographicException>(() => aes.DecryptKeyWrap(new byte[24])).Message);
    }

    private static ArgumentException AssertArgument(string parameter, Action action)
    {
        // Exactly ArgumentException (not a subclass such as ArgumentOutOfRangeException), as .NET 11 throws.
        ArgumentException e = Assert.Throws<ArgumentException>(action);
        Assert.Equal(parameter, e.ParamName);
        return e;
    }

    private static ArgumentException AssertArgument<T>(string parameter, Func<T> func) => AssertArgument(parameter, () => { _ = func(); });
}
