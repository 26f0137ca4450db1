using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text.Json;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// The third-party vectors in <c>tests/vectors/</c> (copied next to the test assembly by the test
/// project, into <c>vectors/</c>) and the one parser for their NIST-style text formats.
/// </summary>
internal static class Vectors
{
    /// <summary>The folder of the test assembly's copy of <c>tests/vectors/</c>.</summary>
    public static string Root { get; } = System.IO.Path.Combine(AppContext.BaseDirectory, "vectors");

    /// <summary>A file under <see cref="Root"/> (path parts relative to it); throws when the file does not exist.</summary>
    public static string Path(params string[] parts)
    {
        string path = System.IO.Path.Combine([Root, .. parts]);
        if (!File.Exists(path))
        {
            throw new FileNotFoundException(
                $"Vector file '{path}' does not exist. The test project copies tests/vectors/ into its output folder; " +
                "rebuild it, and check that tests/vectors/ is complete (sha256sum -c SHA256SUMS in that folder).",
                path);
        }

        return path;
    }

    /// <summary>
    /// Reads blank-line separated <c>Name = value</c> records, the format of the NIST CAVP <c>.rsp</c> and key-wrap
    /// <c>.txt</c> files and of Botan's <c>.vec</c> files. Comment lines (<c>#</c>) are skipped, <c>[section]</c>
    /// lines set <see cref="VectorRecord.Section"/> for the records after them, a bare word (NIST's <c>FAIL</c>)
    /// becomes a field with an empty value, and CR line endings are stripped.
    /// </summary>
    public static List<VectorRecord> ReadRecords(string path)
    {
        string file = System.IO.Path.GetFileName(path);
        var records = new List<VectorRecord>();
        string section = "";
        Dictionary<string, string>? fields = null;
        int lineNumber = 0;
        int startLine = 0;

        foreach (string rawLine in File.ReadLines(path))
        {
            lineNumber++;
            string line = rawLine.TrimEnd('\r').Trim();

            if (line.Length == 0)
            {
                Flush();
                continue;
            }

            if (line.StartsWith('#'))
            {
                continue;
            }

            if (line.StartsWith('[') && line.EndsWith(']'))
            {
                Flush();
                section = line[1..^1];
                continue;
            }

            if (fields is null)
            {
                fields = new Dictionary<string, string>(StringComparer.Ordinal);
                startLine = lineNumber;
            }

            int equals = line.IndexOf('=', StringComparison.Ordinal);
            string name = equals < 0 ? line : line[..equals].Trim();
            string value = equals < 0 ? "" : line[(equals + 1)..].Trim();

            if (!fields.TryAdd(name, value))
            {
                throw new InvalidDataException($"{file}:{lineNumber}: duplicate field {name} in one record.");
            }
        }

        Flush();
        return records;

        void Flush()
        {
            if (fields is not null)
            {
                records.Add(new VectorRecord(file, startLine, section, fields));
                fields = null;
            }
        }
    }

    /// <summary>One record of a NIST CAVP AES known-answer (.rsp) file.</summary>
    internal sealed record NistAesRecord(string File, bool Encrypt, int Count, byte[] Key, byte[]? Iv, byte[] Plaintext, byte[] Ciphertext)
    {
        public override string ToString() => $"{File} [{(Encrypt ? "ENCRYPT" : "DECRYPT")}] COUNT={Count}";
    }

    /// <summary>
    /// Reads a NIST AESAVS .rsp file: sections <c>[ENCRYPT]</c>/<c>[DECRYPT]</c>, records
    /// <c>COUNT</c>, <c>KEY</c>, <c>IV</c> (CBC only), <c>PLAINTEXT</c>, <c>CIPHERTEXT</c>.
    /// </summary>
    public static List<NistAesRecord> ReadNistAes(string path)
    {
        var result = new List<NistAesRecord>();
        foreach (VectorRecord r in ReadRecords(path))
        {
            bool encrypt = r.Section switch
            {
                "ENCRYPT" => true,
                "DECRYPT" => false,
                _ => throw new InvalidDataException($"{r}: record outside [ENCRYPT]/[DECRYPT]."),
            };

            foreach (string name in r.Fields.Keys)
            {
                if (name is not ("COUNT" or "KEY" or "IV" or "PLAINTEXT" or "CIPHERTEXT"))
                {
                    throw new InvalidDataException($"{r}: unexpected field {name}.");
                }
            }

            result.Add(new NistAesRecord(
                r.File,
                encrypt,
                int.Parse(r.Text("COUNT"), CultureInfo.InvariantCulture),
                r.Hex("KEY"),
                r.Has("IV") ? r.Hex("IV") : null,
                r.Hex("PLAINTEXT"),
                r.Hex("CIPHERTEXT")));
        }

        return result;
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

/// <summary>One parsed record with where it came from, for failure messages.</summary>
internal sealed record VectorRecord(string File, int Line, string Section, IReadOnlyDictionary<string, string> Fields)
{
    public bool Has(string name) => Fields.ContainsKey(name);

    public string Text(string name) =>
        Fields.TryGetValue(name, out string? value)
            ? value
            : throw new InvalidDataException($"{this}: no field {name}.");

    public byte[] Hex(string name) => Convert.FromHexString(Text(name));

    public override string ToString() =>
        $"{File}:{Line} [{Section}] COUNT={(Fields.TryGetValue("COUNT", out string? c) ? c : "?")}";
}
