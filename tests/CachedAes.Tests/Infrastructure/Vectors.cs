using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// Locates the shared third-party vectors folder (<c>&lt;repo&gt;/../shared/vectors</c>) and parses its files.
/// When the folder cannot be found every vector test fails with the list of places looked at; nothing is skipped.
/// </summary>
internal static class Vectors
{
    public const string EnvironmentVariable = "CACHEDAES_VECTORS";

    private static readonly Lazy<string> s_root = new(FindRoot);

    /// <summary>The vectors folder; throws (listing every place looked) when it cannot be found.</summary>
    public static string Root => s_root.Value;

    /// <summary>A path under <see cref="Root"/>; throws when the file does not exist.</summary>
    public static string Path(params string[] parts)
    {
        string[] all = new string[parts.Length + 1];
        all[0] = Root;
        Array.Copy(parts, 0, all, 1, parts.Length);
        string path = System.IO.Path.Combine(all);
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"Vector file '{path}' does not exist (vectors root: '{Root}').", path);
        }

        return path;
    }

    private static string FindRoot()
    {
        var looked = new List<string>();
        string? env = Environment.GetEnvironmentVariable(EnvironmentVariable);
        if (!string.IsNullOrEmpty(env))
        {
            string full = System.IO.Path.GetFullPath(env);
            if (Directory.Exists(full))
            {
                return full;
            }

            throw new DirectoryNotFoundException(
                $"{EnvironmentVariable} is set to '{env}' ('{full}'), which is not a directory.");
        }

        looked.Add($"{EnvironmentVariable} (not set)");
        foreach (string start in new[] { AppContext.BaseDirectory, Directory.GetCurrentDirectory() })
        {
            for (DirectoryInfo? dir = new(start); dir is not null; dir = dir.Parent)
            {
                // The repository is cloned next to a "shared" folder: <repo>/../shared/vectors.
                string candidate = System.IO.Path.Combine(dir.FullName, "shared", "vectors");
                looked.Add(candidate);
                if (Directory.Exists(candidate) && File.Exists(System.IO.Path.Combine(candidate, "SHA256SUMS")))
                {
                    return candidate;
                }
            }
        }

        throw new DirectoryNotFoundException(
            "The shared test vectors folder was not found. Set " + EnvironmentVariable +
            " or place the vectors at <repo>/../shared/vectors (scripts/fetch-vectors.sh fetches them). Looked in:" +
            Environment.NewLine + "  " + string.Join(Environment.NewLine + "  ", looked));
    }

    /// <summary>One record of a NIST CAVP AES known-answer (.rsp) file.</summary>
    internal sealed record NistAesRecord(string File, bool Encrypt, int Count, byte[] Key, byte[]? Iv, byte[] Plaintext, byte[] Ciphertext)
    {
        public override string ToString() => $"{File} [{(Encrypt ? "ENCRYPT" : "DECRYPT")}] COUNT={Count}";
    }

    /// <summary>Parses a NIST AESAVS .rsp file: sections [ENCRYPT]/[DECRYPT], records COUNT/KEY/IV/PLAINTEXT/CIPHERTEXT.</summary>
    public static List<NistAesRecord> ReadNistAes(string path)
    {
        string name = System.IO.Path.GetFileName(path);
        var records = new List<NistAesRecord>();
        bool? encrypt = null;
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);

        void Flush(int lineNo)
        {
            if (fields.Count == 0)
            {
                return;
            }

            if (encrypt is null)
            {
                throw new FormatException($"{name}:{lineNo}: record outside [ENCRYPT]/[DECRYPT].");
            }

            string Get(string key) => fields.TryGetValue(key, out string? v)
                ? v
                : throw new FormatException($"{name}:{lineNo}: record lacks {key}.");

            records.Add(new NistAesRecord(
                name,
                encrypt.Value,
                int.Parse(Get("COUNT"), System.Globalization.CultureInfo.InvariantCulture),
                Convert.FromHexString(Get("KEY")),
                fields.TryGetValue("IV", out string? iv) ? Convert.FromHexString(iv) : null,
                Convert.FromHexString(Get("PLAINTEXT")),
                Convert.FromHexString(Get("CIPHERTEXT"))));
            fields.Clear();
        }

        string[] lines = File.ReadAllLines(path);
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i].Trim();
            if (line.StartsWith('#'))
            {
                continue;
            }

            if (line.Length == 0)
            {
                Flush(i + 1);
                continue;
            }

            if (line.StartsWith('['))
            {
                Flush(i + 1);
                encrypt = line switch
                {
                    "[ENCRYPT]" => true,
                    "[DECRYPT]" => false,
                    _ => throw new FormatException($"{name}:{i + 1}: unknown section {line}."),
                };
                continue;
            }

            int eq = line.IndexOf('=', StringComparison.Ordinal);
            if (eq < 0)
            {
                throw new FormatException($"{name}:{i + 1}: unexpected line '{line}'.");
            }

            fields[line[..eq].Trim()] = line[(eq + 1)..].Trim();
        }

        Flush(lines.Length);
        return records;
    }

    /// <summary>One Wycheproof AES-CBC-PKCS5 test.</summary>
    internal sealed record WycheproofCbcCase(int TcId, string Comment, string[] Flags, byte[] Key, byte[] Iv, byte[] Msg, byte[] Ct, string Result)
    {
        public bool Valid => Result == "valid";

        public override string ToString() => $"tcId {TcId} ({Comment}, {Result})";
    }

    /// <summary>Reads wycheproof/aes_cbc_pkcs5_test.json (or a file of the same schema).</summary>
    public static List<WycheproofCbcCase> ReadWycheproofCbc(string path)
    {
        using FileStream stream = File.OpenRead(path);
        using JsonDocument doc = JsonDocument.Parse(stream);
        var cases = new List<WycheproofCbcCase>();
        foreach (JsonElement group in doc.RootElement.GetProperty("testGroups").EnumerateArray())
        {
            foreach (JsonElement test in group.GetProperty("tests").EnumerateArray())
            {
                var flags = new List<string>();
                foreach (JsonElement f in test.GetProperty("flags").EnumerateArray())
                {
                    flags.Add(f.GetString()!);
                }

                cases.Add(new WycheproofCbcCase(
                    test.GetProperty("tcId").GetInt32(),
                    test.GetProperty("comment").GetString()!,
                    flags.ToArray(),
                    Convert.FromHexString(test.GetProperty("key").GetString()!),
                    Convert.FromHexString(test.GetProperty("iv").GetString()!),
                    Convert.FromHexString(test.GetProperty("msg").GetString()!),
                    Convert.FromHexString(test.GetProperty("ct").GetString()!),
                    test.GetProperty("result").GetString()!));
            }
        }

        return cases;
    }
}
