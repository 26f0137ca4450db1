using System;
using System.Linq;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Backends.CbcOverEcb;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// The selection-time self-test and the per-mode fallback, over the simulated native layers (including one that
/// misbehaves like Wine 8.0's bcrypt) and over a backend decorator that corrupts chosen transforms.
/// </summary>
public sealed class BackendSelfTestTests
{
    public static TheoryData<string> CorrectSimulatedBackends() => new(SimulatedBackends.All.ToArray());

    public static TheoryData<string> Wine8Backends() => new(SimulatedBackends.CngWine8PseudoHandles, SimulatedBackends.CngWine8Providers);

    [Theory]
    [MemberData(nameof(CorrectSimulatedBackends))]
    public void A_correct_simulated_backend_passes_and_every_handle_is_released(string name)
    {
        CipherBackend backend = SimulatedBackends.Create(name, out ISimulatedNativeLayer layer);
        int liveBefore = layer.LiveHandles;

        SelfTest.Result result = SelfTest.Run(backend);

        Assert.Null(result.EcbFailure);
        Assert.Null(result.CbcFailure);
        Assert.Equal(liveBefore, layer.LiveHandles);
        Assert.Empty(layer.Violations);
    }

    [Fact]
    public void The_stock_backend_and_this_platforms_native_backend_pass()
    {
        Assert.Equal(default, SelfTest.Run(StockBackend.Instance));

        // On Linux, Windows and macOS the real library was probed; it must pass here (on Windows and macOS this runs in CI).
        if (OperatingSystem.IsLinux() || OperatingSystem.IsWindows() || OperatingSystem.IsMacOS())
        {
            CipherBackend native = Assert.IsAssignableFrom<CipherBackend>(ProcessBackend.Selection.Native);
            Assert.Equal(default, SelfTest.Run(native));
        }
    }

    [Fact]
    public void The_self_test_makes_fourteen_handles_and_releases_them()
    {
        var counting = new MisbehavingBackend(StockBackend.Instance);

        Assert.Equal(default, SelfTest.Run(counting));

        Assert.Equal(14, counting.Created);
        Assert.Equal(0, counting.LiveHandles);
    }

    [Theory]
    [MemberData(nameof(Wine8Backends))]
    public void The_simulated_wine8_quirk_really_breaks_a_cached_cbc_handle(string name)
    {
        // Without the self-test: the second message with the same IV on the cached handle comes out wrong, with no error.
        CipherBackend raw = SimulatedBackends.Create(name, out _);
        byte[] key = Stock.Bytes(16, 1);
        byte[] iv = Stock.Bytes(16, 2);
        byte[] data = Stock.Bytes(64, 3);
        using var aes = new CachedAes(raw) { Key = key };

        // The key's first handle is given back after its call (KeyEpoch.Handles.cs, _cachesHandles): a call before, so that
        // both messages below run on the handle the first of them makes and caches.
        Assert.Equal(Stock.Cbc(key, iv, data, encrypt: true), aes.EncryptCbc(data, iv, PaddingMode.None));
        byte[] first = aes.EncryptCbc(data, iv, PaddingMode.None);
        byte[] second = aes.EncryptCbc(data, iv, PaddingMode.None);

        Assert.Equal(Stock.Cbc(key, iv, data, encrypt: true), first);
        Assert.NotEqual(first, second);
    }

    [Theory]
    [MemberData(nameof(Wine8Backends))]
    public void The_wine8_quirk_fails_cbc_on_the_same_iv_and_ecb_passes(string name)
    {
        CipherBackend raw = SimulatedBackends.Create(name, out ISimulatedNativeLayer layer);

        SelfTest.Result result = SelfTest.Run(raw);

        Assert.Null(result.EcbFailure);
        Assert.NotNull(result.CbcFailure);
        Assert.StartsWith("CBC encrypt, AES-128 (SP 800-38A F.1.1/F.2.1): a second message with the same IV", result.CbcFailure, StringComparison.Ordinal);
        Assert.Equal(0, layer.LiveHandles);
        Assert.Empty(layer.Violations);
    }

    [Theory]
    [MemberData(nameof(Wine8Backends))]
    public void Selection_routes_wine8_cbc_over_the_verified_ecb_handle_with_correct_bytes(string name)
    {
        BackendSelection selection = SimulatedBackends.Select(name, out ISimulatedNativeLayer layer);
        var api = (SimulatedCngApi)layer;

        Assert.Equal(CachedAesBackend.Cng, selection.Backend.Kind);
        Assert.IsType<CbcOverEcbBackend>(selection.Backend);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Null(selection.EcbReason);
        Assert.Equal(CachedAesPath.NativeEcbWithManagedChaining, selection.Cbc);
        Assert.Contains("CBC handle failed the self-test", selection.CbcReason, StringComparison.Ordinal);
        Assert.Contains("same IV", selection.CbcReason, StringComparison.Ordinal);

        // From here on CachedAes must never run a CBC key of the quirky layer, and must give stock's bytes.
        int callsBefore = api.CipherCalls.Count;
        var random = new Random(0x3E8);
        foreach (int keySize in new[] { 16, 24, 32 })
        {
            byte[] key = Stock.Bytes(keySize, keySize);
            using var aes = new CachedAes(selection.Backend) { Key = key };
            using Aes stock = Aes.Create();
            stock.Key = key;
            byte[] iv = Stock.Bytes(16, 7);
            foreach (int length in new[] { 16, 16, 48, 1024, 4096, 16, 20, 0, 333 })
            {
                byte[] data = new byte[length];
                random.NextBytes(data);
                byte[] expected = stock.EncryptCbc(data, iv, PaddingMode.PKCS7);
                Assert.Equal(expected, aes.EncryptCbc(data, iv, PaddingMode.PKCS7));
                Assert.Equal(expected, aes.EncryptCbc(data, iv, PaddingMode.PKCS7)); // same IV again on the cached handle
                Assert.Equal(data, aes.DecryptCbc(expected, iv, PaddingMode.PKCS7));
                Assert.Equal(data, aes.DecryptCbc(expected, iv, PaddingMode.PKCS7));
            }
        }

        Assert.All(api.CipherCalls.Skip(callsBefore), call => Assert.Equal(BlockCipherMode.Ecb, call.Mode));
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void Wrong_ecb_output_sends_the_whole_backend_to_stock()
    {
        var broken = new MisbehavingBackend(SimulatedBackends.Create(SimulatedBackends.CngPseudoHandles))
        {
            Corrupt = (mode, encrypting, _, _) => mode == BlockCipherMode.Ecb && !encrypting,
        };

        BackendSelection selection = Select(broken);

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Equal(CachedAesPath.Stock, selection.Ecb);
        Assert.Equal(CachedAesPath.Stock, selection.Cbc);
        Assert.StartsWith("the Cng backend failed the self-test: ECB decrypt, AES-128", selection.EcbReason, StringComparison.Ordinal);
        Assert.Equal(selection.EcbReason, selection.CbcReason);
        Assert.Equal(0, broken.LiveHandles);
    }

    [Fact]
    public void An_ecb_handle_that_goes_wrong_only_when_reused_is_caught()
    {
        var broken = new MisbehavingBackend(StockBackend.Instance)
        {
            Corrupt = (mode, _, _, transform) => mode == BlockCipherMode.Ecb && transform >= 1,
        };

        BackendSelection selection = Select(broken);

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Contains("the same message again on the same handle", selection.EcbReason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_key_wrap_failure_sends_the_whole_backend_to_stock()
    {
        // Only the handles keyed with the RFC 5649 example KEK go wrong, so the ECB examples pass and key wrap does not.
        var broken = new MisbehavingBackend(StockBackend.Instance)
        {
            Corrupt = (_, encrypting, key, transform) => key.AsSpan().SequenceEqual(KnownAnswers.Rfc5649Kek) && encrypting && transform == 2,
        };

        BackendSelection selection = Select(broken);

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Contains("RFC 5649 key wrap (Section 6 examples): wrapping the 20-byte key gave the wrong output", selection.EcbReason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Wrong_cbc_output_in_one_direction_composes_cbc_over_ecb(bool brokenDirection)
    {
        var broken = new MisbehavingBackend(SimulatedBackends.Create(SimulatedBackends.CngProviders))
        {
            Corrupt = (mode, encrypting, _, transform) => mode == BlockCipherMode.Cbc && encrypting == brokenDirection && transform == 3,
        };

        BackendSelection selection = Select(broken);

        var composed = Assert.IsType<CbcOverEcbBackend>(selection.Backend);
        Assert.Same(broken, composed.Inner);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(CachedAesPath.NativeEcbWithManagedChaining, selection.Cbc);
        Assert.Contains($"CBC {(brokenDirection ? "encrypt" : "decrypt")}, AES-128 (SP 800-38A F.1.1/F.2.1): a one-block message back at the first IV", selection.CbcReason, StringComparison.Ordinal);
        Assert.Equal(0, broken.LiveHandles);
    }

    [Fact]
    public void A_rekey_that_keeps_the_old_key_sends_the_whole_backend_to_stock()
    {
        var broken = new MisbehavingBackend(StockBackend.Instance) { StaleRekey = true };

        BackendSelection selection = Select(broken);

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Equal(
            "the StockFallback backend failed the self-test: ECB encrypt, AES-128 (SP 800-38A F.1.1/F.2.1): after a re-key to FIPS 197 C.1's key the block gave the wrong ciphertext.",
            selection.EcbReason);
        Assert.Equal(0, broken.LiveHandles);
    }

    /// <summary>
    /// A real OpenSSL CBC context whose IV is somewhere else after each re-key (planted with <c>EVP_CipherInit_ex</c> and
    /// only an IV), as a provider that neither restores the IV nor takes the one passed would leave it: the first block
    /// after a key change comes out wrong with success statuses. The self-test's re-key step catches it, and CBC runs over
    /// the verified ECB handles.
    /// </summary>
    [OpenSslFact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public void An_openssl_cbc_context_left_at_another_iv_by_a_rekey_fails_cbc_and_cbc_runs_over_ecb()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? openSsl, out string? reason), reason);
        var broken = new MisbehavingBackend(openSsl) { AfterRekey = PlantIv };

        BackendSelection selection = Select(broken);

        Assert.IsType<CbcOverEcbBackend>(selection.Backend);
        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(CachedAesPath.NativeEcbWithManagedChaining, selection.Cbc);
        Assert.Equal(
            "the OpenSsl CBC handle failed the self-test: CBC encrypt, AES-128 (SP 800-38A F.1.1/F.2.1): after a re-key to FIPS 197 C.1's key (the same size) the first block was wrong (the message did not start at its IV).",
            selection.CbcReason);
        Assert.Equal(0, broken.LiveHandles);

        static unsafe void PlantIv(BlockCipher handle)
        {
            if (handle is OpenSslCipher { Mode: BlockCipherMode.Cbc } cipher)
            {
                byte* iv = stackalloc byte[16];
                new Span<byte>(iv, 16).Fill(0x5A);
                Assert.Equal(1, Libcrypto.EVP_CipherInit_ex(cipher.Context, IntPtr.Zero, IntPtr.Zero, null, iv, -1));
            }
        }
    }

    [Fact]
    public void A_cbc_handle_that_cannot_be_created_composes_cbc_over_ecb()
    {
        var broken = new MisbehavingBackend(StockBackend.Instance) { FailCreate = (mode, _) => mode == BlockCipherMode.Cbc };

        BackendSelection selection = Select(broken);

        Assert.IsType<CbcOverEcbBackend>(selection.Backend);
        Assert.Equal(CachedAesPath.NativeEcbWithManagedChaining, selection.Cbc);
        Assert.Contains("CryptographicException: Injected failure creating a Cbc handle.", selection.CbcReason, StringComparison.Ordinal);

        // The composed backend never asks the broken one for a CBC handle.
        using var aes = new CachedAes(selection.Backend) { Key = Stock.Bytes(32, 9) };
        byte[] data = Stock.Bytes(100, 10);
        byte[] iv = Stock.Bytes(16, 11);
        Assert.Equal(Stock.Cbc(aes.Key, iv, Pad(data), encrypt: true), aes.EncryptCbc(data, iv));
    }

    [Fact]
    public void An_ecb_handle_that_cannot_be_created_sends_everything_to_stock()
    {
        var broken = new MisbehavingBackend(StockBackend.Instance) { FailCreate = (mode, encrypting) => mode == BlockCipherMode.Ecb && !encrypting };

        BackendSelection selection = Select(broken);

        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Contains("ECB decrypt, AES-128 (SP 800-38A F.1.1/F.2.1): CryptographicException: Injected failure", selection.EcbReason, StringComparison.Ordinal);
    }

    [Fact]
    public void Forcing_the_stock_path_does_not_even_probe_the_platform()
    {
        bool probed = false;
        BackendSelection selection = SelectionPolicy.Select("a test", () =>
        {
            probed = true;
            return new SelectionPolicy.PlatformProbe(StockBackend.Instance, null);
        });

        Assert.False(probed);
        Assert.Same(StockBackend.Instance, selection.Backend);
        Assert.Null(selection.Native);
        Assert.Null(selection.SelfTestResult);
        Assert.Equal(CachedAesPath.Stock, selection.Ecb);
        Assert.Equal(CachedAesPath.Stock, selection.Cbc);
        Assert.Equal("the stock path was forced by a test", selection.EcbReason);
        Assert.Equal("a test", selection.StockForcedBy);
    }

    [Fact]
    public void No_backend_or_a_throwing_probe_means_stock_with_the_reason()
    {
        BackendSelection missing = SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(null, "libfoo.so.9 not found"));
        BackendSelection throwing = SelectionPolicy.Select(null, () => throw new DllNotFoundException("no such library"));

        Assert.Same(StockBackend.Instance, missing.Backend);
        Assert.Equal("libfoo.so.9 not found", missing.EcbReason);
        Assert.Equal("libfoo.so.9 not found", missing.CbcReason);
        Assert.Same(StockBackend.Instance, throwing.Backend);
        Assert.Equal("probing the native library threw DllNotFoundException: no such library", throwing.EcbReason);
    }

    [Theory]
    [InlineData(null, null, null)]
    [InlineData(false, null, null)]
    [InlineData(null, "0", null)]
    [InlineData(null, "", null)]
    [InlineData(null, "yes", null)]
    [InlineData(null, "false", null)]
    [InlineData(true, null, "the AppContext switch CachedAes.UseStockImplementation")]
    [InlineData(true, "0", "the AppContext switch CachedAes.UseStockImplementation")]
    [InlineData(null, "1", "the environment variable CACHEDAES_USE_STOCK=1")]
    [InlineData(null, " TRUE ", "the environment variable CACHEDAES_USE_STOCK=TRUE")]
    [InlineData(false, "true", "the environment variable CACHEDAES_USE_STOCK=true")]
    public void The_switch_or_the_variable_forces_the_stock_path(bool? switchValue, string? variable, string? expected)
    {
        Assert.Equal(expected, SelectionSwitches.ReadStockForcedBy(switchValue, variable));
    }

    [Fact]
    public void The_embedded_known_answers_agree_with_stock_aes()
    {
        // A guard against a typo in the copied vectors: the self-test itself never computes what it expects.
        foreach (KnownAnswers.Sp80038aExample example in KnownAnswers.Sp80038aExamples)
        {
            Assert.Equal(example.EcbCiphertext, Stock.Ecb(example.Key, KnownAnswers.Sp80038aPlaintext, encrypt: true));
            Assert.Equal(example.CbcCiphertext, Stock.Cbc(example.Key, KnownAnswers.Sp80038aIv, KnownAnswers.Sp80038aPlaintext, encrypt: true));
        }

        using Aes aes = Aes.Create();
        aes.Key = KnownAnswers.Rfc5649Kek;
        foreach ((byte[] key, byte[] wrapped) in KnownAnswers.Rfc5649Examples)
        {
            Assert.Equal(wrapped, aes.EncryptKeyWrapPadded(key));
        }

        foreach (KnownAnswers.Fips197Example example in KnownAnswers.Fips197Examples)
        {
            Assert.Equal(example.Ciphertext, Stock.Ecb(example.Key, KnownAnswers.Fips197Plaintext, encrypt: true));
        }

        Assert.Equal(
            KnownAnswers.Sp80038aExamples.Select(e => e.Key.Length),
            KnownAnswers.Fips197Examples.Select(e => e.Key.Length));
    }

    private static BackendSelection Select(CipherBackend backend) =>
        SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(backend, null));

    private static byte[] Pad(byte[] data)
    {
        int pad = 16 - data.Length % 16;
        byte[] padded = new byte[data.Length + pad];
        data.CopyTo(padded, 0);
        padded.AsSpan(data.Length).Fill((byte)pad);
        return padded;
    }
}
