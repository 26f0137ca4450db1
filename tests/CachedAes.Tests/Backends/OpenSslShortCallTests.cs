using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// Short <c>EVP_CipherUpdate</c> calls skip the GC transition only where AES is OpenSSL's own code (the default or FIPS
/// provider, and no ENGINE): the decision from what the library says, the handles of each path (every call with the
/// transition, or short ones without) against stock, and a real ENGINE configured in <c>openssl.cnf</c>, in a process of
/// its own.
/// </summary>
[SupportedOSPlatform("linux")]
public static class OpenSslShortCallTests
{
    private static readonly string?[] s_noEngines = new string?[6];

    public static TheoryData<string?[]?, string?[], string?, bool, string> Decisions => new()
    {
        { Six("default"), s_noEngines, null, true, "AES from OpenSSL's default provider, no ENGINE: short EVP_CipherUpdate calls skip the GC transition" },
        { Six("fips"), s_noEngines, null, true, "AES from OpenSSL's fips provider, no ENGINE: short EVP_CipherUpdate calls skip the GC transition" },
        { null, s_noEngines, null, true, "OpenSSL 1.1's own AES, no ENGINE: short EVP_CipherUpdate calls skip the GC transition" },
        { null, s_noEngines, "this libcrypto has no ENGINE API", true, "OpenSSL 1.1's own AES, no ENGINE (this libcrypto has no ENGINE API): short EVP_CipherUpdate calls skip the GC transition" },
        { ["default", "default", "default", "default", "libwolfprov", "default"], s_noEngines, null, false, "AES-192-CBC comes from the provider \"libwolfprov\", not OpenSSL's default or FIPS provider: every EVP_CipherUpdate makes the GC transition" },
        { ["default", null, "default", "default", "default", "default"], s_noEngines, null, false, "AES-192-ECB comes from the provider \"(unnamed)\", not OpenSSL's default or FIPS provider: every EVP_CipherUpdate makes the GC transition" },
        { Six("default"), [null, null, null, "afalg", null, null], null, false, "AES-128-CBC is taken by the ENGINE \"afalg\", which may make system calls or take locks: every EVP_CipherUpdate makes the GC transition" },
        { null, ["devcrypto", null, null, null, null, null], null, false, "AES-128-ECB is taken by the ENGINE \"devcrypto\", which may make system calls or take locks: every EVP_CipherUpdate makes the GC transition" },
    };

    [Theory]
    [MemberData(nameof(Decisions))]
    public static void Short_calls_skip_the_transition_only_for_openssls_own_aes(string?[]? providers, string?[] engines, string? noEngineApi, bool allowed, string reason)
    {
        Assert.Equal(new OpenSslShortCalls(allowed, reason), OpenSslShortCalls.Decide(providers, engines, noEngineApi));
    }

    /// <summary>This machine's libcrypto, as the process found it: OpenSSL's own AES, so short calls skip the transition.</summary>
    [EnvironmentFact(Needs.Linux)]
    public static void The_process_backend_found_openssls_own_aes_and_its_handles_make_short_calls()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? created, out string? why), why);
        var backend = (OpenSslBackend)created;

        Assert.True(backend.ShortCalls.Allowed, backend.ShortCalls.Reason);
        Assert.Contains(backend.ShortCalls.Reason, backend.Description, StringComparison.Ordinal);
        Assert.Equal(4096, Limit(backend, BlockCipherMode.Ecb, true));
        Assert.Equal(4096, Limit(backend, BlockCipherMode.Ecb, false));
        Assert.Equal(512, Limit(backend, BlockCipherMode.Cbc, true));
        Assert.Equal(4096, Limit(backend, BlockCipherMode.Cbc, false));
    }

    /// <summary>
    /// A backend that found AES elsewhere (a third-party provider or an ENGINE): none of its handles skips the transition,
    /// for every mode, direction and key size, after a re-key to another size too, and pooled contexts keep that; the
    /// bytes are stock's at the lengths around the limits.
    /// </summary>
    [EnvironmentFact(Needs.Linux)]
    public static void A_backend_that_found_aes_elsewhere_makes_every_call_with_the_transition_and_matches_stock()
    {
        OpenSslBackend backend = OpenSslBackend.WithShortCalls(new OpenSslShortCalls(false, "a test"));
        Assert.Equal(0, Limit(backend, BlockCipherMode.Ecb, true));
        Assert.Equal(0, Limit(backend, BlockCipherMode.Cbc, true));

        byte[] iv = RandomNumberGenerator.GetBytes(16);
        foreach (int keySize in new[] { 16, 24, 32 })
        {
            byte[] key = RandomNumberGenerator.GetBytes(keySize);
            using var aes = new CachedAes(backend) { Key = key };
            using Aes stock = TestUtil.Stock(key);
            foreach (int length in new[] { 16, 496, 512, 528, 4080, 4096, 4112 })
            {
                byte[] data = RandomNumberGenerator.GetBytes(length);
                Assert.Equal(stock.EncryptEcb(data, PaddingMode.None), aes.EncryptEcb(data, PaddingMode.None));
                Assert.Equal(stock.DecryptEcb(data, PaddingMode.None), aes.DecryptEcb(data, PaddingMode.None));
                Assert.Equal(stock.EncryptCbc(data, iv, PaddingMode.None), aes.EncryptCbc(data, iv, PaddingMode.None));
                Assert.Equal(stock.DecryptCbc(data, iv, PaddingMode.None), aes.DecryptCbc(data, iv, PaddingMode.None));
            }

            foreach (BlockCipherMode mode in new[] { BlockCipherMode.Ecb, BlockCipherMode.Cbc })
            {
                foreach (bool encrypting in new[] { true, false })
                {
                    var handle = (OpenSslCipher)CountingBackend.Inner(aes.PeekCachedHandle(mode, encrypting)!);
                    Assert.Equal(0, handle.ShortLimit);
                }
            }
        }

        BlockCipher rekeyed = backend.Create(BlockCipherMode.Cbc, encrypting: true, RandomNumberGenerator.GetBytes(16));
        Assert.True(rekeyed.TryRekey(RandomNumberGenerator.GetBytes(32)));
        Assert.Equal(0, ((OpenSslCipher)rekeyed).ShortLimit);
        rekeyed.Release();
        Assert.True(backend.Pool.Count > 0);
        Assert.Equal(0, Limit(backend, BlockCipherMode.Cbc, false));
    }

    /// <summary>
    /// A real ENGINE, built here from C and registered in <c>openssl.cnf</c> as the default for every AES ECB/CBC cipher
    /// (it hands out OpenSSL's own legacy AES, so results stay right): a fresh process finds it, says so in
    /// <c>Describe()</c>, passes the self-test and round-trips with every call making the GC transition.
    /// </summary>
    [EnvironmentFact(Needs.Linux | Needs.StockNotForced | Needs.OpenSslDevelopment)]
    public static void A_process_whose_openssl_cnf_gives_aes_to_an_engine_makes_every_call_with_the_transition()
    {
        string folder = Directory.CreateTempSubdirectory("cachedaes-engine-").FullName;
        string source = Path.Combine(folder, "engine.c");
        string library = Path.Combine(folder, "cachedaes-test-engine.so");
        string config = Path.Combine(folder, "openssl.cnf");
        File.WriteAllText(source, EngineSource);
        Compile(source, library);
        File.WriteAllText(config, $"""
            openssl_conf = openssl_init

            [openssl_init]
            engines = engine_section

            [engine_section]
            cachedaes_test = cachedaes_test_section

            [cachedaes_test_section]
            engine_id = cachedaes-test
            dynamic_path = {library}
            default_algorithms = CIPHERS

            """);

        ChildProcess.Report report = ChildProcess.RunSelectionReport(new Dictionary<string, string?> { ["OPENSSL_CONF"] = config });

        Assert.True(report.ExitCode == 0, report.Output);
        Assert.Equal("True", report["RoundTrip"]);
        Assert.Equal(nameof(CachedAesBackend.OpenSsl), report["Backend"]);
        Assert.Equal(nameof(CachedAesPath.Native), report["Ecb"]);
        Assert.Equal(nameof(CachedAesPath.Native), report["Cbc"]);
        Assert.Contains(
            "AES-128-ECB is taken by the ENGINE \"cachedaes-test\", which may make system calls or take locks: every EVP_CipherUpdate makes the GC transition",
            report.Output,
            StringComparison.Ordinal);
        Assert.Contains("Self-test: ECB and key wrap passed, CBC passed", report.Output, StringComparison.Ordinal);
    }

    private static int Limit(OpenSslBackend backend, BlockCipherMode mode, bool encrypting)
    {
        var handle = (OpenSslCipher)backend.Create(mode, encrypting, new byte[16]);
        try
        {
            return handle.ShortLimit;
        }
        finally
        {
            handle.Release();
        }
    }

    private static string?[] Six(string provider) => [provider, provider, provider, provider, provider, provider];

    private static void Compile(string source, string library)
    {
        var start = new ProcessStartInfo("cc") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string argument in new[] { "-shared", "-fPIC", "-Wno-deprecated-declarations", "-o", library, source, "-lcrypto" })
        {
            start.ArgumentList.Add(argument);
        }

        using Process compiler = Process.Start(start)!;
        string output = compiler.StandardOutput.ReadToEnd() + compiler.StandardError.ReadToEnd();
        compiler.WaitForExit();
        Assert.True(compiler.ExitCode == 0, $"cc failed: {output}");
    }

    // An ENGINE that claims the six AES ECB/CBC ciphers and hands out libcrypto's own legacy implementations of them.
    private const string EngineSource = """
        #include <openssl/engine.h>
        #include <openssl/evp.h>
        #include <openssl/obj_mac.h>

        static int nids[] = { NID_aes_128_ecb, NID_aes_192_ecb, NID_aes_256_ecb, NID_aes_128_cbc, NID_aes_192_cbc, NID_aes_256_cbc };

        static int aes_ciphers(ENGINE *e, const EVP_CIPHER **cipher, const int **list, int nid)
        {
            (void)e;
            if (cipher == NULL) { *list = nids; return 6; }
            switch (nid) {
            case NID_aes_128_ecb: *cipher = EVP_aes_128_ecb(); return 1;
            case NID_aes_192_ecb: *cipher = EVP_aes_192_ecb(); return 1;
            case NID_aes_256_ecb: *cipher = EVP_aes_256_ecb(); return 1;
            case NID_aes_128_cbc: *cipher = EVP_aes_128_cbc(); return 1;
            case NID_aes_192_cbc: *cipher = EVP_aes_192_cbc(); return 1;
            case NID_aes_256_cbc: *cipher = EVP_aes_256_cbc(); return 1;
            }
            *cipher = NULL;
            return 0;
        }

        static int cachedaes_bind(ENGINE *e, const char *id)
        {
            (void)id;
            return ENGINE_set_id(e, "cachedaes-test") && ENGINE_set_name(e, "OpenSSL's own AES behind an ENGINE") && ENGINE_set_ciphers(e, aes_ciphers);
        }

        IMPLEMENT_DYNAMIC_BIND_FN(cachedaes_bind)
        IMPLEMENT_DYNAMIC_CHECK_FN()
        """;
}
