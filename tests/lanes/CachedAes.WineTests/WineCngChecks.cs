using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Selection;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Tests.Infrastructure;
using Xunit.Abstractions;

namespace CachedCryptography.WineTests;

/// <summary>
/// Checks of the CNG backend over the real <c>bcrypt.dll</c> that the contract suite cannot make: which algorithm handles
/// selection chose, whether the self-test's CBC verdict matches what the platform really does (probed here directly,
/// without the self-test), both kinds of algorithm handle through selection with results compared to stock, and that
/// every key and provider is accounted for.
/// </summary>
public sealed class WineCngChecks(ITestOutputHelper output)
{
    [Fact]
    public void Selection_chose_cng_on_the_expected_algorithm_handles()
    {
        BackendSelection selection = ProcessBackend.Selection;
        CngBackend cng = Assert.IsType<CngBackend>(selection.Native);
        bool expectPseudoHandles = RunSettings.ExpectPseudoHandles ?? OperatingSystem.IsWindowsVersionAtLeast(10);

        Assert.Equal(CachedAesBackend.Cng, CachedAesDiagnostics.Backend);
        Assert.Equal(expectPseudoHandles, cng.UsesPseudoHandles);
        if (expectPseudoHandles)
        {
            Assert.Equal(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, cng.EcbAlgorithm);
            Assert.Equal(BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, cng.CbcAlgorithm);
        }
        else
        {
            Assert.DoesNotContain(cng.EcbAlgorithm, new nint[] { 0, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE });
            Assert.DoesNotContain(cng.CbcAlgorithm, new nint[] { 0, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, cng.EcbAlgorithm });
        }

        Assert.Contains(
            expectPseudoHandles ? "Backend: Cng (bcrypt.dll, algorithm pseudo-handles)" : "Backend: Cng (bcrypt.dll, opened AES providers)",
            CachedAesDiagnostics.Describe(),
            StringComparison.Ordinal);
        Assert.Equal(CachedAesPath.Native, CachedAesDiagnostics.Ecb);
        Assert.Null(CachedAesDiagnostics.EcbFallbackReason);
    }

    [Fact]
    public void The_self_tests_cbc_verdict_matches_what_bcrypt_really_does()
    {
        BackendSelection selection = ProcessBackend.Selection;
        CngBackend cng = Assert.IsType<CngBackend>(selection.Native);
        CbcProbe probe = ProbeCbc(CngApi.Instance, cng.CbcAlgorithm);
        output.WriteLine($"probe: {probe}; verdict: {selection.SelfTestResult?.CbcFailure ?? "passed"}");

        Assert.True(probe.FirstMessageCorrect, "A fresh CBC key must give stock's ciphertext.");
        Assert.NotNull(selection.SelfTestResult);
        Assert.Equal(probe.RestartsAtSameIv, selection.SelfTestResult.Value.CbcFailure is null);
        Assert.Equal(probe.RestartsAtSameIv ? CachedAesPath.Native : CachedAesPath.NativeEcbWithManagedChaining, CachedAesDiagnostics.Cbc);
        if (!probe.RestartsAtSameIv)
        {
            Assert.Contains("a second message with the same IV on the same handle gave a different output", CachedAesDiagnostics.CbcFallbackReason, StringComparison.Ordinal);
        }

        if (RunSettings.WineVersion is null)
        {
            // Windows starts every call at pbIV and writes the chaining value back (CNG's documented behaviour).
            Assert.True(probe.RestartsAtSameIv);
            Assert.True(probe.WritesIvBack);
        }
        else if (RunSettings.WineVersion.StartsWith("8.", StringComparison.Ordinal))
        {
            // Wine 8.0's behaviour as measured (docs/design.md, "Platforms, and what was run"): this lane exists to
            // prove the fallback catches it.
            Assert.False(probe.RestartsAtSameIv);
            Assert.False(probe.WritesIvBack);
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Each_kind_of_algorithm_handle_selects_matches_stock_and_releases_every_handle(bool pseudoHandles)
    {
        var api = new CountingCngApi(CngApi.Instance);
        Assert.True(CngBackend.TryCreate(api, pseudoHandles, out CipherBackend? raw, out _));
        var cng = (CngBackend)raw;
        Assert.Equal(pseudoHandles, cng.UsesPseudoHandles);
        bool restarts = ProbeCbc(api, cng.CbcAlgorithm).RestartsAtSameIv;

        BackendSelection selection = SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(raw, null));
        output.WriteLine(SelectionReport.Describe(selection, "counted"));

        Assert.Equal(CachedAesPath.Native, selection.Ecb);
        Assert.Equal(restarts ? CachedAesPath.Native : CachedAesPath.NativeEcbWithManagedChaining, selection.Cbc);
        Assert.Equal(0, api.LiveKeys);

        int compared = Differential(selection.Backend, seed: pseudoHandles ? 11 : 12);
        Churn(selection.Backend, seed: pseudoHandles ? 21 : 22);

        output.WriteLine($"{compared} comparisons; keys created {api.KeysCreated}, destroyed {api.KeysDestroyed}; providers opened {api.ProvidersOpened}");
        Assert.True(api.KeysCreated > 100);
        Assert.Equal(api.KeysCreated, api.KeysDestroyed);
        Assert.Equal(0, api.FailedDestroys);
        Assert.Equal(0, api.StrayCloses);
        Assert.Equal(pseudoHandles ? 0 : 2, api.ProvidersOpened);
        Assert.Equal(pseudoHandles ? 0 : 2, api.ProvidersOpen); // kept for the process's life, never re-opened per key
    }

    /// <summary>
    /// The finalization stress (tests/CachedAes.Tests/Finalization) over the real bcrypt.dll, on each kind of algorithm
    /// handle as selection routes it: every kind of object dropped without Dispose on four threads while another runs the
    /// collector constantly, every output compared with stock; afterwards every CNG key made has been destroyed (by its
    /// holder or by the finalizer of its SafeHandle), exactly once and successfully.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Objects_dropped_under_constant_collections_match_stock_and_every_key_is_destroyed(bool pseudoHandles)
    {
        var api = new CountingCngApi(CngApi.Instance);
        Assert.True(CngBackend.TryCreate(api, pseudoHandles, out CipherBackend? raw, out _));
        BackendSelection selection = SelectionPolicy.Select(null, () => new SelectionPolicy.PlatformProbe(raw, null));
        var counted = new CountingBackend(selection.Backend);

        Tests.Finalization.FinalizationStress.Outcome outcome =
            Tests.Finalization.FinalizationStress.Run(counted, threads: 4, iterationsPerThread: 300, includeCfb: BackendData.StockCfbWorks);

        output.WriteLine($"{outcome.Steps} steps, {outcome.Collections} full collections; handles made {counted.Creations}, given back for dropped key epochs {counted.DroppedReleases}; keys created {api.KeysCreated}, destroyed {api.KeysDestroyed}");
        Assert.True(outcome.Failures.Count == 0, string.Join(Environment.NewLine, outcome.Failures));
        Assert.True(counted.DroppedReleases > 0);
        Assert.Equal(0, counted.DoubleReleases);
        Assert.Equal(0, counted.LiveHandles);
        Assert.Equal(api.KeysCreated, api.KeysDestroyed);
        Assert.Equal(0, api.FailedDestroys);
    }

    /// <summary>What one CBC key of the real library does with two messages at the same IV.</summary>
    internal readonly record struct CbcProbe(bool FirstMessageCorrect, bool RestartsAtSameIv, bool WritesIvBack);

    /// <summary>
    /// Straight <c>BCryptGenerateSymmetricKey</c>/<c>BCryptEncrypt</c> calls, no self-test and no CachedAes handle: one key,
    /// the same four-block message twice at the same IV (a fresh copy of it each time), compared with stock AES.
    /// </summary>
    internal static CbcProbe ProbeCbc(ICngApi api, nint cbcAlgorithm)
    {
        var random = new Random(0x1A1);
        byte[] key = new byte[16];
        byte[] iv = new byte[16];
        byte[] data = new byte[64];
        random.NextBytes(key);
        random.NextBytes(iv);
        random.NextBytes(data);
        byte[] expected;
        using (Aes stock = Aes.Create())
        {
            stock.Key = key;
            expected = stock.EncryptCbc(data, iv, PaddingMode.None);
        }

        using var handle = new CngCipher(api, cbcAlgorithm, 0, BlockCipherMode.Cbc, encrypting: true);
        Assert.Equal(0, api.GenerateSymmetricKey(cbcAlgorithm, key, handle));
        byte[] first = new byte[64];
        byte[] second = new byte[64];
        byte[] ivCopy = (byte[])iv.Clone();
        Assert.Equal(0, api.Encrypt(handle.Handle, data, ivCopy, first, out int written));
        Assert.Equal(64, written);
        bool writesBack = ivCopy.AsSpan().SequenceEqual(first.AsSpan(48));
        ivCopy = (byte[])iv.Clone();
        Assert.Equal(0, api.Encrypt(handle.Handle, data, ivCopy, second, out written));
        Assert.Equal(64, written);
        return new CbcProbe(first.AsSpan().SequenceEqual(expected), first.AsSpan().SequenceEqual(expected) && second.AsSpan().SequenceEqual(expected), writesBack);
    }

    private static readonly PaddingMode[] s_paddings = [PaddingMode.None, PaddingMode.PKCS7, PaddingMode.Zeros, PaddingMode.ANSIX923, PaddingMode.ISO10126];

    /// <summary>
    /// Random one-shots (seeded) of every shape against stock, on one instance per key size with key changes along the
    /// way: ECB and CBC, both directions, five paddings, lengths 0-99 and some to 5000, separate, in place and partially
    /// overlapping buffers, invalid input; plus RFC 5649 wrap and unwrap. Returns the number of comparisons.
    /// </summary>
    private static int Differential(CipherBackend backend, int seed)
    {
        var random = new Random(seed);
        int comparisons = 0;
        foreach (int keySize in new[] { 16, 24, 32 })
        {
            using var cached = new CachedAes(backend);
            using Aes stock = Aes.Create();
            for (int i = 0; i < 300; i++)
            {
                if (i % 100 == 0)
                {
                    byte[] key = new byte[keySize];
                    random.NextBytes(key);
                    cached.Key = key;
                    stock.Key = key;
                }

                bool cbc = random.Next(2) == 0;
                bool encrypt = random.Next(2) == 0;
                PaddingMode padding = s_paddings[random.Next(s_paddings.Length)];
                int length = random.Next(8) == 0 ? random.Next(0, 5001) : random.Next(0, 100);
                byte[] iv = new byte[16];
                random.NextBytes(iv);
                byte[] input = new byte[length];
                random.NextBytes(input);
                if (!encrypt && random.Next(4) != 0)
                {
                    // Mostly real ciphertext (valid padding); otherwise random bytes, which exercise the failure paths.
                    input = cbc ? stock.EncryptCbc(input, iv, padding == PaddingMode.None ? PaddingMode.Zeros : padding)
                                : stock.EncryptEcb(input, padding == PaddingMode.None ? PaddingMode.Zeros : padding);
                }

                int inOffset = 32;
                int outOffset = random.Next(4) switch
                {
                    0 => -1,                                        // a separate destination
                    1 => inOffset,                                  // in place
                    2 => inOffset + (random.Next(2) == 0 ? 16 : 5), // overlapping, ahead
                    _ => inOffset - (random.Next(2) == 0 ? 16 : 5), // overlapping, behind
                };

                Outcome expected = Run(stock, cbc, encrypt, padding, iv, input, inOffset, outOffset);
                Outcome actual = Run(cached, cbc, encrypt, padding, iv, input, inOffset, outOffset);
                string what = $"key {keySize * 8}, case {i}: {(cbc ? "CBC" : "ECB")} {(encrypt ? "encrypt" : "decrypt")} {padding} length {length} out@{outOffset}";
                Assert.True(expected.Error == actual.Error, $"{what}: stock {expected.Error ?? "succeeded"}, CachedAes {actual.Error ?? "succeeded"}");
                Assert.True(expected.Written == actual.Written, $"{what}: stock wrote {expected.Written}, CachedAes {actual.Written}");
                if (encrypt && padding == PaddingMode.ISO10126 && actual.Error is null)
                {
                    // Random pad bytes: compare by decrypting CachedAes's output with stock.
                    byte[] produced = actual.Output.AsSpan(0, actual.Written).ToArray();
                    byte[] back = cbc ? stock.DecryptCbc(produced, iv, padding) : stock.DecryptEcb(produced, padding);
                    Assert.True(back.AsSpan().SequenceEqual(input), $"{what}: ISO 10126 output does not decrypt to the input");
                }
                else if (actual.Error is null)
                {
                    Assert.True(expected.Output.AsSpan().SequenceEqual(actual.Output), $"{what}: different bytes");
                }

                comparisons++;
            }

            for (int i = 0; i < 40; i++)
            {
                byte[] keyData = new byte[random.Next(1, 70)];
                random.NextBytes(keyData);
                byte[] wrapped = cached.EncryptKeyWrapPadded(keyData);
                Assert.Equal(stock.EncryptKeyWrapPadded(keyData), wrapped);
                Assert.Equal(keyData, cached.DecryptKeyWrapPadded(wrapped));
                wrapped[random.Next(wrapped.Length)] ^= 1;
                Assert.Throws<CryptographicException>(() => cached.DecryptKeyWrapPadded(wrapped));
                comparisons++;
            }
        }

        return comparisons;
    }

    /// <summary>The outcome of one call: the exception type (or null), bytes written, and the destination's bytes after it.</summary>
    private sealed record Outcome(string? Error, int Written, byte[] Output);

    private static Outcome Run(Aes aes, bool cbc, bool encrypt, PaddingMode padding, byte[] iv, byte[] input, int inOffset, int outOffset)
    {
        // The input sits at inOffset in a buffer with room on both sides; the output goes to outOffset in the same buffer,
        // or to a separate array when outOffset is -1. Each side gets its own fresh buffer.
        byte[] buffer = new byte[input.Length + 96];
        input.CopyTo(buffer, inOffset);
        byte[] separate = new byte[input.Length + 32];
        Span<byte> destination = outOffset < 0 ? separate : buffer.AsSpan(outOffset);
        ReadOnlySpan<byte> source = buffer.AsSpan(inOffset, input.Length);
        try
        {
            int written;
            bool done = (cbc, encrypt) switch
            {
                (true, true) => aes.TryEncryptCbc(source, iv, destination, out written, padding),
                (true, false) => aes.TryDecryptCbc(source, iv, destination, out written, padding),
                (false, true) => aes.TryEncryptEcb(source, destination, padding, out written),
                (false, false) => aes.TryDecryptEcb(source, destination, padding, out written),
            };

            return new Outcome(done ? null : "destination too short", written, destination[..written].ToArray());
        }
        catch (CryptographicException e)
        {
            return new Outcome(e.GetType().Name, 0, []);
        }
    }

    /// <summary>Many short-lived instances and key changes over one backend: every key they create must be destroyed.</summary>
    private static void Churn(CipherBackend backend, int seed)
    {
        var random = new Random(seed);
        byte[] iv = new byte[16];
        byte[] data = new byte[80];
        for (int instance = 0; instance < 30; instance++)
        {
            using var aes = new CachedAes(backend);
            for (int keyChange = 0; keyChange < 3; keyChange++)
            {
                byte[] key = new byte[16 + 8 * random.Next(3)];
                random.NextBytes(key);
                random.NextBytes(data);
                aes.Key = key;
                byte[] ecb = aes.EncryptEcb(data, PaddingMode.PKCS7);
                byte[] cbc = aes.EncryptCbc(data, iv, PaddingMode.PKCS7);
                Assert.Equal(data, aes.DecryptEcb(ecb, PaddingMode.PKCS7));
                Assert.Equal(data, aes.DecryptCbc(cbc, iv, PaddingMode.PKCS7));
                Assert.Equal(data, aes.DecryptKeyWrapPadded(aes.EncryptKeyWrapPadded(data)));
            }
        }
    }
}
