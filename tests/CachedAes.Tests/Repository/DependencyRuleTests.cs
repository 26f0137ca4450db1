using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;

namespace CachedCryptography.Tests;

/// <summary>
/// The dependency rule of docs/design.md ("Source tree"), checked on the sources: every <c>using CachedCryptography.*</c>
/// (plain, static or alias), every fully qualified <c>CachedCryptography.*</c> name in code, and every use of a root type
/// by its simple name (a folder's namespace sees the root's types without a using) is a dependency of the file's folder
/// on the folder that declares it. A dependency the rule does not allow fails, and so does a cycle between folders or
/// between the files of <c>Ownership/</c> (the files of one partial type count as one, since they are one type).
/// Comments and the text of string literals are not read; what an interpolated string computes is.
/// </summary>
public sealed partial class DependencyRuleTests
{
    private const string Root = "CachedCryptography";

    // The root's leaf types, which every folder may use; they use no folder (CachedAesMetrics learns the backend from
    // the selection's PublishBackend instead of asking it).
    private const string Leaf = "leaf types (Errors, CachedAesMetrics, CacheLineSlots, LiveCount, the public enums)";

    // The root's other types: the public surface over the folders.
    private const string Public = "public types (CachedAes, CachedAesDiagnostics)";

    private static readonly HashSet<string> s_leafFiles = ["Errors.cs", "CachedAesMetrics.cs", "CacheLineSlots.cs", "LiveCount.cs", "CachedAesBackend.cs", "CachedAesPath.cs"];

    // The rule: what each part of src/ may use besides itself and the leaf types. "Backends.*" is every backend's folder.
    private static readonly Dictionary<string, string[]> s_allowed = new(StringComparer.Ordinal)
    {
        [Leaf] = [],
        ["Seam"] = [],
        ["Ownership"] = ["Seam"],
        ["Operations"] = ["Seam"],
        ["Operations.Transforms"] = ["Operations", "Ownership", "Seam"],
        ["Backends"] = ["Seam"],
        ["Backends.*"] = ["Backends", "Seam"],
        ["Selection"] = ["Backends", "Backends.*", "Operations", "Seam"],
        [Public] = ["Ownership", "Operations", "Operations.Transforms", "Seam", "Selection"],
        ["integration package"] = [Public],
    };

    // Folders whose files may not depend on each other in a cycle.
    private static readonly string[] s_acyclicFolders = ["Ownership"];

    private static readonly string s_root = FindRoot();

    [Fact]
    public void The_sources_follow_the_dependency_rule()
    {
        SourceTree tree = SourceTree.Read(Path.Combine(s_root, "src"));
        List<string> problems = [.. Forbidden(tree), .. FolderCycles(tree)];
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void The_files_of_acyclic_folders_do_not_depend_on_each_other_in_a_cycle()
    {
        SourceTree tree = SourceTree.Read(Path.Combine(s_root, "src"));
        List<string> problems = [.. s_acyclicFolders.SelectMany(folder => FileCycles(tree, folder))];
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void The_rule_has_no_cycle_of_its_own() =>
        Assert.Empty(Cycles(s_allowed.ToDictionary(pair => pair.Key, pair => (IEnumerable<string>)pair.Value)));

    [Fact]
    public void The_check_reads_every_folder_of_the_library()
    {
        // A folder the rule does not name would pass unchecked; this fails instead, naming it.
        SourceTree tree = SourceTree.Read(Path.Combine(s_root, "src"));
        string[] unknown = [.. tree.Files.Select(file => file.Part).Distinct().Where(part => !s_allowed.ContainsKey(RuleOf(part)))];
        Assert.Empty(unknown);
        Assert.Contains(tree.Files, file => file.Part == "Ownership");
        Assert.Contains(tree.Files, file => file.Part == "Backends.OpenSsl");
        Assert.Contains(tree.Files, file => file.Part == "integration package");
    }

    // The checker itself, on planted sources: each forbidden kind of reference is found, and cycles are.

    [Theory]
    [InlineData("using CachedCryptography.Ownership;\nnamespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { }")]
    [InlineData("using static CachedCryptography.Selection.ProcessBackend;\nnamespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { }")]
    [InlineData("using Epoch = CachedCryptography.Ownership.KeyEpoch;\nnamespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { }")]
    [InlineData("namespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { object? _e = (CachedCryptography.Ownership.KeyEpoch?)null; }")]
    [InlineData("namespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { string Name => $\"{CachedAesDiagnostics.UseStockSwitchName}\"; }")]
    [InlineData("using CachedCryptography.Backends.OpenSsl;\nnamespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { }")]
    public void A_planted_forbidden_reference_is_found(string planted)
    {
        SourceTree tree = SourceTree.Read(Path.Combine(s_root, "src"), ("CachedAes/Backends/Fake/FakeCipher.cs", planted));
        _ = Assert.Single(Forbidden(tree), problem => problem.StartsWith("CachedAes/Backends/Fake/FakeCipher.cs:", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("namespace CachedCryptography.Backends.Fake;\n// CachedCryptography.Ownership.KeyEpoch in a comment\ninternal sealed class FakeCipher { string S => \"CachedAes CachedCryptography.Selection\"; }")]
    [InlineData("using CachedCryptography.Seam;\nnamespace CachedCryptography.Backends.Fake;\ninternal sealed class FakeCipher { CachedAesBackend Kind => CachedAesBackend.OpenSsl; void F() => Errors.ThrowPartialBlock(); }")]
    public void A_planted_allowed_reference_passes(string planted)
    {
        SourceTree tree = SourceTree.Read(Path.Combine(s_root, "src"), ("CachedAes/Backends/Fake/FakeCipher.cs", planted));
        Assert.DoesNotContain(Forbidden(tree), problem => problem.StartsWith("CachedAes/Backends/Fake/", StringComparison.Ordinal));
    }

    [Fact]
    public void A_planted_cycle_between_ownership_files_is_found()
    {
        // KeyMemory is used by the epoch; a key memory that names its epoch closes a cycle.
        SourceTree tree = SourceTree.Read(
            Path.Combine(s_root, "src"),
            ("CachedAes/Ownership/KeyMemoryOwner.cs", "namespace CachedCryptography.Ownership;\ninternal sealed partial class KeyMemory { private KeyEpoch? _owner; }"));
        Assert.Contains(FileCycles(tree, "Ownership"), problem => problem.Contains("KeyEpoch", StringComparison.Ordinal) && problem.Contains("KeyMemory", StringComparison.Ordinal));
    }

    [Fact]
    public void A_planted_cycle_between_folders_is_found()
    {
        Dictionary<string, IEnumerable<string>> graph = new() { ["Seam"] = ["Ownership"], ["Ownership"] = ["Seam"], ["Selection"] = ["Seam"] };
        string cycle = Assert.Single(Cycles(graph));
        Assert.Contains("Seam", cycle, StringComparison.Ordinal);
        Assert.Contains("Ownership", cycle, StringComparison.Ordinal);
    }

    // Each reference the rule does not allow, as "file: what it references (part) may not be used by (part)".
    private static List<string> Forbidden(SourceTree tree)
    {
        List<string> problems = [];
        foreach (SourceFile file in tree.Files)
        {
            s_allowed.TryGetValue(RuleOf(file.Part), out string[]? allowed);
            foreach ((string reference, string part) in tree.References(file))
            {
                if (part != file.Part && part != Leaf && (allowed is null || !allowed.Contains(RuleOf(part))))
                {
                    problems.Add($"{file.Path}: {reference} ({part}) may not be used from {file.Part} (docs/design.md, \"Source tree\")");
                }
            }
        }

        return problems;
    }

    private static List<string> FolderCycles(SourceTree tree)
    {
        Dictionary<string, IEnumerable<string>> graph = tree.Files
            .GroupBy(file => file.Part)
            .ToDictionary(group => group.Key, group => group.SelectMany(tree.References).Select(reference => reference.Part).Where(part => part != group.Key).Distinct());
        return [.. Cycles(graph).Select(cycle => $"a cycle between folders: {cycle}")];
    }

    // Cycles between the files of one folder, a partial type's files counted as one (named by its type).
    private static List<string> FileCycles(SourceTree tree, string folder)
    {
        List<SourceFile> files = [.. tree.Files.Where(file => file.Namespace == $"{Root}.{folder}")];
        Dictionary<string, IEnumerable<string>> graph = files
            .GroupBy(file => file.Unit)
            .ToDictionary(
                unit => unit.Key,
                unit => files.Where(other => other.Unit != unit.Key)
                    .Where(other => other.DeclaredTypes.Any(type => unit.Any(file => file.Mentions(type))))
                    .Select(other => other.Unit)
                    .Distinct());
        return [.. Cycles(graph).Select(cycle => $"a cycle between files of {folder}/: {cycle}")];
    }

    // Every cycle of a graph that a depth-first walk finds, each once (by its set of nodes), as "a -> b -> a".
    private static List<string> Cycles(Dictionary<string, IEnumerable<string>> graph)
    {
        List<string> cycles = [];
        HashSet<string> seen = [];
        HashSet<string> done = [];
        List<string> path = [];

        void Walk(string node)
        {
            path.Add(node);
            foreach (string next in graph.TryGetValue(node, out IEnumerable<string>? targets) ? targets : [])
            {
                int at = path.IndexOf(next);
                if (at >= 0)
                {
                    List<string> cycle = [.. path.Skip(at), next];
                    if (seen.Add(string.Join(",", cycle.Skip(1).Order(StringComparer.Ordinal))))
                    {
                        cycles.Add(string.Join(" -> ", cycle));
                    }
                }
                else if (!done.Contains(next))
                {
                    Walk(next);
                }
            }

            path.RemoveAt(path.Count - 1);
            _ = done.Add(node);
        }

        foreach (string node in graph.Keys.Order(StringComparer.Ordinal).Where(node => !done.Contains(node)))
        {
            Walk(node);
        }

        return cycles;
    }

    /// <summary>The C# sources below a folder, each with the part of the rule it belongs to.</summary>
    private sealed class SourceTree
    {
        private SourceTree(List<SourceFile> files)
        {
            Files = files;
            Namespaces = files.GroupBy(file => file.Namespace).ToDictionary(group => group.Key, group => group.First().Part, StringComparer.Ordinal);
            RootTypes = files.Where(file => file.Namespace == Root && file.Path.StartsWith("CachedAes/", StringComparison.Ordinal))
                .SelectMany(file => file.TopLevelTypes.Select(type => (type, file.Part)))
                .DistinctBy(pair => pair.type)
                .ToDictionary(pair => pair.type, pair => pair.Part, StringComparer.Ordinal);
        }

        public List<SourceFile> Files { get; }

        // Each declared namespace and the part of the rule it belongs to.
        private Dictionary<string, string> Namespaces { get; }

        private Dictionary<string, string> RootTypes { get; }

        /// <param name="folder">The src/ folder.</param>
        /// <param name="planted">Extra files (path below src/, text), for the checker's own tests.</param>
        public static SourceTree Read(string folder, params (string Path, string Text)[] planted)
        {
            IEnumerable<(string Path, string Text)> read = Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories)
                .Select(path => Path.GetRelativePath(folder, path).Replace('\\', '/'))
                .Where(path => !path.Split('/').Any(part => part is "bin" or "obj"))
                .Select(path => (path, File.ReadAllText(Path.Combine(folder, path))));
            return new([.. read.Concat(planted).Select(file => new SourceFile(file.Path, file.Text))]);
        }

        /// <summary>What a file references outside its own namespace, and the part of the rule each belongs to.</summary>
        public IEnumerable<(string Reference, string Part)> References(SourceFile file)
        {
            foreach (string name in file.QualifiedNames)
            {
                // The longest declared namespace that the name starts with; in the root, the type decides.
                string? space = Namespaces.Keys.Where(n => name == n || name.StartsWith(n + ".", StringComparison.Ordinal)).MaxBy(n => n.Length);
                if (space == Root)
                {
                    string type = name[(Root.Length + 1)..].Split('.')[0];
                    yield return (name, RootTypes.TryGetValue(type, out string? part) ? part : Public);
                }
                else if (space is not null && space != file.Namespace)
                {
                    yield return (name, Namespaces[space]);
                }
            }

            if (file.Namespace.StartsWith(Root, StringComparison.Ordinal))
            {
                foreach ((string type, string part) in RootTypes.Where(root => file.Mentions(root.Key)))
                {
                    yield return (type, part);
                }
            }
        }
    }

    /// <summary>One source file: its namespace, part of the rule, declared types and the code without comments and strings.</summary>
    private sealed partial class SourceFile
    {
        private readonly string _code;

        public SourceFile(string path, string text)
        {
            Path = path;
            _code = CodeOnly(text);
            Namespace = NamespaceDeclaration().Match(_code) is { Success: true } declared ? declared.Groups[1].Value : "";
            DeclaredTypes = [.. TypeDeclaration().Matches(_code).Select(match => match.Groups[1].Value)];
            TopLevelTypes = [.. TopLevelTypeDeclaration().Matches(_code).Select(match => match.Groups[1].Value)];
            Unit = TopLevelTypes.FirstOrDefault() ?? System.IO.Path.GetFileNameWithoutExtension(path);
            Part = s_leafFiles.Contains(System.IO.Path.GetFileName(path)) && Namespace == Root ? Leaf : PartOf(Namespace, path);
            QualifiedNames = [.. UsingDirective().Matches(_code).Select(match => match.Groups[1].Value)
                .Concat(QualifiedName().Matches(NamespaceOrUsingLine().Replace(_code, "")).Select(match => match.Value))
                .Distinct()];
        }

        public string Path { get; }

        public string Namespace { get; }

        public string Part { get; }

        /// <summary>The file's first top-level type: the files of one partial type share it.</summary>
        public string Unit { get; }

        public List<string> DeclaredTypes { get; }

        public List<string> TopLevelTypes { get; }

        public List<string> QualifiedNames { get; }

        public bool Mentions(string type) => Regex.IsMatch(_code, $@"(?<![\w.]){Regex.Escape(type)}\b");

        // The code with comments removed and string and character literals emptied, keeping what an interpolated
        // string's holes compute.
        private static string CodeOnly(string text) => new CodeReader(text).Read();

        [GeneratedRegex(@"^\s*namespace\s+([\w.]+)", RegexOptions.Multiline)]
        private static partial Regex NamespaceDeclaration();

        [GeneratedRegex(@"\b(?:class|struct|interface|enum|record)\s+(\w+)")]
        private static partial Regex TypeDeclaration();

        // A type declared at the start of a line with no indentation: a top-level type of a file-scoped namespace.
        [GeneratedRegex(@"^(?:(?:public|internal|file|static|sealed|abstract|unsafe|readonly|ref|partial)\s+)*(?:class|struct|interface|enum|record(?:\s+struct|\s+class)?)\s+(\w+)", RegexOptions.Multiline)]
        private static partial Regex TopLevelTypeDeclaration();

        [GeneratedRegex(@"^\s*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?(CachedCryptography(?:\.\w+)*)\s*;", RegexOptions.Multiline)]
        private static partial Regex UsingDirective();

        [GeneratedRegex(@"^\s*(?:namespace|(?:global\s+)?using)\b[^\n]*", RegexOptions.Multiline)]
        private static partial Regex NamespaceOrUsingLine();

        [GeneratedRegex(@"(?<![\w.])CachedCryptography(?:\.\w+)+")]
        private static partial Regex QualifiedName();
    }

    /// <summary>Reads C# text once, writing what is code: comments dropped, literals emptied, interpolation holes kept.</summary>
    private sealed class CodeReader(string text)
    {
        private readonly string _text = text;
        private readonly StringBuilder _code = new(text.Length);
        private int _i;

        public string Read()
        {
            Code(stopAtBrace: false);
            return _code.ToString();
        }

        private void Code(bool stopAtBrace)
        {
            int depth = 0;
            while (_i < _text.Length)
            {
                char c = _text[_i];
                if (c == '/' && Next(1) == '/')
                {
                    while (_i < _text.Length && _text[_i] != '\n')
                    {
                        _i++;
                    }
                }
                else if (c == '/' && Next(1) == '*')
                {
                    int end = _text.IndexOf("*/", _i + 2, StringComparison.Ordinal);
                    _i = end < 0 ? _text.Length : end + 2;
                    _ = _code.Append(' ');
                }
                else if (c is '$' or '@' && (Next(1) == '"' || (Next(1) is '$' or '@' && Next(2) == '"')))
                {
                    bool interpolated = c == '$' || Next(1) == '$';
                    bool verbatim = c == '@' || Next(1) == '@';
                    _i += Next(1) == '"' ? 1 : 2;
                    String(interpolated, verbatim);
                }
                else if (c == '"')
                {
                    String(interpolated: false, verbatim: false);
                }
                else if (c == '\'')
                {
                    _i++;
                    while (_i < _text.Length && _text[_i] != '\'')
                    {
                        _i += _text[_i] == '\\' ? 2 : 1;
                    }

                    _i++;
                    _ = _code.Append("' '");
                }
                else
                {
                    if (stopAtBrace && c == '{')
                    {
                        depth++;
                    }
                    else if (stopAtBrace && c == '}' && depth-- == 0)
                    {
                        _i++;
                        return;
                    }

                    _ = _code.Append(c);
                    _i++;
                }
            }
        }

        // From the opening quote: the literal's text is dropped, its holes kept as code.
        private void String(bool interpolated, bool verbatim)
        {
            _ = _code.Append('"');
            _i++;
            while (_i < _text.Length)
            {
                char c = _text[_i];
                if (verbatim && c == '"' && Next(1) == '"')
                {
                    _i += 2;
                }
                else if (c == '"' || (!verbatim && c == '\n'))
                {
                    _i++;
                    break;
                }
                else if (!verbatim && c == '\\')
                {
                    _i += 2;
                }
                else if (interpolated && c == '{' && Next(1) == '{')
                {
                    _i += 2;
                }
                else if (interpolated && c == '{')
                {
                    _i++;
                    _ = _code.Append(" (");
                    Code(stopAtBrace: true);
                    _ = _code.Append(") ");
                }
                else
                {
                    _i++;
                }
            }

            _ = _code.Append('"');
        }

        private char Next(int ahead) => _i + ahead < _text.Length ? _text[_i + ahead] : '\0';
    }

    // The part of src/ a file belongs to: an integration package (src/CachedAes.<Name>/), or in the library its
    // namespace below the root, or the root's public types.
    private static string PartOf(string space, string path) =>
        !path.StartsWith("CachedAes/", StringComparison.Ordinal) ? "integration package"
        : space == Root ? Public
        : space.StartsWith(Root + ".", StringComparison.Ordinal) ? space[(Root.Length + 1)..]
        : space;

    // The rule's row for a part: every backend's folder has the row "Backends.*".
    private static string RuleOf(string part) => part.StartsWith("Backends.", StringComparison.Ordinal) ? "Backends.*" : part;

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
}
