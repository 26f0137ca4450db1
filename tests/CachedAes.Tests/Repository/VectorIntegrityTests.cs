using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The vector files are third-party data: every one must hash to the value its publisher's list
/// (<c>tests/vectors/SHA256SUMS</c>, copied with them) gives, and nothing unlisted may sit among them.
/// A failure here means a file was edited, re-encoded (for example CRLF normalised by git) or lost.
/// </summary>
public sealed class VectorIntegrityTests
{
    /// <summary>Files in the folder that SHA256SUMS does not (and cannot) list.</summary>
    private static readonly string[] s_unlisted = ["README.md", "SHA256SUMS", "IN-THIS-REPOSITORY.md"];

    private static readonly System.Buffers.SearchValues<char> s_hexDigits =
        System.Buffers.SearchValues.Create("0123456789abcdefABCDEF");

    private static List<(string Hash, string RelativePath)> ReadSums()
    {
        var entries = new List<(string, string)>();
        int lineNumber = 0;
        foreach (string line in File.ReadLines(Vectors.Path("SHA256SUMS")))
        {
            lineNumber++;

            // sha256sum's text format: 64 hex digits, two spaces (or space and '*' for binary mode), the path.
            if (line.Length < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') ||
                line.AsSpan(0, 64).ContainsAnyExcept(s_hexDigits))
            {
                Assert.Fail($"SHA256SUMS:{lineNumber}: not a sha256sum line: '{line}'");
            }

            entries.Add((line[..64].ToLowerInvariant(), line[66..]));
        }

        return entries;
    }

    [Fact]
    public void Every_listed_file_has_its_published_sha256()
    {
        List<(string Hash, string RelativePath)> sums = ReadSums();
        Assert.Equal(50, sums.Count);
        Assert.Equal(sums.Count, sums.Select(s => s.RelativePath).Distinct(StringComparer.Ordinal).Count());

        var wrong = new List<string>();
        foreach ((string expected, string relativePath) in sums)
        {
            string path = Vectors.Path(relativePath.Split('/'));
            string actual = Convert.ToHexStringLower(SHA256.HashData(File.ReadAllBytes(path)));
            if (actual != expected)
            {
                wrong.Add($"{relativePath}: SHA-256 {actual}, SHA256SUMS says {expected}");
            }
        }

        Assert.True(wrong.Count == 0, string.Join(Environment.NewLine, wrong));
    }

    [Fact]
    public void The_folder_holds_only_listed_files()
    {
        var listed = new HashSet<string>(ReadSums().Select(s => s.RelativePath), StringComparer.Ordinal);
        listed.UnionWith(s_unlisted);

        string[] present = Directory.GetFiles(Vectors.Root, "*", SearchOption.AllDirectories)
            .Select(f => Path.GetRelativePath(Vectors.Root, f).Replace(Path.DirectorySeparatorChar, '/'))
            .ToArray();

        string[] unexpected = present.Where(p => !listed.Contains(p)).ToArray();
        string[] missing = listed.Where(l => !present.Contains(l, StringComparer.Ordinal)).ToArray();
        Assert.True(unexpected.Length == 0, "Files not listed in SHA256SUMS: " + string.Join(", ", unexpected));
        Assert.True(missing.Length == 0, "Listed files missing: " + string.Join(", ", missing));
    }

    [Fact]
    public void Nist_key_wrap_files_keep_their_crlf_line_endings()
    {
        // The vectors' README: the NIST key-wrap .txt files use CRLF. A checkout that normalised them
        // would also fail the hash test; this names the cause.
        byte[] bytes = File.ReadAllBytes(Vectors.Path("nist-cavp-kwp-cavs17.4", "KWP_AE_128.txt"));
        int lf = bytes.Count(b => b == (byte)'\n');
        int crlf = Enumerable.Range(1, bytes.Length - 1).Count(i => bytes[i] == (byte)'\n' && bytes[i - 1] == (byte)'\r');
        Assert.True(lf > 0 && crlf == lf, $"KWP_AE_128.txt has {lf} LF of which {crlf} are CRLF (.gitattributes must keep tests/vectors -text)");
    }
}
