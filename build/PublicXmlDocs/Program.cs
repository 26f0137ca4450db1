// PublicXmlDocs ASSEMBLY XMLDOC: rewrites XMLDOC, the compiler's documentation file for ASSEMBLY, keeping only the
// <member> entries of the public surface: public types (nested ones public or protected in public types), and their
// public, protected and protected internal members. Documentation IDs are computed from the assembly's metadata
// (System.Reflection.Metadata: no type is loaded, so a net11.0 assembly is read by this net10.0 tool) as the compiler
// forms them. Every entry must match a member of the assembly: an ID this tool cannot match is an error (exit 1), so a
// documentation ID it formed wrongly never drops a public member's documentation silently. In the entries kept, a
// <see cref> or <seealso cref> naming a member that is not public becomes <c>its name</c>, so no internal name is left
// as a link. Prints how many entries were kept and removed.
using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Text;
using System.Xml.Linq;

if (args.Length != 2)
{
    Console.Error.WriteLine("usage: PublicXmlDocs ASSEMBLY XMLDOC");
    return 2;
}

var visible = new HashSet<string>(StringComparer.Ordinal);
var hidden = new HashSet<string>(StringComparer.Ordinal);
using (var stream = File.OpenRead(args[0]))
using (var pe = new PEReader(stream))
{
    MetadataReader md = pe.GetMetadataReader();
    var names = new DocIdTypes(md);
    foreach (TypeDefinitionHandle typeHandle in md.TypeDefinitions)
    {
        TypeDefinition type = md.GetTypeDefinition(typeHandle);
        bool typeVisible = IsVisible(md, type);
        string typeId = names.DefinitionName(typeHandle);
        (typeVisible ? visible : hidden).Add("T:" + typeId);

        foreach (MethodDefinitionHandle handle in type.GetMethods())
        {
            MethodDefinition method = md.GetMethodDefinition(handle);
            MethodSignature<string> signature = method.DecodeSignature(names, null);
            string name = md.GetString(method.Name);
            var id = new StringBuilder("M:").Append(typeId).Append('.').Append(MemberName(name));
            if (signature.GenericParameterCount > 0)
            {
                id.Append("``").Append(signature.GenericParameterCount);
            }

            AppendParameters(id, signature.ParameterTypes);
            if (name is "op_Implicit" or "op_Explicit")
            {
                id.Append('~').Append(signature.ReturnType);
            }

            (typeVisible && IsVisibleMember(method.Attributes) ? visible : hidden).Add(id.ToString());
        }

        foreach (FieldDefinitionHandle handle in type.GetFields())
        {
            FieldDefinition field = md.GetFieldDefinition(handle);
            FieldAttributes access = field.Attributes & FieldAttributes.FieldAccessMask;
            bool fieldVisible = access is FieldAttributes.Public or FieldAttributes.Family or FieldAttributes.FamORAssem;
            (typeVisible && fieldVisible ? visible : hidden).Add($"F:{typeId}.{md.GetString(field.Name)}");
        }

        foreach (PropertyDefinitionHandle handle in type.GetProperties())
        {
            PropertyDefinition property = md.GetPropertyDefinition(handle);
            PropertyAccessors accessors = property.GetAccessors();
            bool propertyVisible = new[] { accessors.Getter, accessors.Setter }
                .Any(a => !a.IsNil && IsVisibleMember(md.GetMethodDefinition(a).Attributes));
            var id = new StringBuilder("P:").Append(typeId).Append('.').Append(MemberName(md.GetString(property.Name)));
            AppendParameters(id, property.DecodeSignature(names, null).ParameterTypes);
            (typeVisible && propertyVisible ? visible : hidden).Add(id.ToString());
        }

        foreach (EventDefinitionHandle handle in type.GetEvents())
        {
            EventDefinition ev = md.GetEventDefinition(handle);
            MethodDefinitionHandle adder = ev.GetAccessors().Adder;
            bool eventVisible = !adder.IsNil && IsVisibleMember(md.GetMethodDefinition(adder).Attributes);
            (typeVisible && eventVisible ? visible : hidden).Add($"E:{typeId}.{MemberName(md.GetString(ev.Name))}");
        }
    }
}

XDocument doc = XDocument.Load(args[1], LoadOptions.PreserveWhitespace);
XElement members = doc.Root?.Element("members") ?? throw new InvalidDataException($"{args[1]} has no <members> element.");
int kept = 0, removed = 0;
var unknown = new List<string>();
foreach (XElement member in members.Elements("member").ToList())
{
    string id = (string?)member.Attribute("name") ?? "";
    if (visible.Contains(id))
    {
        kept++;
    }
    else if (hidden.Contains(id))
    {
        if (member.PreviousNode is XText indent && string.IsNullOrWhiteSpace(indent.Value))
        {
            indent.Remove();
        }

        member.Remove();
        removed++;
    }
    else
    {
        unknown.Add(id);
    }
}

if (unknown.Count > 0)
{
    Console.Error.WriteLine($"PublicXmlDocs: error: {args[1]}: no member of {args[0]} has these documentation IDs (the tool forms IDs wrongly for them): {string.Join(", ", unknown)}");
    return 1;
}

// Links to members that are no longer documented: their short name as code.
int unlinked = 0;
foreach (XElement see in members.Descendants().Where(e => e.Name == "see" || e.Name == "seealso").ToList())
{
    string? cref = (string?)see.Attribute("cref");
    if (cref is not null && hidden.Contains(cref))
    {
        string shortName = see.Value.Length > 0 ? see.Value : ShortName(cref);
        see.ReplaceWith(new XElement("c", shortName));
        unlinked++;
    }
}

doc.Save(args[1], SaveOptions.DisableFormatting);
Console.WriteLine($"PublicXmlDocs: {Path.GetFileName(args[1])}: kept {kept} public members, removed {removed} others, unlinked {unlinked} references to them");
return 0;

static bool IsVisible(MetadataReader md, TypeDefinition type)
{
    TypeAttributes access = type.Attributes & TypeAttributes.VisibilityMask;
    return access switch
    {
        TypeAttributes.Public => true,
        TypeAttributes.NestedPublic or TypeAttributes.NestedFamily or TypeAttributes.NestedFamORAssem =>
            IsVisible(md, md.GetTypeDefinition(type.GetDeclaringType())),
        _ => false,
    };
}

static bool IsVisibleMember(MethodAttributes attributes) =>
    (attributes & MethodAttributes.MemberAccessMask) is MethodAttributes.Public or MethodAttributes.Family or MethodAttributes.FamORAssem;

// A member's name in an ID: dots (constructors, explicit interface implementations) become '#', and an explicit
// implementation's generic arguments '{...}' with ',' as '@'.
static string MemberName(string name) =>
    name.Replace('.', '#').Replace('<', '{').Replace('>', '}').Replace(',', '@');

static void AppendParameters(StringBuilder id, ImmutableArray<string> parameters)
{
    if (parameters.Length > 0)
    {
        id.Append('(').AppendJoin(',', parameters).Append(')');
    }
}

static string ShortName(string cref)
{
    string name = cref[2..];
    int paren = name.IndexOf('(', StringComparison.Ordinal);
    if (paren >= 0)
    {
        name = name[..paren];
    }

    string[] parts = name.Split('.');
    return parts[^1] is "#ctor" && parts.Length > 1 ? parts[^2] : parts[^1];
}

/// <summary>Type names as documentation IDs write them, from signatures and type handles.</summary>
internal sealed class DocIdTypes(MetadataReader md) : ISignatureTypeProvider<string, object?>
{
    public string DefinitionName(TypeDefinitionHandle handle)
    {
        TypeDefinition type = md.GetTypeDefinition(handle);
        string name = md.GetString(type.Name);
        TypeDefinitionHandle declaring = type.GetDeclaringType();
        if (!declaring.IsNil)
        {
            return DefinitionName(declaring) + "." + name;
        }

        string ns = md.GetString(type.Namespace);
        return ns.Length == 0 ? name : ns + "." + name;
    }

    public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle handle, byte rawTypeKind) => DefinitionName(handle);

    public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle handle, byte rawTypeKind)
    {
        TypeReference reference = reader.GetTypeReference(handle);
        string name = reader.GetString(reference.Name);
        if (reference.ResolutionScope.Kind == HandleKind.TypeReference)
        {
            return GetTypeFromReference(reader, (TypeReferenceHandle)reference.ResolutionScope, rawTypeKind) + "." + name;
        }

        string ns = reader.GetString(reference.Namespace);
        return ns.Length == 0 ? name : ns + "." + name;
    }

    public string GetTypeFromSpecification(MetadataReader reader, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind) =>
        reader.GetTypeSpecification(handle).DecodeSignature(this, genericContext);

    public string GetPrimitiveType(PrimitiveTypeCode typeCode) => "System." + typeCode switch
    {
        PrimitiveTypeCode.IntPtr => "IntPtr",
        PrimitiveTypeCode.UIntPtr => "UIntPtr",
        _ => typeCode.ToString(),
    };

    // Generic arguments go in braces, and the arity suffixes (`1) of the names they complete are dropped.
    public string GetGenericInstantiation(string genericType, ImmutableArray<string> typeArguments) =>
        System.Text.RegularExpressions.Regex.Replace(genericType, "`[0-9]+", "") + "{" + string.Join(",", typeArguments) + "}";

    public string GetGenericTypeParameter(object? genericContext, int index) => "`" + index;

    public string GetGenericMethodParameter(object? genericContext, int index) => "``" + index;

    public string GetSZArrayType(string elementType) => elementType + "[]";

    public string GetArrayType(string elementType, ArrayShape shape) =>
        elementType + "[" + string.Join(",", Enumerable.Repeat("0:", shape.Rank)) + "]";

    public string GetByReferenceType(string elementType) => elementType + "@";

    public string GetPointerType(string elementType) => elementType + "*";

    public string GetPinnedType(string elementType) => elementType;

    public string GetModifiedType(string modifier, string unmodifiedType, bool isRequired) => unmodifiedType;

    public string GetFunctionPointerType(MethodSignature<string> signature) => "=FUNC:" + signature.ReturnType;
}
