using System;
using System.Collections.Generic;
using System.IO;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Finds and parses the shared vector files for the key-wrap tests (the folder comes from <see cref="Vectors"/>).
/// </summary>
internal static class KwpVectorFiles
{
    /// <summary>A file in the shared vector folder (see <see cref="Vectors"/> for where it is looked for).</summary>
    public static string Path(params string[] parts) => Vectors.Path(parts);

    /// <summary>
    /// Reads blank-line separated <c>Name = value</c> records. Comment lines (<c>#</c>) are skipped,
    /// <c>[section]</c> lines set <see cref="VectorRecord.Section"/>, and a bare word (NIST's <c>FAIL</c>)
    /// becomes a field with an empty value. CR line endings are stripped.
    /// </summary>
    public static List<VectorRecord> ReadRecords(string path)
    {
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
                throw new InvalidDataException($"{path}:{lineNumber}: duplicate field {name} in one record.");
            }
        }

        Flush();
        return records;

        void Flush()
        {
            if (fields is not null)
            {
                records.Add(new VectorRecord(System.IO.Path.GetFileName(path), startLine, section, fields));
                fields = null;
            }
        }
    }
}

/// <summary>One parsed record with where it came from, for failure messages.</summary>
internal sealed record VectorRecord(string File, int Line, string Section, IReadOnlyDictionary<string, string> Fields)
{
    public bool Has(string name) => Fields.ContainsKey(name);

    public byte[] Hex(string name) =>
        Fields.TryGetValue(name, out string? value)
            ? Convert.FromHexString(value)
            : throw new InvalidDataException($"{this}: no field {name}.");

    public override string ToString() =>
        $"{File}:{Line} [{Section}] COUNT={(Fields.TryGetValue("COUNT", out string? c) ? c : "?")}";
}
