using System;
using System.Linq;
using System.Reflection;
using System.Security.Cryptography;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The RFC 3394 members have exactly the signatures .NET 11 adds to <see cref="Aes"/> (the API approved in
/// dotnet/runtime issue #130490), so code written against <see cref="CachedAes"/> compiles unchanged on .NET 11.
/// The expected lines are copied by hand from that approved API, not generated from the assembly.
/// CachedAes's net10.0 build declares the public members itself and keeps the cores private; its net11.0 build
/// declares none of them (they are <see cref="Aes"/>'s own there) and overrides the two protected virtual cores.
/// </summary>
public sealed class Rfc3394ApiShapeTests
{
    private const string Net11Members = "on .NET 11 these members are Aes's own (see The_NET_11_Aes_base_class_declares_the_approved_members)";
    private const string Net10Cores = "on .NET 10 Aes has no key-wrap cores to override (see The_cores_have_NET_11s_shape_but_are_private_on_a_sealed_NET_10_class)";

    private const BindingFlags Public = BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
    private const BindingFlags Private = BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.DeclaredOnly;

    private static readonly string[] s_net11ProtectedCores =
    [
        "protected virtual void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)",
        "protected virtual int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)",
    ];

    private static readonly string[] s_net11PublicMembers =
    [
        "public byte[] EncryptKeyWrap(byte[] plaintext)",
        "public byte[] EncryptKeyWrap(ReadOnlySpan<byte> plaintext)",
        "public void EncryptKeyWrap(ReadOnlySpan<byte> plaintext, Span<byte> destination)",
        "public byte[] DecryptKeyWrap(byte[] ciphertext)",
        "public byte[] DecryptKeyWrap(ReadOnlySpan<byte> ciphertext)",
        "public int DecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination)",
        "public bool TryDecryptKeyWrap(ReadOnlySpan<byte> ciphertext, Span<byte> destination, out int bytesWritten)",
        "public static int GetKeyWrapLength(int plaintextLengthInBytes)",
    ];

    public static TheoryData<string> NET11PublicMembers() => new(s_net11PublicMembers);

    [BuildTheory(10, Net11Members)]
    [MemberData(nameof(NET11PublicMembers))]
    public void CachedAes_declares_each_NET_11_public_member(string declaration) =>
        Assert.Contains(declaration, Declarations(typeof(CachedAes), Public));

    [Fact]
    public void CachedAes_declares_no_other_public_RFC_3394_member()
    {
        // net10.0: exactly .NET 11's public members; net11.0: none, so no CachedAes member hides one of Aes's.
        string[] expected = Runtimes.Build >= 11 ? [] : s_net11PublicMembers;
        string[] declared = Declarations(typeof(CachedAes), Public).Where(d => d.Contains("KeyWrap(", StringComparison.Ordinal) || d.Contains("KeyWrapLength(", StringComparison.Ordinal)).ToArray();
        Assert.Equal(expected.Order(), declared.Order());
    }

    [BuildFact(11, Net10Cores)]
    public void On_NET_11_the_cores_override_Aes_and_nothing_else_is_declared()
    {
        // The same shapes as .NET 11's protected virtual cores, as overrides of exactly those (sealed by the class).
        string[] declared = Declarations(typeof(CachedAes), Public | BindingFlags.NonPublic).Where(d => d.Contains("KeyWrap", StringComparison.Ordinal) && !d.Contains("Padded", StringComparison.Ordinal)).ToArray();
        Assert.Equal(s_net11ProtectedCores.Select(c => c.Replace("virtual", "override", StringComparison.Ordinal)).Order(), declared.Order());

        foreach (string name in new[] { "EncryptKeyWrapCore", "DecryptKeyWrapCore" })
        {
            MethodInfo core = typeof(CachedAes).GetMethod(name, BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.DeclaredOnly)!;
            Assert.Equal(typeof(Aes), core.GetBaseDefinition().DeclaringType);
        }
    }

    [BuildFact(10, "on .NET 11 the cores are protected overrides (see On_NET_11_the_cores_override_Aes_and_nothing_else_is_declared)")]
    public void The_cores_have_NET_11s_shape_but_are_private_on_a_sealed_NET_10_class()
    {
        // .NET 11: protected virtual void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
        //          protected virtual int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
        string[] declared = Declarations(typeof(CachedAes), Private);
        Assert.Contains("private void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)", declared);
        Assert.Contains("private int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)", declared);
        Assert.True(typeof(CachedAes).IsSealed);
    }

    [RuntimeFact(10, 10, "the running Aes is .NET 11's, which has them (see The_NET_11_Aes_base_class_declares_the_approved_members)")]
    public void The_running_Aes_base_class_has_no_RFC_3394_members_yet()
    {
        // If this fails, the runtime is .NET 11 or later: its Aes declares these members, and CachedAes should then
        // override EncryptKeyWrapCore/DecryptKeyWrapCore instead of declaring its own public members.
        string[] names = ["EncryptKeyWrap", "DecryptKeyWrap", "TryDecryptKeyWrap", "GetKeyWrapLength", "EncryptKeyWrapCore", "DecryptKeyWrapCore"];
        MethodInfo[] found = typeof(Aes).GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static)
            .Where(m => names.Contains(m.Name))
            .ToArray();
        Assert.Empty(found);
    }

    [RuntimeFact(11, int.MaxValue, ".NET 10's Aes has no RFC 3394 members (see The_running_Aes_base_class_has_no_RFC_3394_members_yet)")]
    public void The_NET_11_Aes_base_class_declares_the_approved_members()
    {
        // Read from the running .NET 11 by reflection: the public members are non-virtual, the cores protected virtual,
        // and there is nothing else public or protected about RFC 3394 (the padded RFC 5649 members are .NET 10's).
        string[] declared = Declarations(typeof(Aes), Public | BindingFlags.NonPublic)
            .Where(d => !d.StartsWith("private", StringComparison.Ordinal) && !d.StartsWith("internal", StringComparison.Ordinal))
            .Where(d => d.Contains("KeyWrap", StringComparison.Ordinal) && !d.Contains("Padded", StringComparison.Ordinal))
            .ToArray();
        Assert.Equal(s_net11PublicMembers.Concat(s_net11ProtectedCores).Order(), declared.Order());
    }

    private static string[] Declarations(Type type, BindingFlags flags) =>
        type.GetMethods(flags).Where(m => !m.IsSpecialName).Select(Declaration).ToArray();

    private static string Declaration(MethodInfo method)
    {
        string access = method.IsPublic ? "public" : method.IsFamily ? "protected" : method.IsPrivate ? "private" : "internal";
        string modifiers = method.IsStatic ? " static"
            : method.IsVirtual && method.GetBaseDefinition() != method ? " override"
            : method.IsVirtual && !method.IsFinal ? " virtual"
            : string.Empty;
        string parameters = string.Join(", ", method.GetParameters().Select(p =>
            p.IsOut ? $"out {Name(p.ParameterType.GetElementType()!)} {p.Name}" : $"{Name(p.ParameterType)} {p.Name}"));
        return $"{access}{modifiers} {Name(method.ReturnType)} {method.Name}({parameters})";
    }

    private static string Name(Type type)
    {
        if (type == typeof(void))
        {
            return "void";
        }

        if (type == typeof(byte))
        {
            return "byte";
        }

        if (type == typeof(int))
        {
            return "int";
        }

        if (type == typeof(bool))
        {
            return "bool";
        }

        if (type.IsArray)
        {
            return Name(type.GetElementType()!) + "[]";
        }

        if (type.IsGenericType)
        {
            string name = type.Name[..type.Name.IndexOf('`', StringComparison.Ordinal)];
            return $"{name}<{string.Join(", ", type.GetGenericArguments().Select(Name))}>";
        }

        return type.Name;
    }
}
