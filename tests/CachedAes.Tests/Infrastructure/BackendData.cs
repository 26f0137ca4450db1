using System;
using System.Collections.Generic;
using System.Linq;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Infrastructure;

/// <summary>
/// The CachedAes instances every contract test runs against, by name. This part is compiled into this project and,
/// linked, into the Wine lane's app (tests/lanes/CachedAes.WineTests), so the linked contract suite compiles unchanged there;
/// each project's <c>BackendData.Backends.cs</c> supplies its own table (<c>s_factories</c>), its
/// <c>IsolatedBackend</c> and <c>StockCfbWorks</c>. Here, adding a backend is one line in that table (for example
/// <c>["SimulatedCng"] = () =&gt; new SimulatedCngBackend()</c>).
/// </summary>
public static partial class BackendData
{
    /// <summary>Backend names, for <c>[MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]</c>.</summary>
    public static TheoryData<string> Names
    {
        get
        {
            var data = new TheoryData<string>();
            foreach (string name in s_factories.Keys)
            {
                data.Add(name);
            }

            return data;
        }
    }

    /// <summary>Every backend with every AES key size in bits (128, 192, 256), for <c>[MemberData]</c> like <see cref="Names"/>.</summary>
    public static TheoryData<string, int> NamesAndKeySizes
    {
        get
        {
            var data = new TheoryData<string, int>();
            foreach (string name in s_factories.Keys)
            {
                foreach (int bits in (int[])[128, 192, 256])
                {
                    data.Add(name, bits);
                }
            }

            return data;
        }
    }

    /// <summary>All backend names.</summary>
    public static IReadOnlyList<string> All => s_factories.Keys.ToList();

    /// <summary>
    /// A new CachedAes over a counted backend of the named kind of its own (see <c>IsolatedBackend</c>), so that
    /// handle counts seen through it are this instance's alone. Tests of the process-wide default use <c>new CachedAes()</c>.
    /// </summary>
    public static CachedAes Create(string backend) => new(IsolatedBackend(backend));

    /// <summary>A new CachedAes over the named backend, keyed with <paramref name="key"/>.</summary>
    public static CachedAes Create(string backend, byte[] key)
    {
        CachedAes aes = Create(backend);
        aes.Key = key;
        return aes;
    }

    /// <summary>The named backend, made by its factory in the project's table.</summary>
    internal static CipherBackend Backend(string backend) =>
        s_factories.TryGetValue(backend, out Func<CipherBackend>? factory)
            ? factory()
            : throw new ArgumentException($"Unknown backend '{backend}'.", nameof(backend));
}
