using System;
using System.Security.Cryptography;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// The contract of a platform <see cref="BlockCipher"/> over its simulated native layer, written once and run for each
/// platform by a subclass (<see cref="CngCipherTests"/>, <see cref="CommonCryptoCipherTests"/>): it matches
/// stock for ECB and CBC in both directions and every key size, starts every CBC message at its own IV, never modifies
/// the caller's IV, hands the native layer the key it was given (no second copy), frees its native handle exactly once
/// (also when a create call fails after making it), reports a native failure with the library's own status and faults
/// the handle, and notices a short output count. A subclass makes handles through its backend over its layer (so the key
/// size check of <see cref="CipherBackend.Create"/> applies), says how its platform words a failure and how its calls
/// show a message's start; it keeps the tests only its platform has.
/// </summary>
public abstract class SimulatedPlatformCipherContract
{
    /// <summary>Every AES key size in bytes, with each direction (true: encrypt).</summary>
    public static TheoryData<int, bool> KeySizesAndDirections => new()
    {
        { 16, true },
        { 24, true },
        { 32, true },
        { 16, false },
        { 24, false },
        { 32, false },
    };

    /// <summary>The simulated layer under every handle <see cref="Make"/> creates.</summary>
    private protected abstract SimulatedNativeLayer Layer { get; }

    /// <summary>The native call that creates a handle.</summary>
    private protected abstract string CreateFunction { get; }

    /// <summary>The native call that frees a handle.</summary>
    private protected abstract string ReleaseFunction { get; }

    /// <summary>The platform's status for an allocation failure, and that status as its failure messages show it.</summary>
    private protected abstract (int Status, string Text) NoMemory { get; }

    /// <summary>
    /// Whether the simulated create call, failing after it allocated the native object
    /// (<see cref="SimulatedNativeLayer.FailAfterCreate"/>), hands that object back to the caller to free, or frees it
    /// itself and hands back none, as the real library does.
    /// </summary>
    private protected abstract bool FailedCreateHandsBackTheHandle { get; }

    /// <summary>A handle for <paramref name="mode"/> and direction, keyed with <paramref name="key"/>, over <see cref="Layer"/>.</summary>
    private protected abstract BlockCipher Make(BlockCipherMode mode, bool encrypting, byte[] key);

    /// <summary>The platform's message for a failed call of <paramref name="function"/> with a status shown as <paramref name="statusText"/>.</summary>
    private protected abstract string FailureText(string function, string statusText);

    /// <summary>
    /// Asserts, the platform's way, that the layer saw <paramref name="messages"/> messages and that each started afresh:
    /// CBC at its own IV, ECB without one.
    /// </summary>
    private protected abstract void AssertEachMessageStartedAfresh(BlockCipherMode mode, int messages);

    [Theory]
    [MemberData(nameof(KeySizesAndDirections))]
    public void Ecb_matches_stock(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 1);
        byte[] data = Stock.Bytes(80, 2);
        BlockCipher cipher = Make(BlockCipherMode.Ecb, encrypting, key);
        byte[] whole = Run(cipher, null, data);
        byte[] split = [.. Run(cipher, null, data[..16]), .. Run(cipher, null, data[16..])];
        cipher.Release();

        byte[] expected = Stock.Ecb(key, data, encrypting);
        Assert.Equal(expected, whole);
        Assert.Equal(expected, split);
        AssertClean();
    }

    [Theory]
    [MemberData(nameof(KeySizesAndDirections))]
    public void Cbc_messages_match_stock_and_a_message_continues_from_its_previous_ciphertext_block(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 3);
        byte[] iv = Stock.Bytes(16, 4);
        byte[] data = Stock.Bytes(112, 5);
        byte[] expected = Stock.Cbc(key, iv, data, encrypting);
        BlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        Assert.Equal(expected, Run(cipher, iv, data));

        // Split at block 3: the second part's IV is the ciphertext block before it.
        byte[] ciphertext = encrypting ? expected : data;
        byte[] head = Run(cipher, iv, data[..48]);
        byte[] tail = Run(cipher, ciphertext[32..48], data[48..]);
        byte[] joined = [.. head, .. tail];
        Assert.Equal(expected, joined);
        AssertEachMessageStartedAfresh(BlockCipherMode.Cbc, messages: 3);
        cipher.Release();
        AssertClean();
    }

    // The chaining value a message ends with must not leak into the next one, although CNG writes it back into the IV
    // buffer it is given (the handle's private copy) and CommonCrypto keeps it in the cryptor.
    [Theory]
    [MemberData(nameof(KeySizesAndDirections))]
    public void Every_cbc_message_restarts_at_its_own_iv(int keySize, bool encrypting)
    {
        byte[] key = Stock.Bytes(keySize, 6);
        byte[] iv1 = Stock.Bytes(16, 7);
        byte[] iv2 = Stock.Bytes(16, 8);
        byte[] data = Stock.Bytes(112, 9);
        BlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        foreach (byte[] iv in new[] { iv1, iv1, iv2, iv1 })
        {
            Assert.Equal(Stock.Cbc(key, iv, data, encrypting), Run(cipher, iv, data));
        }

        AssertEachMessageStartedAfresh(BlockCipherMode.Cbc, messages: 4);
        cipher.Release();
        AssertClean();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Ecb_messages_pass_no_iv_and_never_restart(bool encrypting)
    {
        byte[] key = Stock.Bytes(32, 15);
        byte[] data = Stock.Bytes(32, 16);
        BlockCipher cipher = Make(BlockCipherMode.Ecb, encrypting, key);

        for (int message = 0; message < 3; message++)
        {
            Assert.Equal(Stock.Ecb(key, data, encrypting), Run(cipher, null, data));
        }

        AssertEachMessageStartedAfresh(BlockCipherMode.Ecb, messages: 3);
        Assert.Empty(Layer.Violations);
        Assert.False(cipher.IsFaulted);
        cipher.Release();
        AssertClean();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void The_callers_iv_is_never_modified(bool encrypting)
    {
        byte[] key = Stock.Bytes(16, 10);
        byte[] iv = Stock.Bytes(16, 11);
        byte[] ivBefore = (byte[])iv.Clone();
        byte[] data = Stock.Bytes(48, 12);
        BlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, key);

        Run(cipher, iv, data);

        Assert.Equal(ivBefore, iv);
        AssertEachMessageStartedAfresh(BlockCipherMode.Cbc, messages: 1);
        cipher.Release();
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public void In_place_transform_matches_stock(bool ecb, bool encrypting)
    {
        BlockCipherMode mode = ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc;
        byte[] key = Stock.Bytes(24, 18);
        byte[]? iv = ecb ? null : Stock.Bytes(16, 19);
        byte[] data = Stock.Bytes(96, 20);
        byte[] buffer = (byte[])data.Clone();
        BlockCipher cipher = Make(mode, encrypting, key);

        Assert.True(cipher.TryTransform(iv, buffer, buffer));

        byte[] expected = ecb ? Stock.Ecb(key, data, encrypting) : Stock.Cbc(key, iv!, data, encrypting);
        Assert.Equal(expected, buffer);
        cipher.Release();
        AssertClean();
    }

    /// <summary>Cases: the direction, the native transform call that fails, its status, and that status as the message shows it.</summary>
    [Theory]
    [SubclassData("TransformFailures")]
    public void A_transform_failure_reports_the_native_status_and_faults_the_handle(bool encrypting, string function, int status, string statusText)
    {
        BlockCipher cipher = Make(BlockCipherMode.Cbc, encrypting, Stock.Bytes(16, 24));
        Layer.Inject(function, status);

        Assert.False(cipher.TryTransform(new byte[16], new byte[32], new byte[32]));
        CryptographicException e = cipher.CreateFailure();
        Assert.Contains(FailureText(function, statusText), e.Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        Assert.Equal(1, Layer.LiveHandles);

        cipher.Release();
        AssertClean();
    }

    [Fact]
    public void A_failed_creation_reports_the_native_status_and_leaves_nothing_allocated()
    {
        Layer.Inject(CreateFunction, NoMemory.Status);

        var e = Assert.Throws<CryptographicException>(() => Make(BlockCipherMode.Ecb, true, Stock.Bytes(16, 25)));

        Assert.Contains(FailureText(CreateFunction, NoMemory.Text), e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(ReleaseFunction, Layer.Calls);
        AssertClean();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(8)]
    [InlineData(15)]
    [InlineData(17)]
    [InlineData(31)]
    [InlineData(33)]
    public void A_bad_key_size_is_rejected_before_any_native_call(int keySize)
    {
        Assert.Throws<CryptographicException>(() => Make(BlockCipherMode.Cbc, true, new byte[keySize]));
        Assert.Empty(Layer.Calls);
    }

    // The key a handle is made with is already a private copy (the key epoch's, zeroed after use): a backend hands it to
    // the native call as it is, and makes no second copy of its own.
    [Theory]
    [InlineData(true, 32)]
    [InlineData(false, 16)]
    public void The_key_reaches_the_native_layer_as_given_without_a_second_copy(bool ecb, int keySize)
    {
        byte[] key = Stock.Bytes(keySize, 27);
        unsafe
        {
            fixed (byte* pKey = key)
            {
                BlockCipher cipher = Make(ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, true, key);
                Assert.Equal((nint)pKey, Assert.Single(Layer.KeyAddresses));
                cipher.Release();
            }
        }
    }

    [Theory]
    [InlineData(16)]
    [InlineData(32)]
    public void Release_frees_the_native_handle_exactly_once(int keySize)
    {
        BlockCipher cipher = Make(BlockCipherMode.Cbc, true, Stock.Bytes(keySize, 28));
        Assert.Equal(1, Layer.LiveHandles);

        cipher.Release();

        Assert.Equal(0, Layer.LiveHandles);
        Assert.Single(Layer.Calls, c => c == ReleaseFunction);
        AssertClean();
    }

    [Theory]
    [InlineData(true, true, 32, "wrote 16 bytes instead of 32")]
    [InlineData(false, false, 48, "wrote 32 bytes instead of 48")]
    public void A_short_output_count_from_the_native_call_is_an_error(bool ecb, bool encrypting, int length, string expected)
    {
        Layer.ReportOneBlockShort = true;
        BlockCipher cipher = Make(ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, encrypting, Stock.Bytes(16, 33));

        Assert.False(cipher.TryTransform(ecb ? default : new byte[16], new byte[length], new byte[length]));

        Assert.Contains(expected, cipher.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(cipher.IsFaulted);
        cipher.Release();
        AssertClean();
    }

    [Theory]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void A_failure_after_the_native_handle_exists_still_frees_it(bool ecb, bool encrypting)
    {
        Layer.FailAfterCreate = true;

        var e = Assert.Throws<CryptographicException>(() => Make(ecb ? BlockCipherMode.Ecb : BlockCipherMode.Cbc, encrypting, Stock.Bytes(16, 37)));

        Assert.Contains(FailureText(CreateFunction, NoMemory.Text), e.Message, StringComparison.Ordinal);
        Assert.Equal(FailedCreateHandsBackTheHandle ? 1 : 0, Layer.Calls.FindAll(c => c == ReleaseFunction).Count);
        AssertClean();
    }

    /// <summary>No misuse recorded, and every native handle freed.</summary>
    private protected void AssertClean()
    {
        Assert.Empty(Layer.Violations);
        Assert.Equal(0, Layer.LiveHandles);
    }

    private static byte[] Run(BlockCipher cipher, byte[]? iv, byte[] input)
    {
        byte[] output = new byte[input.Length];
        Assert.True(cipher.TryTransform(iv, input, output));
        return output;
    }
}
