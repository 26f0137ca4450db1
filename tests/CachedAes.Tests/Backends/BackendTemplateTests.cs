using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// What every backend gets from the seam's base classes rather than writing it again (docs/design.md, "Adding a backend"):
/// the one key size check, before any native call, for a new handle and for a re-key; and a failure recorded by the
/// handle, described by it. Run over every backend of the contract suites.
/// </summary>
public sealed class BackendTemplateTests
{
    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void A_key_of_no_aes_size_is_refused_for_a_new_handle_and_for_a_rekey(string backendName)
    {
        CountingBackend backend = BackendData.IsolatedBackend(backendName);
        foreach (int length in new[] { 0, 8, 15, 17, 20, 31, 33, 40 })
        {
            Assert.Throws<CryptographicException>(() => backend.Create(BlockCipherMode.Ecb, encrypting: true, new byte[length]));
        }

        Assert.Equal(0, backend.Creations);

        byte[] key = RandomNumberGenerator.GetBytes(24);
        byte[] data = RandomNumberGenerator.GetBytes(32);
        foreach (BlockCipherMode mode in new[] { BlockCipherMode.Ecb, BlockCipherMode.Cbc })
        {
            BlockCipher handle = backend.Create(mode, encrypting: true, key);
            try
            {
                foreach (int length in new[] { 0, 8, 20, 40 })
                {
                    Assert.False(handle.TryRekey(new byte[length]));
                    Assert.False(handle.IsFaulted);
                }

                // Still keyed with its own key.
                byte[] iv = mode == BlockCipherMode.Cbc ? new byte[16] : [];
                byte[] output = new byte[data.Length];
                Assert.True(handle.TryTransform(iv, data, output));
                Assert.Equal(mode == BlockCipherMode.Cbc ? Stock.Cbc(key, iv, data, true) : Stock.Ecb(key, data, true), output);
            }
            finally
            {
                handle.Release();
            }
        }

        Assert.Equal(0, backend.LiveHandles);
    }
}
