using System;
using CachedCryptography.Seam;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Backends.CommonCrypto;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// The real native backends: each must come up on its own OS (and then agree with stock AES), and must
/// report "unavailable" instead of throwing everywhere else. On Linux only the second half runs; the
/// first half runs in the Windows and macOS CI jobs.
/// </summary>
public sealed class RealBackendAvailabilityTests
{
    // Deliberately called on every OS: off its platform, TryCreate must return false, not throw.
#pragma warning disable CA1416
    [Fact]
    public void Cng_is_available_exactly_on_windows()
    {
        bool available = CngBackend.TryCreate(out CipherBackend? backend, out string? reason);
        AssertAvailableExactlyOnItsOs(OperatingSystem.IsWindows(), available, backend, reason, CachedAesBackend.Cng, "bcrypt.dll");
    }

    [Fact]
    public void CommonCrypto_is_available_exactly_on_macos()
    {
        bool available = CommonCryptoBackend.TryCreate(out CipherBackend? backend, out string? reason);
        AssertAvailableExactlyOnItsOs(OperatingSystem.IsMacOS(), available, backend, reason, CachedAesBackend.CommonCrypto, "libcommonCrypto.dylib");
    }
#pragma warning restore CA1416

    // On its OS the backend comes up (no reason) and agrees with stock; elsewhere there is none, with a reason that
    // names the library.
    private static void AssertAvailableExactlyOnItsOs(bool onItsOs, bool available, CipherBackend? backend, string? reason, CachedAesBackend kind, string library)
    {
        Assert.Equal(onItsOs, available);
        if (available)
        {
            Assert.Null(reason);
            AssertAgreesWithStock(backend!, kind);
        }
        else
        {
            Assert.Null(backend);
            Assert.StartsWith(library, reason, StringComparison.Ordinal);
        }
    }

    private static void AssertAgreesWithStock(CipherBackend backend, CachedAesBackend kind)
    {
        Assert.Equal(kind, backend.Kind);
        foreach (int keySize in new[] { 16, 24, 32 })
        {
            byte[] key = Stock.Bytes(keySize, 50 + keySize);
            byte[] iv = Stock.Bytes(16, 51);
            byte[] data = Stock.Bytes(96, 52);
            foreach (bool encrypting in new[] { true, false })
            {
                byte[] ecb = new byte[data.Length];
                byte[] cbc = (byte[])data.Clone();
                BlockCipher e = backend.Create(BlockCipherMode.Ecb, encrypting, key);
                BlockCipher c = backend.Create(BlockCipherMode.Cbc, encrypting, key);
                Assert.True(e.TryTransform(default, data, ecb));
                for (int message = 0; message < 3; message++)
                {
                    // In place, three times with the same IV: every message must start at its IV on a reused handle.
                    data.CopyTo(cbc, 0);
                    Assert.True(c.TryTransform(iv, cbc, cbc));
                    Assert.Equal(Stock.Cbc(key, iv, data, encrypting), cbc);
                }

                Assert.False(e.IsFaulted);
                Assert.False(c.IsFaulted);
                e.Release();
                c.Release();

                Assert.Equal(Stock.Ecb(key, data, encrypting), ecb);
            }
        }
    }
}
