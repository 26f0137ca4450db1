using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;

namespace CachedCryptography.Tests;

/// <summary>
/// The documentation names only what exists: every <c>*.cs</c> file named in the Markdown pages, in the XML docs and
/// comments of the C# sources (whole-line, after code, and <c>/* */</c>), in the comments of the scripts and of the
/// project files, and every relative Markdown link, resolves to a file or folder of the repository. (A page that cites a
/// file after it was renamed or merged away misleads the next reader; this fails instead.)
/// </summary>
public sealed partial class RepositoryReferencesTests
{
    private static readonly string s_root = FindRoot();

    private static readonly List<string> s_files = [.. Files("*.cs")];

    private static readonly HashSet<string> s_fileNames = [.. s_files.Select(Path.GetFileName).OfType<string>()];

    // docs/mutation.md records the first mutation runs on the files as they were named then, and says so.
    private static readonly HashSet<string> s_formerNames = ["KeyedHandles.cs", "KeyBox.cs"];

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
        string text = File.ReadAllText(Path.Combine(s_root, page));
        string folder = Path.GetDirectoryName(Path.Combine(s_root, page))!;
        List<string> missing = [.. CsNames(text).Where(name => !NameExists(name, folder))];
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
        Assert.Equal(["NoSuchFileAnywhere.cs"], MissingIn(seam, "// see NoSuchFileAnywhere.cs and KeyEpoch.Slots.cs"));

        // A name with a folder must be at that path: from the repository root, the file's folder or its project's
        // folder. So a file in src/CachedAes/Seam may name the key epoch by its path in the project, a page in docs/
        // may not, and a path to a file that exists only elsewhere is wrong.
        Assert.Empty(MissingIn(seam, "// Core/KeyEpoch.cs, src/CachedAes/Core/KeyEpoch.cs, ../Core/KeyEpoch.cs"));
        Assert.Equal(["Core/CachedAes.cs"], MissingIn(seam, "// Core/CachedAes.cs"));
        Assert.Equal(["Core/NoSuchFile.cs"], MissingIn(seam, "// Core/NoSuchFile.cs"));
        Assert.False(NameExists("Core/KeyEpoch.cs", Path.Combine(s_root, "docs")));
        Assert.True(NameExists("src/CachedAes/Core/KeyEpoch.cs", Path.Combine(s_root, "docs")));
        Assert.True(NameExists("KeyEpoch.Slots.cs", Path.Combine(s_root, "docs")));

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
        Assert.Equal(["Whole.cs", "AfterCommand.cs"], MissingIn(script, """
            # Whole.cs
            echo "# Quoted.cs" ${#x} $# # AfterCommand.cs
            cp Code.cs there
            """));

        // Project files: XML comments; attribute values such as Link="Linked/..." are not references.
        string project = Path.Combine(s_root, "tests", "CachedAes.Tests", "Planted.csproj");
        Assert.Equal(["InComment.cs"], MissingIn(project, """
            <!-- InComment.cs, Infrastructure/Vectors.cs -->
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

    // The *.cs names the commentary of a file names and that do not exist, for a C# source, a script or a project file.
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
        return [.. CsNames(commentary).Where(name => !NameExists(name, folder) && !InProject(name, project))];
    }

    private static bool InProject(string name, string? project) =>
        project is not null && name.Contains('/', StringComparison.Ordinal) && File.Exists(Path.Combine(project, name));

    // A bare name resolves if a file of that name exists anywhere (pages often name a file alone, as the tree in
    // docs/design.md does); a name with a folder must be a path from the repository root or from the naming file's
    // folder (for code and project files, also from its project's folder).
    private static bool NameExists(string name, string folder) =>
        name.Contains('/', StringComparison.Ordinal)
            ? File.Exists(Path.Combine(s_root, name)) || File.Exists(Path.Combine(folder, name))
            : s_fileNames.Contains(name) || s_formerNames.Contains(name);

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

    private static List<string> CsNames(string text) =>
        [.. CsName().Matches(text).Select(m => m.Value.TrimStart('/')).Where(n => !n.Contains('*', StringComparison.Ordinal))];

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

    [GeneratedRegex(@"[A-Za-z0-9_./*-]*[A-Za-z0-9_*]\.cs\b")]
    private static partial Regex CsName();

    [GeneratedRegex(@"\]\(([^)\s]+)\)")]
    private static partial Regex MarkdownLink();

    [GeneratedRegex(@"<!--.*?-->", RegexOptions.Singleline)]
    private static partial Regex XmlComment();
}
