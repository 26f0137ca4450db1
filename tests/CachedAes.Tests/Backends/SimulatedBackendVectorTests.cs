using System;
using System.Collections.Generic;
using System.IO;
using CachedCryptography.Interop;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// Every simulated backend against the NIST CAVP AES-ECB/CBC known answers (third-party values, not
/// computed here), reusing one handle per key with a <see cref="IBlockCipher.Reset"/> per record as the
/// CachedAes cache does, and then checking the simulated layer saw no misuse and leaked nothing.
/// </summary>
public sealed class SimulatedBackendVectorTests
{
    [Theory]
    [MemberData(nameof(SimulatedBackends.Names), MemberType = typeof(SimulatedBackends))]
    public void Nist_cavp_aes_known_answers(string backendName)
    {
        CipherBackend backend = SimulatedBackends.Create(backendName, out ISimulatedNativeLayer layer);
        string folder = Path.Combine(VectorsFolder(), "nist-cavp-aes-kat");
        string[] files = Directory.GetFiles(folder, "*.rsp");
        Assert.Equal(24, files.Length);

        int cases = 0;
        foreach (string file in files)
        {
            BlockCipherMode mode = Path.GetFileName(file).StartsWith("ECB", StringComparison.Ordinal) ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
            BlockCipher? cipher = null;
            string? cipherKey = null;
            bool cipherEncrypting = false;
            try
            {
                foreach (Record r in Parse(file))
                {
                    if (cipher is null || cipherKey != r.Key || cipherEncrypting != r.Encrypt)
                    {
                        cipher?.Release();
                        cipher = backend.Create(mode, r.Encrypt, Convert.FromHexString(r.Key));
                        cipherKey = r.Key;
                        cipherEncrypting = r.Encrypt;
                    }

                    byte[] input = Convert.FromHexString(r.Encrypt ? r.Plaintext : r.Ciphertext);
                    byte[] expected = Convert.FromHexString(r.Encrypt ? r.Ciphertext : r.Plaintext);
                    byte[] output = new byte[input.Length];
                    byte[] iv = mode == BlockCipherMode.Cbc ? Convert.FromHexString(r.Iv!) : [];
                    Assert.True(cipher.TryTransform(iv, input, output));
                    Assert.True(expected.AsSpan().SequenceEqual(output), $"{Path.GetFileName(file)} {(r.Encrypt ? "ENCRYPT" : "DECRYPT")} COUNT {r.Count}");
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

    private sealed record Record(bool Encrypt, string Count, string Key, string? Iv, string Plaintext, string Ciphertext);

    private static IEnumerable<Record> Parse(string file)
    {
        bool? encrypt = null;
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string raw in File.ReadLines(file))
        {
            string line = raw.Trim();
            if (line.Length == 0 || line.StartsWith('#'))
            {
                if (fields.Count > 0)
                {
                    yield return Make(encrypt, fields);
                    fields.Clear();
                }

                continue;
            }

            if (line is "[ENCRYPT]" or "[DECRYPT]")
            {
                encrypt = line == "[ENCRYPT]";
                continue;
            }

            int eq = line.IndexOf('=', StringComparison.Ordinal);
            fields[line[..eq].Trim()] = line[(eq + 1)..].Trim();
        }

        if (fields.Count > 0)
        {
            yield return Make(encrypt, fields);
        }
    }

    private static Record Make(bool? encrypt, Dictionary<string, string> f)
        => new(
            encrypt ?? throw new InvalidDataException("Record outside [ENCRYPT]/[DECRYPT]."),
            f["COUNT"],
            f["KEY"],
            f.TryGetValue("IV", out string? iv) ? iv : null,
            f["PLAINTEXT"],
            f["CIPHERTEXT"]);

    /// <summary><c>CACHEDAES_VECTORS</c>, else <c>../shared/vectors</c> next to the repository root.</summary>
    private static string VectorsFolder()
    {
        string? fromEnv = Environment.GetEnvironmentVariable("CACHEDAES_VECTORS");
        if (!string.IsNullOrEmpty(fromEnv))
        {
            return Directory.Exists(fromEnv) ? fromEnv : throw new DirectoryNotFoundException($"CACHEDAES_VECTORS={fromEnv} does not exist.");
        }

        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CachedAes.sln")))
            {
                string candidate = Path.GetFullPath(Path.Combine(dir.FullName, "..", "shared", "vectors"));
                return Directory.Exists(candidate)
                    ? candidate
                    : throw new DirectoryNotFoundException($"Test vectors not found at {candidate}; set CACHEDAES_VECTORS or run scripts/fetch-vectors.sh.");
            }
        }

        throw new DirectoryNotFoundException("Repository root (CachedAes.sln) not found above the test binaries.");
    }
}
