using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;

namespace CachedCryptography.Backends.OpenSsl;

/// <summary>
/// Whether short <c>EVP_CipherUpdate</c> calls may skip the GC transition (<see cref="Libcrypto.EVP_CipherUpdateShort"/>)
/// in this process, and why. A call without the transition must be short pure computation: no lock, no system call, no
/// call back into the runtime (the <c>SuppressGCTransitionAttribute</c> documentation). That holds for AES from OpenSSL's
/// own code, which this decides from what implements the six ciphers: on OpenSSL 3 the provider of each fetched cipher
/// must be OpenSSL's <c>default</c> or <c>fips</c> provider, and on 1.1 and 3 alike no ENGINE may take the cipher
/// (<c>EVP_CipherInit_ex</c> hands a cipher to an ENGINE registered for it in <c>openssl.cnf</c>, such as afalg or
/// devcrypto, which make system calls). Anything else, a third-party provider included, gets normal calls.
/// </summary>
/// <param name="Allowed">True when short calls may skip the GC transition.</param>
/// <param name="Reason">What was found, for diagnostics.</param>
internal readonly record struct OpenSslShortCalls(bool Allowed, string Reason)
{
    /// <summary>The cipher names and NIDs (<c>obj_mac.h</c>) of the backend's table, in its order: ECB 128/192/256, CBC 128/192/256.</summary>
    internal static readonly (string Name, int Nid)[] Ciphers =
    [
        ("AES-128-ECB", 418), ("AES-192-ECB", 422), ("AES-256-ECB", 426),
        ("AES-128-CBC", 419), ("AES-192-CBC", 423), ("AES-256-CBC", 427),
    ];

    // The providers whose AES is OpenSSL's own code.
    private static readonly string[] s_knownProviders = ["default", "fips"];

    /// <summary>
    /// The verdict from what was found: <paramref name="providers"/>, the provider name of each cipher of
    /// <see cref="Ciphers"/> (OpenSSL 3; null on 1.1, which has none), <paramref name="engines"/>, the id of the ENGINE
    /// that would take each (null for none), and <paramref name="noEngineApi"/>, why the ENGINE API could not be asked
    /// (a libcrypto built without it, where no ENGINE can exist), or null.
    /// </summary>
    internal static OpenSslShortCalls Decide(IReadOnlyList<string?>? providers, IReadOnlyList<string?> engines, string? noEngineApi)
    {
        for (int i = 0; i < Ciphers.Length; i++)
        {
            if (engines[i] is string engine)
            {
                return new(false, $"{Ciphers[i].Name} is taken by the ENGINE \"{engine}\", which may make system calls or take locks: every EVP_CipherUpdate makes the GC transition");
            }
        }

        if (providers is not null)
        {
            for (int i = 0; i < Ciphers.Length; i++)
            {
                if (providers[i] is not string provider || Array.IndexOf(s_knownProviders, provider) < 0)
                {
                    return new(false, $"{Ciphers[i].Name} comes from the provider \"{providers[i] ?? "(unnamed)"}\", not OpenSSL's default or FIPS provider: every EVP_CipherUpdate makes the GC transition");
                }
            }
        }

        string source = providers is null
            ? "OpenSSL 1.1's own AES"
            : $"AES from OpenSSL's {string.Join(" and ", providers.Distinct(StringComparer.Ordinal))} provider";
        string engineNote = noEngineApi is null ? "no ENGINE" : $"no ENGINE ({noEngineApi})";
        return new(true, $"{source}, {engineNote}: short EVP_CipherUpdate calls skip the GC transition");
    }

    /// <summary>Asks the loaded libcrypto about <paramref name="ciphers"/> (the backend's table) and decides.</summary>
    internal static OpenSslShortCalls Probe(IntPtr[] ciphers, bool openSsl3)
    {
        string?[] engines = new string?[Ciphers.Length];
        string? noEngineApi = null;
        try
        {
            for (int i = 0; i < Ciphers.Length; i++)
            {
                IntPtr engine = Libcrypto.ENGINE_get_cipher_engine(Ciphers[i].Nid);
                if (engine != IntPtr.Zero)
                {
                    engines[i] = Marshal.PtrToStringUTF8(Libcrypto.ENGINE_get_id(engine)) ?? "(unnamed)";
                    _ = Libcrypto.ENGINE_finish(engine);
                }
            }
        }
        catch (EntryPointNotFoundException)
        {
            noEngineApi = "this libcrypto has no ENGINE API";
        }

        string?[]? providers = null;
        if (openSsl3)
        {
            providers = new string?[Ciphers.Length];
            for (int i = 0; i < Ciphers.Length; i++)
            {
                IntPtr provider = Libcrypto.EVP_CIPHER_get0_provider(ciphers[i]);
                providers[i] = provider == IntPtr.Zero ? null : Marshal.PtrToStringUTF8(Libcrypto.OSSL_PROVIDER_get0_name(provider));
            }
        }

        Libcrypto.ClearStaleErrors();
        return Decide(providers, engines, noEngineApi);
    }
}
