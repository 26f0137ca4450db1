using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;

namespace CachedCryptography.Tests;

/// <summary>
/// The documentation names only what exists: every source file, page or script (<c>*.cs</c>, <c>*.md</c>,
/// <c>*.sh</c>, <c>*.py</c>) named in the Markdown pages, in the XML docs and comments of the C# sources (whole-line,
/// after code, and <c>/* */</c>), in the comments of the scripts and of the project files, and every relative Markdown
/// link, resolves to a file or folder of the repository. (A page that cites a file after it was renamed or merged away,
/// or a file that was never in the repository, misleads the next reader; this fails instead.) Names inside URLs are
/// not checked.
/// </summary>
public sealed partial class RepositoryReferencesTests
{
    private static readonly string s_root = FindRoot();

    private static readonly List<string> s_files = [.. Files("*.cs"), .. Files("*.md"), .. Files("*.sh"), .. Files("*.py")];

    private static readonly HashSet<string> s_fileNames = [.. s_files.Select(Path.GetFileName).OfType<string>()];

    // docs/mutation.md records the first mutation runs on the files as they were named then, and says so.
    private static readonly HashSet<string> s_formerNames = ["KeyedHandles.cs", "KeyBox.cs"];

    // Files that tools write when they run, named where the pages say what the tools produce.
    private static readonly HashSet<string> s_generatedNames = ["CachedAes-short-comparison.md"];

    public static TheoryData<string> Pages
    {
        get
        {
            var data = new TheoryData<string>();
            foreach (string page in Files("*.md").Where(p => !p.Contains("CHANGELOG", StringComparison.Ordinal)))
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
        List<string> missing = MissingInPage(Path.Combine(s_root, page), File.ReadAllText(Path.Combine(s_root, page)));
        Assert.True(missing.Count == 0, $"{page} names what does not exist: {string.Join(", ", missing.Distinct())}");
    }

    // The names and relative links of a Markdown page that do not exist.
    private static List<string> MissingInPage(string page, string text)
    {
        string folder = Path.GetDirectoryName(page)!;
        List<string> missing = [.. Names(text).Where(name => !NameExists(name, folder))];
        foreach (Match link in MarkdownLink().Matches(text))
        {
            string target = link.Groups[1].Value.Split('#')[0];
            if (target.Length > 0 && !target.Contains("://", StringComparison.Ordinal) && !target.StartsWith("mailto:", StringComparison.Ordinal)
                && !File.Exists(Path.Combine(folder, target)) && !Directory.Exists(Path.Combine(folder, target)))
            {
                missing.Add(link.Value);
            }
        }

        return [.. missing.Distinct()];
    }

    [Fact]
    public void Every_source_file_the_code_comments_name_exists() => AssertNoneMissing(Files("*.cs"), "C# comments");

    [Fact]
    public void Every_source_file_the_script_comments_name_exists() => AssertNoneMissing(Scripts(), "script comments");

    [Fact]
    public void Every_source_file_the_project_file_comments_name_exists() =>
        AssertNoneMissing(Files("*.csproj").Concat(Files("*.props")).Concat(Files("*.targets")), "project file comments");

    [Fact]
    public void The_check_finds_a_missing_file()
    {
        // The check itself must be able to fail: a name that exists nowhere is reported, one that exists is not.
        string seam = Path.Combine(s_root, "src", "CachedAes", "Seam", "Planted.cs");
        Assert.Equal(["NoSuchFileAnywhere.cs"], MissingIn(seam, "// see NoSuchFileAnywhere.cs and KeyEpoch.Handles.cs"));

        // A name with a folder must be at that path: from the repository root, the file's folder or its project's
        // folder. So a file in src/CachedAes/Seam may name the key epoch by its path in the project, a page in docs/
        // may not, and a path to a file that exists only elsewhere is wrong.
        Assert.Empty(MissingIn(seam, "// Ownership/KeyEpoch.cs, src/CachedAes/Ownership/KeyEpoch.cs, ../Ownership/KeyEpoch.cs"));
        Assert.Equal(["Ownership/CachedAes.cs"], MissingIn(seam, "// Ownership/CachedAes.cs"));
        Assert.Equal(["Ownership/NoSuchFile.cs"], MissingIn(seam, "// Ownership/NoSuchFile.cs"));
        Assert.False(NameExists("Ownership/KeyEpoch.cs", Path.Combine(s_root, "docs")));
        Assert.True(NameExists("src/CachedAes/Ownership/KeyEpoch.cs", Path.Combine(s_root, "docs")));
        Assert.True(NameExists("KeyEpoch.Handles.cs", Path.Combine(s_root, "docs")));

        // Pages and scripts count as well as sources: a page that is not in the repository is reported, wherever it
        // is named, and one that is (by its name, or by its path from the root or the naming file) is not. A name
        // inside a URL is not a file of the repository and is not checked.
        Assert.Equal(["no-such-page.md", "docs/no-such-notes.md", "scripts/no-such-script.sh", "no_such_tool.py"], MissingIn(seam, """
            // The table in no-such-page.md and docs/no-such-notes.md; run scripts/no-such-script.sh or no_such_tool.py.
            // Present: design-notes.md, docs/design.md, ../../../docs/design.md, scripts/lib/wine.sh, memcheck_errors.py.
            // https://example.com/repo/blob/main/docs/elsewhere.md
            """));
        string page = Path.Combine(s_root, "docs", "planted.md");
        Assert.Equal(["no-such-page.md", "](no-such-page.md)", "](../no-such-folder)"], MissingInPage(page, """
            See no-such-page.md, [link](no-such-page.md), [dir](../no-such-folder), [ok](design.md), [up](../README.md),
            scripts/consumer-test.sh and [away](https://example.com/x/no-such-page-either.md).
            """));

        // C#: comments after code and block comments count; the same text in a string literal is not a comment.
        string source = """
            int a = 1; // see AfterCode.cs
            /* BlockOne.cs */ int b = 2; /*
               BlockTwo.cs */
            /// <c>XmlDoc.cs</c>
            string s = "// InString.cs", t = @"/* InVerbatim.cs */", u = $"{a} // InInterpolated.cs";
            char c = '"'; // AfterChar.cs
            string r = \"\"\"
                // InRaw.cs
                \"\"\";
            """.Replace("\\\"", "\"", StringComparison.Ordinal);
        Assert.Equal(["AfterCode.cs", "BlockOne.cs", "BlockTwo.cs", "XmlDoc.cs", "AfterChar.cs"], MissingIn(seam, source));

        // Scripts: # comments, whole-line or after code; not a # inside quotes or in $# and ${#x}.
        string script = Path.Combine(s_root, "scripts", "planted.sh");
        Assert.Equal(["Whole.cs", "AfterCommand.cs", "whole-page.md"], MissingIn(script, """
            # Whole.cs
            echo "# Quoted.cs" ${#x} $# # AfterCommand.cs
            cp Code.cs there
            # whole-page.md; lib/wine.sh is scripts/lib/wine.sh; $work/made-at-run-time.md and ${out}/made.md are not
            """));

        // Project files: XML comments; attribute values such as Link="Linked/..." are not references.
        string project = Path.Combine(s_root, "tests", "CachedAes.Tests", "Planted.csproj");
        Assert.Equal(["InComment.cs", "InComment.md"], MissingIn(project, """
            <!-- InComment.cs, Infrastructure/Vectors.cs, InComment.md, docs/design.md -->
            <Compile Include="X.cs" Link="Linked/Y.cs" />
            """));
    }

    private static void AssertNoneMissing(IEnumerable<string> files, string what)
    {
        List<string> missing = [];
        foreach (string file in files)
        {
            missing.AddRange(MissingIn(file, File.ReadAllText(file)).Select(name => $"{Path.GetRelativePath(s_root, file)}: {name}"));
        }

        Assert.True(missing.Count == 0, $"{what} name files that do not exist: {string.Join(", ", missing.Distinct())}");
    }

    // The file names the commentary of a file names and that do not exist, for a C# source, a script or a project file.
    private static List<string> MissingIn(string file, string text)
    {
        string commentary = Path.GetExtension(file) switch
        {
            ".cs" => CSharpComments(text),
            ".csproj" or ".props" or ".targets" => string.Join('\n', XmlComment().Matches(text).Select(m => m.Value)),
            _ => ScriptComments(text),
        };
        string folder = Path.GetDirectoryName(file)!;
        string? project = ProjectFolder(folder);
        return [.. Names(commentary).Where(name => !NameExists(name, folder) && !InProject(name, project))];
    }

    private static bool InProject(string name, string? project) =>
        project is not null && name.Contains('/', StringComparison.Ordinal) && File.Exists(Path.Combine(project, name));

    // A bare name resolves if a file of that name exists anywhere (pages often name a file alone, as the tree in
    // docs/design.md does); a name with a folder must be a path from the repository root or from the naming file's
    // folder (for code and project files, also from its project's folder).
    private static bool NameExists(string name, string folder) =>
        name.Contains('/', StringComparison.Ordinal)
            ? File.Exists(Path.Combine(s_root, name)) || File.Exists(Path.Combine(folder, name))
            : s_fileNames.Contains(name) || s_formerNames.Contains(name) || s_generatedNames.Contains(name);

    // The nearest folder at or above this one, inside the repository, that holds a project file.
    private static string? ProjectFolder(string folder)
    {
        for (DirectoryInfo? at = new(folder); at is not null && at.FullName.Length > s_root.Length; at = at.Parent)
        {
            if (at.Exists && at.EnumerateFiles("*.csproj").Any())
            {
                return at.FullName;
            }
        }

        return null;
    }

    // The text of the comments of a C# source: // to the end of the line (XML docs included) and /* */, wherever they
    // start, skipping string and character literals (regular, verbatim, interpolated and raw).
    private static string CSharpComments(string source)
    {
        StringBuilder comments = new();
        int i = 0;
        while (i < source.Length)
        {
            if (At(source, i, "//"))
            {
                int end = source.IndexOf('\n', i);
                end = end < 0 ? source.Length : end;
                comments.Append(source, i, end - i).Append('\n');
                i = end;
            }
            else if (At(source, i, "/*"))
            {
                int end = source.IndexOf("*/", i + 2, StringComparison.Ordinal);
                end = end < 0 ? source.Length : end + 2;
                comments.Append(source, i, end - i).Append('\n');
                i = end;
            }
            else if (At(source, i, "\"\"\"") || At(source, i, "$\"\"\"") || At(source, i, "$$\"\"\""))
            {
                int start = source.IndexOf('"', i);
                int quotes = 0;
                while (start + quotes < source.Length && source[start + quotes] == '"')
                {
                    quotes++;
                }

                int end = source.IndexOf(new string('"', quotes), start + quotes, StringComparison.Ordinal);
                i = end < 0 ? source.Length : end + quotes;
            }
            else if (At(source, i, "@\"") || At(source, i, "$@\"") || At(source, i, "@$\""))
            {
                i = SkipQuoted(source, source.IndexOf('"', i) + 1, '"', verbatim: true);
            }
            else if (source[i] is '"' or '\'')
            {
                i = SkipQuoted(source, i + 1, source[i], verbatim: false);
            }
            else
            {
                i++;
            }
        }

        return comments.ToString();
    }

    private static bool At(string text, int index, string what) => string.CompareOrdinal(text, index, what, 0, what.Length) == 0;

    // The index after the literal's closing quote (or the end of the line, for a regular literal left open).
    private static int SkipQuoted(string source, int i, char quote, bool verbatim)
    {
        while (i < source.Length)
        {
            char c = source[i];
            if (verbatim && c == quote && i + 1 < source.Length && source[i + 1] == quote)
            {
                i += 2;
            }
            else if (c == quote || (!verbatim && c == '\n'))
            {
                return i + 1;
            }
            else
            {
                i += !verbatim && c == '\\' ? 2 : 1;
            }
        }

        return i;
    }

    // The text of the # comments of a shell or Python script: a # at the start of a word, outside quotes.
    private static string ScriptComments(string script)
    {
        StringBuilder comments = new();
        foreach (string line in script.Split('\n'))
        {
            char quote = '\0';
            for (int i = 0; i < line.Length; i++)
            {
                char c = line[i];
                if (quote != '\0')
                {
                    if (c == '\\' && quote == '"')
                    {
                        i++;
                    }
                    else if (c == quote)
                    {
                        quote = '\0';
                    }
                }
                else if (c is '"' or '\'')
                {
                    quote = c;
                }
                else if (c == '#' && (i == 0 || char.IsWhiteSpace(line[i - 1])))
                {
                    comments.Append(line, i, line.Length - i).Append('\n');
                    break;
                }
            }
        }

        return comments.ToString();
    }

    // The names of sources, pages and scripts in a text, outside URLs; not patterns such as *.cs, and not paths that
    // start with a shell variable ($repo/..., ${out}/...), which name what a script makes or finds when it runs.
    private static List<string> Names(string text) =>
        [.. FileName().Matches(Url().Replace(text, " ")).Select(m => m.Value.TrimStart('/')).Where(n => !n.Contains('*', StringComparison.Ordinal))];

    // The scripts: everything under scripts/ that is a shell or Python script, and .ci/run.
    private static IEnumerable<string> Scripts() =>
        Directory.EnumerateFiles(Path.Combine(s_root, "scripts"), "*", SearchOption.AllDirectories)
            .Where(p => Path.GetExtension(p) is ".sh" or ".py" or "")
            .Append(Path.Combine(s_root, ".ci", "run"))
            .Where(File.Exists);

    private static IEnumerable<string> Files(string pattern) =>
        Directory.EnumerateFiles(s_root, pattern, SearchOption.AllDirectories)
            .Where(p => !Skipped(Path.GetRelativePath(s_root, p).Replace('\\', '/')));

    // Build output, the .git folder and the third-party vectors (byte-exact copies, not ours to edit).
    private static bool Skipped(string relative) =>
        ("/" + relative).Split('/').Any(part => part is "bin" or "obj" or "artifacts" or ".git" or "BenchmarkDotNet.Artifacts")
        || relative.StartsWith("tests/vectors/", StringComparison.Ordinal);

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

    [GeneratedRegex(@"(?<![A-Za-z0-9_./*$}{-])[A-Za-z0-9_./*-]*[A-Za-z0-9_*]\.(?:cs|md|sh|py)\b")]
    private static partial Regex FileName();

    [GeneratedRegex(@"[A-Za-z][A-Za-z0-9+.-]*://[^\s)>\]""'`]*")]
    private static partial Regex Url();

    [GeneratedRegex(@"\]\(([^)\s]+)\)")]
    private static partial Regex MarkdownLink();

    [GeneratedRegex(@"<!--.*?-->", RegexOptions.Singleline)]
    private static partial Regex XmlComment();
}
