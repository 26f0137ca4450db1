using System;
using System.Linq;
using System.Reflection;
using System.Security.Cryptography;

namespace CachedCryptography.Tests;

/// <summary>
/// The RFC 3394 members have exactly the signatures .NET 11 adds to <see cref="Aes"/> (the API approved in
/// dotnet/runtime issue #130490), so code written against <see cref="CachedAes"/> compiles unchanged on .NET 11.
/// The expected lines are copied by hand from that approved API, not generated from the assembly.
/// </summary>
public sealed class Rfc3394ApiShapeTests
{
    private const BindingFlags Public = BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
    private const BindingFlags Private = BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.DeclaredOnly;

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

    [Theory]
    [MemberData(nameof(NET11PublicMembers))]
    public void CachedAes_declares_each_NET_11_public_member(string declaration) =>
        Assert.Contains(declaration, Declarations(Public));

    [Fact]
    public void CachedAes_declares_no_other_public_RFC_3394_member()
    {
        string[] declared = Declarations(Public).Where(d => d.Contains("KeyWrap(", StringComparison.Ordinal) || d.Contains("KeyWrapLength(", StringComparison.Ordinal)).ToArray();
        Assert.Equal(s_net11PublicMembers.Order(), declared.Order());
    }

    [Fact]
    public void The_cores_have_NET_11s_shape_but_are_private_on_a_sealed_NET_10_class()
    {
        // .NET 11: protected virtual void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
        //          protected virtual int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination);
        string[] declared = Declarations(Private);
        Assert.Contains("private void EncryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)", declared);
        Assert.Contains("private int DecryptKeyWrapCore(ReadOnlySpan<byte> source, Span<byte> destination)", declared);
        Assert.True(typeof(CachedAes).IsSealed);
    }

    [Fact]
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

    private static string[] Declarations(BindingFlags flags) =>
        typeof(CachedAes).GetMethods(flags).Where(m => !m.IsSpecialName).Select(Declaration).ToArray();

    private static string Declaration(MethodInfo method)
    {
        string access = method.IsPublic ? "public" : method.IsFamily ? "protected" : method.IsPrivate ? "private" : "internal";
        string modifiers = method.IsStatic ? " static" : method.IsVirtual && !method.IsFinal ? " virtual" : string.Empty;
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
