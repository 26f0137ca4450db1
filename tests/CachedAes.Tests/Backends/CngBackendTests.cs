using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.Cng;

namespace CachedCryptography.Tests.Backends;

public sealed class CngBackendTests
{
    [Fact]
    public void Uses_the_pseudo_handles_when_they_work_and_opens_nothing()
    {
        var api = new SimulatedCngApi();

        Assert.True(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out _));

        var cng = Assert.IsType<CngBackend>(backend);
        Assert.True(cng.UsesPseudoHandles);
        Assert.Equal((nint)0x1B1, cng.EcbAlgorithm);
        Assert.Equal((nint)0x1A1, cng.CbcAlgorithm);
        Assert.Equal(CachedAesBackend.Cng, cng.Kind);
        Assert.Equal(0, api.OpenedProviders);
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Theory]
    [InlineData(false, true)]
    [InlineData(true, false)]
    public void Falls_back_to_aes_providers_with_the_chaining_mode_set_as_nul_terminated_utf16(bool pseudoHandlesSupported, bool tryPseudoHandles)
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = pseudoHandlesSupported };

        Assert.True(CngBackend.TryCreate(api, tryPseudoHandles, out CipherBackend? backend, out _));

        var cng = Assert.IsType<CngBackend>(backend);
        Assert.False(cng.UsesPseudoHandles);
        Assert.Equal(2, api.LiveProviders);
        Assert.Equal([("ChainingModeECB", 32), ("ChainingModeCBC", 32)], api.ChainingModesSet);
        Assert.DoesNotContain(cng.EcbAlgorithm, new nint[] { 0, 0x1A1, 0x1B1 });
        Assert.DoesNotContain(cng.CbcAlgorithm, new nint[] { 0, 0x1A1, 0x1B1, cng.EcbAlgorithm });
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Keys_from_either_kind_of_algorithm_handle_run_the_right_mode(bool pseudoHandlesSupported)
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = pseudoHandlesSupported };
        Assert.True(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out _));
        byte[] key = Stock.Bytes(32, 40);
        byte[] iv = Stock.Bytes(16, 41);
        byte[] data = Stock.Bytes(64, 42);

        byte[] ecb = new byte[64];
        byte[] cbc = new byte[64];
        BlockCipher e = backend.Create(BlockCipherMode.Ecb, encrypting: true, key);
        BlockCipher c = backend.Create(BlockCipherMode.Cbc, encrypting: true, key);
        Assert.True(e.TryTransform(default, data, ecb));
        Assert.True(c.TryTransform(iv, data, cbc));
        e.Release();
        c.Release();

        Assert.Equal(Stock.Ecb(key, data, true), ecb);
        Assert.Equal(Stock.Cbc(key, iv, data, true), cbc);
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void A_failed_chaining_mode_closes_the_provider_and_reports_no_backend()
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = false };
        api.Inject("BCryptSetProperty", SimulatedCngApi.STATUS_NOT_SUPPORTED);

        Assert.False(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out string? reason));

        Assert.Null(backend);
        Assert.Equal(
            "bcrypt.dll: a key on the ECB pseudo-handle could not be made (BCryptGenerateSymmetricKey failed with NTSTATUS 0xC0000008.); and BCryptSetProperty(ChainingMode, ChainingModeECB) failed with NTSTATUS 0xC00000BB.",
            reason);
        Assert.Equal(1, api.OpenedProviders);
        Assert.Equal(0, api.LiveProviders);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void A_failure_on_the_second_provider_closes_the_first()
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = false };
        api.Inject("BCryptSetProperty", SimulatedCngApi.STATUS_INVALID_PARAMETER, skip: 1);

        Assert.False(CngBackend.TryCreate(api, tryPseudoHandles: true, out _, out _));

        Assert.Equal(2, api.OpenedProviders);
        Assert.Equal(0, api.LiveProviders);
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void A_provider_whose_probe_key_fails_is_closed()
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = false };
        api.Inject("BCryptGenerateSymmetricKey", SimulatedCngApi.STATUS_NO_MEMORY);

        Assert.False(CngBackend.TryCreate(api, tryPseudoHandles: false, out _, out string? reason));

        Assert.Equal("bcrypt.dll: a key on the ChainingModeECB provider could not be made (BCryptGenerateSymmetricKey failed with NTSTATUS 0xC0000017.)", reason);
        Assert.Equal(1, api.OpenedProviders);

        Assert.Equal(0, api.LiveProviders);
        Assert.Equal(0, api.LiveKeys);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void No_backend_when_no_provider_can_be_opened()
    {
        var api = new SimulatedCngApi { PseudoHandlesSupported = false };
        api.Inject("BCryptOpenAlgorithmProvider", SimulatedCngApi.STATUS_NOT_FOUND);

        Assert.False(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out string? reason));

        Assert.Null(backend);
        Assert.EndsWith("; and BCryptOpenAlgorithmProvider(AES) failed with NTSTATUS 0xC0000225.", reason, StringComparison.Ordinal);
        Assert.Equal(0, api.LiveProviders);
        Assert.Empty(api.Violations);
    }

    [Fact]
    public void Create_with_a_bad_key_size_throws_cryptographic_exception()
    {
        var api = new SimulatedCngApi();
        Assert.True(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out _));

        Assert.Throws<CryptographicException>(() => backend.Create(BlockCipherMode.Cbc, true, new byte[20]));
        Assert.Equal(0, api.LiveKeys);
    }
}
