using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;

namespace CachedCryptography.Tests;

/// <summary>
/// The documentation names only what exists: every <c>*.cs</c> file named in the Markdown pages, in the XML docs and
/// comments of <c>src/</c>, and every relative Markdown link, resolves to a file or folder of the repository. (A page
/// that cites a file after it was renamed or merged away misleads the next reader; this fails instead.)
/// </summary>
public sealed partial class RepositoryReferencesTests
{
    private static readonly string s_root = FindRoot();

    private static readonly List<string> s_files = [.. Files("*.cs").Select(p => p.Replace('\\', '/'))];

    private static readonly HashSet<string> s_fileNames = [.. s_files.Select(Path.GetFileName).OfType<string>()];

    // docs/mutation.md records the first mutation runs on the files as they were named then, and says so.
    private static readonly HashSet<string> s_formerNames = ["KeyedHandles.cs", "KeyBox.cs"];

    public static TheoryData<string> Pages
    {
        get
        {
            var data = new TheoryData<string>();
            foreach (string page in Files("*.md").Where(p => !p.Contains("vectors", StringComparison.Ordinal) && !p.Contains("CHANGELOG", StringComparison.Ordinal)))
            {
                data.Add(Path.GetRelativePath(s_root, page));
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(Pages))]
    public void Every_source_file_and_relative_link_a_page_names_exists(string page)
    {
        string text = File.ReadAllText(Path.Combine(s_root, page));
        string folder = Path.GetDirectoryName(Path.Combine(s_root, page))!;
        List<string> missing = [.. CsNames(text).Where(name => !Exists(name, folder))];
        foreach (Match link in MarkdownLink().Matches(text))
        {
            string target = link.Groups[1].Value.Split('#')[0];
            if (target.Length > 0 && !target.Contains("://", StringComparison.Ordinal) && !target.StartsWith("mailto:", StringComparison.Ordinal)
                && !File.Exists(Path.Combine(folder, target)) && !Directory.Exists(Path.Combine(folder, target)))
            {
                missing.Add(link.Value);
            }
        }

        Assert.True(missing.Count == 0, $"{page} names what does not exist: {string.Join(", ", missing.Distinct())}");
    }

    [Fact]
    public void Every_source_file_the_library_comments_name_exists()
    {
        List<string> missing = [];
        foreach (string source in Files("*.cs").Where(p => p.StartsWith(Path.Combine(s_root, "src"), StringComparison.Ordinal)))
        {
            string comments = string.Join('\n', File.ReadLines(source).Select(line => line.TrimStart()).Where(line => line.StartsWith("//", StringComparison.Ordinal)));
            missing.AddRange(CsNames(comments).Where(name => !Exists(name, Path.GetDirectoryName(source)!)).Select(name => $"{Path.GetRelativePath(s_root, source)}: {name}"));
        }

        Assert.True(missing.Count == 0, $"comments name files that do not exist: {string.Join(", ", missing.Distinct())}");
    }

    [Fact]
    public void The_check_finds_a_missing_file()
    {
        // The check itself must be able to fail: a name that exists nowhere is reported, one that exists is not.
        Assert.False(Exists("NoSuchFileAnywhere.cs", s_root));
        Assert.False(Exists("Core/NoSuchFile.cs", s_root));
        Assert.True(Exists("src/CachedAes/Core/KeyEpoch.cs", s_root));
        Assert.True(Exists("Core/KeyEpoch.cs", s_root));
        Assert.True(Exists("KeyEpoch.Handles.cs", s_root));
        Assert.Equal(["Core/KeyEpoch.cs", "KeyEpoch.Stock.cs"], CsNames("see `Core/KeyEpoch.cs` and KeyEpoch.Stock.cs, not *.cs"));
    }

    // A name resolves if it is a path from the repository root or from the page's folder, the end of a file's path (a
    // page about src/CachedAes says Core/KeyEpoch.cs), or the name of a file that exists somewhere (pages often name a
    // file alone, as the tree in docs/design.md does).
    private static bool Exists(string name, string folder) =>
        File.Exists(Path.Combine(s_root, name)) || File.Exists(Path.Combine(folder, name))
        || (name.Contains('/', StringComparison.Ordinal)
            ? s_files.Any(file => file.EndsWith("/" + name, StringComparison.Ordinal))
            : s_fileNames.Contains(name) || s_formerNames.Contains(name));

    private static List<string> CsNames(string text) =>
        [.. CsName().Matches(text).Select(m => m.Value.TrimStart('/')).Where(n => !n.StartsWith('*') && !n.Contains('*', StringComparison.Ordinal))];

    private static IEnumerable<string> Files(string pattern) =>
        Directory.EnumerateFiles(s_root, pattern, SearchOption.AllDirectories)
            .Where(p => !p.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !p.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !p.Contains($"{Path.DirectorySeparatorChar}artifacts{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !p.Contains($"{Path.DirectorySeparatorChar}.git{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !p.Contains("BenchmarkDotNet.Artifacts", StringComparison.Ordinal));

    private static string FindRoot()
    {
        for (DirectoryInfo? folder = new(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "CachedAes.sln")))
            {
                return folder.FullName;
            }
        }

        throw new InvalidOperationException("No CachedAes.sln above the test assembly.");
    }

    [GeneratedRegex(@"[A-Za-z0-9_./*-]*[A-Za-z0-9_*]\.cs\b")]
    private static partial Regex CsName();

    [GeneratedRegex(@"\]\(([^)\s]+)\)")]
    private static partial Regex MarkdownLink();
}
