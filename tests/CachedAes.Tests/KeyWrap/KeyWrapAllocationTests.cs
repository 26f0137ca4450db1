using System;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The byte[]-returning key-wrap overloads allocate nothing beyond their result: the cached path adds no
/// temporaries of its own. The cost of one result array is calibrated on this runtime rather than assumed.
/// </summary>
public class KeyWrapAllocationTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(32)]
    [InlineData(4096)]
    public void EncryptKeyWrapPadded_byte_array_allocates_only_the_result(int length)
    {
        using var aes = new CachedAes { Key = RandomNumberGenerator.GetBytes(32) };
        byte[] plaintext = RandomNumberGenerator.GetBytes(length);
        int wrappedLength = Aes.GetKeyWrapPaddedLength(length);
        _ = aes.EncryptKeyWrapPadded(plaintext); // warm: handle created, code jitted

        long arrayCost = TestUtil.AllocatedWhenWarm(() => _ = new byte[wrappedLength]);
        long wrapCost = TestUtil.AllocatedWhenWarm(() => _ = aes.EncryptKeyWrapPadded(plaintext));

        Assert.Equal(arrayCost, wrapCost);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(32)]
    [InlineData(4096)]
    public void Span_overloads_allocate_nothing_when_warm(int length)
    {
        using var aes = new CachedAes { Key = RandomNumberGenerator.GetBytes(32) };
        byte[] plaintext = RandomNumberGenerator.GetBytes(length);
        byte[] wrapped = new byte[Aes.GetKeyWrapPaddedLength(length)];
        byte[] unwrapped = new byte[wrapped.Length];
        aes.EncryptKeyWrapPadded(plaintext, wrapped);
        _ = aes.DecryptKeyWrapPadded(wrapped, unwrapped);

        Assert.Equal(0, TestUtil.AllocatedWhenWarm(() => aes.EncryptKeyWrapPadded(plaintext, wrapped)));
        Assert.Equal(0, TestUtil.AllocatedWhenWarm(() => _ = aes.DecryptKeyWrapPadded(wrapped, unwrapped)));
        Assert.Equal(plaintext, unwrapped.AsSpan(0, length).ToArray());
    }
}
