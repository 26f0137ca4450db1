using System;
using System.IO;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// Every simulated backend against the NIST CAVP AES-ECB/CBC known answers (third-party values, not
/// computed here), reusing one handle per key for every record (each CBC record a message at its own IV) as the
/// CachedAes cache does, and then checking the simulated layer saw no misuse and leaked nothing.
/// </summary>
public sealed class SimulatedBackendVectorTests
{
    [Theory]
    [MemberData(nameof(SimulatedBackends.Names), MemberType = typeof(SimulatedBackends))]
    public void Nist_cavp_aes_known_answers(string backendName)
    {
        CipherBackend backend = SimulatedBackends.Create(backendName, out ISimulatedNativeLayer layer);
        string[] files = Directory.GetFiles(Path.Combine(Vectors.Root, "nist-cavp-aes-kat"), "*.rsp");
        Assert.Equal(24, files.Length);

        int cases = 0;
        foreach (string file in files)
        {
            BlockCipherMode mode = Path.GetFileName(file).StartsWith("ECB", StringComparison.Ordinal) ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
            BlockCipher? cipher = null;
            byte[]? cipherKey = null;
            bool cipherEncrypting = false;
            try
            {
                foreach (Vectors.NistAesRecord r in Vectors.ReadNistAes(file))
                {
                    if (cipher is null || !cipherKey.AsSpan().SequenceEqual(r.Key) || cipherEncrypting != r.Encrypt)
                    {
                        cipher?.Release();
                        cipher = backend.Create(mode, r.Encrypt, r.Key);
                        cipherKey = r.Key;
                        cipherEncrypting = r.Encrypt;
                    }

                    byte[] input = r.Encrypt ? r.Plaintext : r.Ciphertext;
                    byte[] expected = r.Encrypt ? r.Ciphertext : r.Plaintext;
                    byte[] output = new byte[input.Length];
                    Assert.True(cipher.TryTransform(mode == BlockCipherMode.Cbc ? r.Iv! : [], input, output));
                    Assert.True(expected.AsSpan().SequenceEqual(output), r.ToString());
                    cases++;
                }
            }
            finally
            {
                cipher?.Release();
            }
        }

        Assert.Equal(4156, cases);
        Assert.Empty(layer.Violations);
        Assert.Equal(0, layer.LiveHandles);
    }
}
