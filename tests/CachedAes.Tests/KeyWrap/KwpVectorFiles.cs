using System;
using System.Collections.Generic;
using System.IO;

namespace CachedCryptography.Tests;

/// <summary>
/// Finds and parses the shared vector files for the key-wrap tests. The folder lookup is a private
/// copy of the shared <c>Vectors</c> helper's rule (CACHEDAES_VECTORS, else ../shared/vectors above the
/// repository); the lead switches it to <c>Vectors.Path</c> when both are merged.
/// </summary>
internal static class KwpVectorFiles
{
    private static readonly Lazy<string> s_root = new(FindRoot);

    public static string Path(params string[] parts)
    {
        string path = System.IO.Path.Combine([s_root.Value, .. parts]);

        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"Vector file not found: {path}", path);
        }

        return path;
    }

    private static string FindRoot()
    {
        string? fromEnvironment = Environment.GetEnvironmentVariable("CACHEDAES_VECTORS");

        if (!string.IsNullOrEmpty(fromEnvironment))
        {
            return Directory.Exists(fromEnvironment)
                ? fromEnvironment
                : throw new DirectoryNotFoundException($"CACHEDAES_VECTORS points to a missing folder: {fromEnvironment}");
        }

        // Walk up from the test binaries; at each level try ../shared/vectors relative to that folder.
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            string candidate = System.IO.Path.Combine(dir.FullName, "..", "shared", "vectors");

            if (File.Exists(System.IO.Path.Combine(candidate, "README.md")))
            {
                return System.IO.Path.GetFullPath(candidate);
            }
        }

        throw new DirectoryNotFoundException(
            "Test vectors not found: set CACHEDAES_VECTORS or place them in ../shared/vectors next to the repository.");
    }

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
