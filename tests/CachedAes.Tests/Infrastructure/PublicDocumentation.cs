using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Xml.Linq;

namespace CachedCryptography.Tests;

/// <summary>
/// What a package's XML documentation file (the one beside its assembly, as packed) may hold: members a consumer can
/// reach, and nothing else. Checked by reflection, independently of how build/PublicXmlDocs forms documentation IDs:
/// every entry's type is a public type (or one nested public or protected in one), no entry names a type that is not,
/// and a member entry names a public or protected member of its type. Linked into the integration packages' test
/// projects.
/// </summary>
internal static class PublicDocumentation
{
    public static void AssertPublicOnly(Assembly assembly)
    {
        string xml = Path.ChangeExtension(assembly.Location, ".xml");
        Assert.True(File.Exists(xml), $"no documentation file beside {assembly.Location}");
        Type[] types = assembly.GetTypes();
        Dictionary<string, Type> byName = types.ToDictionary(t => t.FullName!.Replace('+', '.'), StringComparer.Ordinal);
        var hiddenNames = new HashSet<string>(byName.Where(p => !IsVisible(p.Value)).Select(p => p.Key), StringComparer.Ordinal);
        var problems = new List<string>();
        var documentedTypes = new HashSet<Type>();
        foreach (string id in XDocument.Load(xml).Descendants("member").Select(m => (string)m.Attribute("name")!))
        {
            string path = id[2..];
            int paren = path.IndexOf('(', StringComparison.Ordinal);
            string head = paren >= 0 ? path[..paren] : path;
            (string typeName, string? member) = id[0] == 'T' ? (head, null) : (head[..head.LastIndexOf('.')], head[(head.LastIndexOf('.') + 1)..]);
            if (!byName.TryGetValue(typeName, out Type? type))
            {
                problems.Add($"{id}: no type {typeName}");
                continue;
            }

            documentedTypes.Add(type);
            if (!IsVisible(type))
            {
                problems.Add($"{id}: {typeName} is not public");
            }

            // The types in the parameter list (and a conversion's return type).
            string signature = paren >= 0 ? path[paren..] : "";
            foreach (string named in signature.Split(['(', ')', '{', '}', ',', '@', '[', ']', '*', '~', ':'], StringSplitOptions.RemoveEmptyEntries))
            {
                if (hiddenNames.Contains(named))
                {
                    problems.Add($"{id}: names {named}, which is not public");
                }
            }

            if (member is not null)
            {
                string name = member.Replace('#', '.');
                int generic = name.IndexOf("``", StringComparison.Ordinal);
                name = generic >= 0 ? name[..generic] : name;
                MemberInfo[] found = type.GetMember(name, BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly);
                if (!found.Any(IsVisible))
                {
                    problems.Add($"{id}: {type.Name} has no public or protected member {name}");
                }
            }
        }

        Type[] undocumented = [.. types.Where(t => IsVisible(t) && !documentedTypes.Contains(t))];
        Assert.True(undocumented.Length == 0, $"{xml}: public types without documentation: {string.Join(", ", undocumented.Select(t => t.FullName))}");
        Assert.True(problems.Count == 0, $"{xml} documents what a consumer cannot reach:{Environment.NewLine}{string.Join(Environment.NewLine, problems.Take(30))}");
    }

    private static bool IsVisible(Type type) =>
        type.IsPublic || ((type.IsNestedPublic || type.IsNestedFamily || type.IsNestedFamORAssem) && IsVisible(type.DeclaringType!));

    private static bool IsVisible(MemberInfo member) => member switch
    {
        MethodBase m => m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly,
        FieldInfo f => f.IsPublic || f.IsFamily || f.IsFamilyOrAssembly,
        PropertyInfo p => p.GetAccessors(nonPublic: true).Any(IsVisible),
        EventInfo e => e.AddMethod is { } add && IsVisible(add),
        Type t => IsVisible(t),
        _ => false,
    };
}
