using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// A handle whose re-key throws instead of returning false (a backend's bug, or memory running out inside it) while a
/// key change re-keys the instance's idle handles: the handle is given back rather than left in a slot reserved for
/// good, the instance goes on with the new key, and every handle is given back by <c>Dispose</c>.
/// </summary>
public class RekeyFailureTests
{
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_rekey_that_throws_gives_the_handle_back_and_the_instance_goes_on_with_the_new_key(string backend)
    {
        var counted = new CountingBackend(new ThrowingRekeyBackend(BackendData.Backend(backend)));
        var rng = new Random(17);
        byte[] key = TestUtil.Random(rng, 32), next = TestUtil.Random(rng, 32), message = TestUtil.Random(rng, 32);
        var aes = new CachedAes(counted) { Key = key };

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): the second call makes
        // the one that stays.
        _ = aes.EncryptEcb(message, PaddingMode.None);
        _ = aes.EncryptEcb(message, PaddingMode.None);
        Assert.Equal(1, counted.LiveHandles);

        Assert.Throws<InvalidOperationException>(() => aes.Key = next);
        Assert.Equal(0, counted.LiveHandles);

        using Aes stock = TestUtil.Stock(next);
        Assert.Equal(next, aes.Key);
        Assert.Equal(stock.EncryptEcb(message, PaddingMode.None), aes.EncryptEcb(message, PaddingMode.None));
        Assert.Equal(1, aes.CachedCount(BlockCipherMode.Ecb, encrypting: true));
        aes.Dispose();
        Assert.Equal(0, counted.LiveHandles);
    }

    private sealed class ThrowingRekeyBackend(CipherBackend inner) : CipherBackend
    {
        public override CachedAesBackend Kind => inner.Kind;

        public override string Description => inner.Description + ", re-keys throw";

        protected override BlockCipher CreateCore(BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
            new Handle(inner.Create(mode, encrypting, key));

        private sealed class Handle(BlockCipher wrapped) : ForwardingCipher(wrapped)
        {
            protected override bool TryRekeyCore(ReadOnlySpan<byte> key) => throw new InvalidOperationException("A re-key that throws.");
        }
    }
}
