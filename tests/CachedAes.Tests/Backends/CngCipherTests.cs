using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Backends.Cng;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// <see cref="CngCipher"/> over <see cref="SimulatedCngApi"/>: the shared contract (see
/// <see cref="SimulatedPlatformCipherContract"/>), then what only CNG has: algorithm handles, and a simulated layer
/// that must itself follow CNG's documented behaviour.
/// </summary>
public sealed class CngCipherTests : SimulatedPlatformCipherContract
{
    private const nint EcbAlg = BCrypt.BCRYPT_AES_ECB_ALG_HANDLE;
    private const nint CbcAlg = BCrypt.BCRYPT_AES_CBC_ALG_HANDLE;

    private readonly SimulatedCngApi _api = new();
    private readonly CipherBackend _backend;

    public CngCipherTests()
    {
        // On the pseudo-handles, with key objects of their own; the counts start after the backend's probe keys.
        Assert.True(CngBackend.TryCreate(_api, tryPseudoHandles: true, out CipherBackend? backend, out string? reason), reason);
        _backend = backend;
        _api.ForgetCalls();
    }

    /// <summary>See <see cref="SimulatedPlatformCipherContract.A_transform_failure_reports_the_native_status_and_faults_the_handle"/>.</summary>
    public static TheoryData<bool, string, int, string> TransformFailures => new()
    {
        { true, "BCryptEncrypt", SimulatedCngApi.STATUS_INVALID_PARAMETER, "0xC000000D" },
        { false, "BCryptDecrypt", SimulatedCngApi.STATUS_INVALID_PARAMETER, "0xC000000D" },
    };

    private protected override SimulatedNativeLayer Layer => _api;

    private protected override string CreateFunction => "BCryptGenerateSymmetricKey";

    private protected override string ReleaseFunction => "BCryptDestroyKey";

    private protected override (int Status, string Text) NoMemory => (SimulatedCngApi.STATUS_NO_MEMORY, "0xC0000017");

    // CNG documents nothing about phKey on failure: the simulation hands a key back, to check that the wrapper frees it.
    private protected override bool FailedCreateHandsBackTheHandle => true;

    private protected override BlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key) => _backend.Create(mode, encrypting, key);

    private protected override string FailureText(string function, string statusText) => $"{function} failed with NTSTATUS {statusText}";

    // CNG starts each call at the IV it is given: one call per message, CBC with the 16-byte private copy, ECB with NULL.
    private protected override void AssertEachMessageStartedAfresh(BlockCipherMode mode, int messages)
    {
        Assert.Equal(messages, _api.CipherCalls.Count);
        Assert.All(_api.CipherCalls, c => Assert.Equal((mode, mode == BlockCipherMode.Cbc ? 16 : 0), c));
    }

    [Fact]
    public void A_dropped_epochs_cng_keys_are_freed_by_its_key_memorys_finalizer_and_a_key_has_no_finalizer_of_its_own()
    {
        // No finalizable object per CNG key (the runtime serializes their registration across threads): the key's owner is
        // a plain object, and nothing in its type hierarchy has a finalizer.
        Assert.False(typeof(System.Runtime.ConstrainedExecution.CriticalFinalizerObject).IsAssignableFrom(typeof(CngCipher)));
        for (Type? type = typeof(CngCipher); type is not null && type != typeof(object); type = type.BaseType)
        {
            Assert.Null(type.GetMethod("Finalize", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.DeclaredOnly));
        }

        // Instances dropped with cached keys: their keys are destroyed (by the sweep of dropped keys) once collected.
        var counted = new Infrastructure.CountingBackend(_backend);
        DropInstances(counted, 20);
        Infrastructure.TestUtil.CollectUntil(() => counted.LiveHandles == 0);
        Assert.Equal(0, counted.LiveHandles);

        // Each dropped instance had one key cached (two calls on one mode and direction), freed by the finalizer.
        Assert.Equal(20, counted.DroppedReleases);
        Assert.Empty(_api.Violations);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void DropInstances(CipherBackend backend, int count)
    {
        for (int i = 0; i < count; i++)
        {
            var aes = new CachedAes(backend) { Key = new byte[16] };
            _ = aes.EncryptEcb(new byte[16], PaddingMode.None);
            _ = aes.EncryptEcb(new byte[16], PaddingMode.None);
        }
    }

    [Fact]
    public void A_key_on_an_invalid_algorithm_handle_fails_with_status_invalid_handle()
    {
        var e = Assert.Throws<CryptographicException>(
            () => CngCipher.Create(_api, 0x1234, SimulatedCngApi.AesObjectLength, BlockCipherMode.Ecb, true, Stock.Bytes(16, 26)));
        Assert.Contains("0xC0000008", e.Message, StringComparison.Ordinal);
        AssertClean();
    }

    [Theory]
    [InlineData(false, true)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    [InlineData(true, false)]
    public void A_new_handles_key_is_made_in_an_object_cng_allocates(bool cbc, bool encrypting)
    {
        // Most handles are keyed once (a new instance per message): no buffer of the library's own for them, as stock
        // passes none. The backend knows the object length, so a buffer could have been made.
        Assert.Equal(SimulatedCngApi.AesObjectLength, ((CngBackend)_backend).CbcKeyObjectLength);
        BlockCipherMode mode = cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        byte[] key = Stock.Bytes(16, 53);
        BlockCipher handle = Make(mode, encrypting, key);
        byte[] iv = cbc ? Stock.Bytes(16, 54) : [];
        byte[] plaintext = Stock.Bytes(32, 55);
        byte[] output = new byte[plaintext.Length];
        Assert.True(handle.TryTransform(iv, plaintext, output));
        Assert.Equal(cbc ? Stock.Cbc(key, iv, plaintext, encrypting) : Stock.Ecb(key, plaintext, encrypting), output);
        handle.Release();

        Assert.Equal([0], _api.KeyObjectLengths);
        Assert.Equal([(nint)0], _api.KeyObjectAddresses);
        AssertClean();
    }

    [Fact]
    public void A_new_instance_per_message_makes_every_key_in_an_object_cng_allocates()
    {
        byte[] plaintext = Stock.Bytes(16, 64);
        for (int i = 0; i < 4; i++)
        {
            byte[] key = Stock.Bytes(32, 56 + i);
            byte[] iv = Stock.Bytes(16, 60 + i);
            using Aes stock = Aes.Create();
            stock.Key = key;
            using var aes = new CachedAes(_backend);
            aes.Key = key;
            Assert.Equal(stock.EncryptCbc(plaintext, iv), aes.EncryptCbc(plaintext, iv));
        }

        Assert.Equal(4, _api.KeyObjectLengths.Count);
        Assert.All(_api.KeyObjectLengths, length => Assert.Equal(0, length));
        AssertClean();
    }

    [Theory]
    [InlineData(false, true)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    [InlineData(true, false)]
    public void A_rekey_makes_the_new_key_in_a_buffer_of_the_handles_own_and_reuses_it(bool cbc, bool encrypting)
    {
        BlockCipherMode mode = cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        byte[] first = Stock.Bytes(32, 40);
        byte[] plaintext = Stock.Bytes(48, 41);
        BlockCipher handle = Make(mode, encrypting, first);
        foreach (byte[] key in new[] { Stock.Bytes(32, 42), Stock.Bytes(16, 43), Stock.Bytes(24, 44) })
        {
            Assert.True(handle.TryRekey(key));
            byte[] iv = mode == BlockCipherMode.Cbc ? Stock.Bytes(16, 45) : [];
            byte[] output = new byte[plaintext.Length];
            Assert.True(handle.TryTransform(iv, plaintext, output));
            byte[] expected = mode == BlockCipherMode.Ecb
                ? Stock.Ecb(key, plaintext, encrypting)
                : Stock.Cbc(key, iv, plaintext, encrypting);
            Assert.Equal(expected, output);
        }

        // Four keys made: the first in an object CNG allocated, each later one in the buffer the first key change made, one
        // live at a time (the layer records a violation if a key is made in a buffer a live key still uses); the old ones
        // destroyed.
        Assert.Equal([0, SimulatedCngApi.AesObjectLength, SimulatedCngApi.AesObjectLength, SimulatedCngApi.AesObjectLength], _api.KeyObjectLengths);
        Assert.Equal(0, _api.KeyObjectAddresses[0]);
        Assert.NotEqual(0, _api.KeyObjectAddresses[1]);
        Assert.All(_api.KeyObjectAddresses.GetRange(1, 3), address => Assert.Equal(_api.KeyObjectAddresses[1], address));
        Assert.Equal(1, _api.LiveKeys);
        handle.Release();
        AssertClean();
    }

    [Fact]
    public void A_failed_rekey_faults_the_handle_and_its_release_frees_the_key_object()
    {
        BlockCipher handle = Make(BlockCipherMode.Ecb, true, Stock.Bytes(16, 46));
        _api.Inject("BCryptGenerateSymmetricKey", SimulatedCngApi.STATUS_NO_MEMORY);
        Assert.False(handle.TryRekey(Stock.Bytes(16, 47)));
        Assert.True(handle.IsFaulted);
        Assert.Contains("0xC0000017", handle.CreateFailure().Message, StringComparison.Ordinal);
        Assert.Equal(0, _api.LiveKeys);
        handle.Release();
        AssertClean();
    }

    /// <summary>
    /// CNG may keep using a key object until the key made in it is destroyed, so when <c>BCryptDestroyKey</c> fails the
    /// buffer must be left alone: not freed, zeroed or reused (the layer audits every live key's buffer). The key stays
    /// with CNG, counted live. A key that was never re-keyed lives in an object CNG allocated: nothing of the handle's own
    /// is left behind.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void A_failed_destroy_on_release_leaves_the_key_object_to_cng(bool cbc, bool rekeyed)
    {
        BlockCipher handle = Make(cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb, true, Stock.Bytes(32, 50));
        if (rekeyed)
        {
            Assert.True(handle.TryRekey(Stock.Bytes(32, 57)));
            Assert.NotEqual(0, _api.KeyObjectAddresses[^1]);
        }

        _api.ForgetCalls();
        _api.Inject("BCryptDestroyKey", SimulatedCngApi.STATUS_INVALID_HANDLE);

        handle.Release();

        Assert.Empty(_api.Violations);
        Assert.Equal(1, _api.LiveKeys);
        Assert.Single(_api.Calls, c => c == "BCryptDestroyKey");
    }

    [Fact]
    public void A_failed_destroy_during_a_rekey_makes_no_key_in_the_buffer_and_never_frees_it()
    {
        BlockCipher handle = Make(BlockCipherMode.Ecb, true, Stock.Bytes(16, 51));
        Assert.True(handle.TryRekey(Stock.Bytes(16, 58)));
        _api.ForgetCalls();
        _api.Inject("BCryptDestroyKey", SimulatedCngApi.STATUS_INVALID_HANDLE);

        Assert.False(handle.TryRekey(Stock.Bytes(16, 52)));
        Assert.True(handle.IsFaulted);
        string failure = handle.CreateFailure().Message;
        handle.Release();

        Assert.Empty(_api.Violations);
        Assert.Contains("BCryptDestroyKey failed with NTSTATUS 0xC0000008", failure, StringComparison.Ordinal);
        Assert.Empty(_api.KeyObjectLengths);
        Assert.Equal(1, _api.LiveKeys);
        Assert.Single(_api.Calls, c => c == "BCryptDestroyKey");
    }

    [Fact]
    public void A_failed_destroy_of_a_first_key_during_a_rekey_makes_no_buffer()
    {
        var key = Unkeyed(SimulatedCngApi.AesObjectLength);
        Assert.Equal(0, _api.GenerateSymmetricKey(EcbAlg, Stock.Bytes(16, 59), key));
        _api.Inject("BCryptDestroyKey", SimulatedCngApi.STATUS_INVALID_HANDLE);

        Assert.Equal(SimulatedCngApi.STATUS_INVALID_HANDLE, key.Rekey(Stock.Bytes(16, 60), out string failedCall));

        Assert.Equal("BCryptDestroyKey", failedCall);
        Assert.Equal(0, key.KeyObject);
        Assert.False(key.KeyObjectAbandoned);
        key.Dispose();
        Assert.Empty(_api.Violations);
        Assert.Equal(1, _api.LiveKeys);
    }

    // The audit itself must catch a live key's buffer overwritten (a freed one shows as its owner's pointer gone: the
    // failed-destroy tests above fail that way on a handle that frees the buffer).
    [Fact]
    public void Simulated_cng_reports_a_live_keys_key_object_that_was_overwritten()
    {
        using var overwritten = Unkeyed(SimulatedCngApi.AesObjectLength);
        Assert.Equal(0, _api.GenerateSymmetricKey(EcbAlg, new byte[16], overwritten));
        Assert.Equal(0, overwritten.Rekey(new byte[16], out _));
        unsafe
        {
            new Span<byte>((void*)overwritten.KeyObject, SimulatedCngApi.AesObjectLength).Clear();
        }

        Assert.Single(_api.Violations, v => v.EndsWith("was overwritten", StringComparison.Ordinal));
    }

    [Fact]
    public void Without_an_object_length_keys_are_made_in_objects_cng_allocates()
    {
        var api = new SimulatedCngApi { ObjectLengthSupported = false };
        Assert.True(CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out _));
        var cng = (CngBackend)backend;
        Assert.Equal(0, cng.EcbKeyObjectLength);
        BlockCipher handle = cng.Create(BlockCipherMode.Cbc, encrypting: true, Stock.Bytes(16, 48));
        Assert.True(handle.TryRekey(Stock.Bytes(32, 49)));
        handle.Release();
        Assert.All(api.KeyObjectLengths, length => Assert.Equal(0, length));
        Assert.Empty(api.Violations);
        Assert.Equal(0, api.LiveKeys);
    }

    [Fact]
    public void A_key_object_smaller_than_the_object_length_is_refused()
    {
        using var handle = Unkeyed(SimulatedCngApi.AesObjectLength - 1);
        Assert.Equal(0, _api.GenerateSymmetricKey(EcbAlg, new byte[16], handle));
        Assert.Equal(SimulatedCngApi.STATUS_BUFFER_TOO_SMALL, handle.Rekey(new byte[16], out string failedCall));
        Assert.Equal("BCryptGenerateSymmetricKey", failedCall);
    }

    // The simulated layer itself must follow CNG's documented behaviour, or the contract tests prove little.
    [Fact]
    public void Simulated_cng_overwrites_the_iv_buffer_with_the_last_ciphertext_block()
    {
        byte[] key = Stock.Bytes(16, 34);
        byte[] iv = Stock.Bytes(16, 35);
        byte[] originalIv = (byte[])iv.Clone();
        byte[] data = Stock.Bytes(48, 36);
        byte[] output = new byte[48];
        using var handle = Unkeyed(algorithm: CbcAlg);
        Assert.Equal(0, _api.GenerateSymmetricKey(CbcAlg, key, handle));

        Assert.Equal(0, _api.Encrypt(handle.Handle, data, iv, output, out int written));

        Assert.Equal(48, written);
        Assert.Equal(Stock.Cbc(key, originalIv, data, true), output);
        Assert.Equal(output[32..], iv);
    }

    [Fact]
    public void Simulated_cng_returns_the_documented_statuses_for_wrong_sizes()
    {
        using var handle = Unkeyed(algorithm: CbcAlg);
        Assert.Equal(0, _api.GenerateSymmetricKey(CbcAlg, new byte[16], handle));

        Assert.Equal(SimulatedCngApi.STATUS_INVALID_BUFFER_SIZE, _api.Encrypt(handle.Handle, new byte[15], new byte[16], new byte[16], out _));
        Assert.Equal(SimulatedCngApi.STATUS_BUFFER_TOO_SMALL, _api.Encrypt(handle.Handle, new byte[32], new byte[16], new byte[16], out _));
        Assert.Equal(SimulatedCngApi.STATUS_INVALID_PARAMETER, _api.Encrypt(handle.Handle, new byte[16], new byte[8], new byte[16], out _));
        Assert.Equal(SimulatedCngApi.STATUS_INVALID_PARAMETER, _api.GenerateSymmetricKey(CbcAlg, new byte[20], Unkeyed(algorithm: CbcAlg)));
    }

    [Fact]
    public void Simulated_cng_detects_double_free_and_use_after_destroy()
    {
        var handle = Unkeyed();
        Assert.Equal(0, _api.GenerateSymmetricKey(EcbAlg, new byte[16], handle));
        nint raw = handle.Handle;
        handle.Dispose();

        Assert.Equal(SimulatedCngApi.STATUS_INVALID_HANDLE, _api.DestroyKey(raw));
        Assert.Single(_api.Violations);
    }

    // A handle with no key yet (its first key made by the test through the simulated layer), re-keyed on `algorithm`.
    private CngCipher Unkeyed(int rekeyObjectLength = 0, nint algorithm = EcbAlg) =>
        new(_api, algorithm, rekeyObjectLength, algorithm == EcbAlg ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, encrypting: true);
}
