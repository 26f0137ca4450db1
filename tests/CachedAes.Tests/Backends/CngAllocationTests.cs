using System;
using System.Runtime.CompilerServices;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Backends;

/// <summary>
/// What a new instance per message allocates on the CNG backend, over a native layer that does nothing (so only the
/// managed side is counted): one object per CNG key, and no more per message than stock's <see cref="System.Security.Cryptography.Aes"/>
/// allocates for the same message on Windows. Runs alone: it churns key memory through the process's pool, which tests
/// that watch one pooled memory must not see taken meanwhile, and a test that hooks the pool must not run on its thread.
/// </summary>
[Collection(nameof(CngAllocationTests))]
[CollectionDefinition(nameof(CngAllocationTests), DisableParallelization = true)]
public sealed class CngAllocationTests
{
    // Stock .NET 10's bytes per message for `Aes.Create()`, `SetKey` (16 bytes), one 16-byte `EncryptCbc` one-shot and
    // `Dispose` on CNG, as the Wine probe measures it (benchmarks/CachedAes.WineProbe, case "NewInstance: stock"; the
    // same figure in every run of docs/benchmarks-per-message.md's Windows rows).
    private const int StockBytesPerMessageOnCng = 344;

    private static readonly byte[] s_key = new byte[16];
    private static readonly byte[] s_iv = new byte[16];
    private static readonly byte[] s_plaintext = new byte[16];
    private static readonly byte[] s_destination = new byte[32];

    private readonly CipherBackend _backend;

    public CngAllocationTests() =>
        Assert.True(CngBackend.TryCreate(new NothingCngApi(), tryPseudoHandles: true, out _backend!, out string? reason), reason);

    [Fact]
    public void A_cng_handle_is_one_object_that_owns_its_key()
    {
        long one = Infrastructure.TestUtil.AllocatedWhenWarm(() => RuntimeHelpers.GetUninitializedObject(typeof(CngCipher)));

        long made = Infrastructure.TestUtil.AllocatedWhenWarm(() => _backend.Create(BlockCipherMode.Cbc, encrypting: true, s_key).Release());

        Assert.Equal(one, made);
    }

    [Fact]
    public void A_new_instance_per_message_allocates_no_more_than_stock_does_on_cng()
    {
        const int messages = 2_000;
        for (int i = 0; i < 100; i++)
        {
            Message();
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < messages; i++)
        {
            Message();
        }

        // An average: a message that finds its processor's pool of key memory empty (the thread moved to another
        // processor) makes a new one, a few bytes a message at most over the run.
        double perMessage = (GC.GetAllocatedBytesForCurrentThread() - before) / (double)messages;
        Assert.True(perMessage < StockBytesPerMessageOnCng + 1, $"{perMessage:F1} B a message, stock allocates {StockBytesPerMessageOnCng} B");
    }

    private void Message()
    {
        using var aes = new CachedAes(_backend);
        aes.SetKey(s_key);
        // Not Assert.Equal, which allocates a comparer of its own per call.
        if (aes.EncryptCbc(s_plaintext, s_iv, s_destination) != 32)
        {
            Assert.Fail("a 16-byte message did not encrypt to 32 bytes");
        }
    }

    // bcrypt.dll's calls, each succeeding without doing anything or allocating: what remains is the managed side's own.
    private sealed class NothingCngApi : ICngApi
    {
        public int OpenAlgorithmProvider(string algorithmId, out nint algorithm)
        {
            algorithm = 1;
            return 0;
        }

        public int SetProperty(nint handle, string property, ReadOnlySpan<byte> value) => 0;

        public int CloseAlgorithmProvider(nint algorithm) => 0;

        public int GetObjectLength(nint algorithm, out int length)
        {
            length = 654;
            return 0;
        }

        public int GenerateSymmetricKey(nint algorithm, ReadOnlySpan<byte> secret, CngCipher key)
        {
            key.Attach(1);
            return 0;
        }

        public int Encrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        {
            written = input.Length;
            return 0;
        }

        public int Decrypt(nint key, ReadOnlySpan<byte> input, Span<byte> iv, Span<byte> output, out int written)
        {
            written = input.Length;
            return 0;
        }

        public int DestroyKey(nint key) => 0;
    }
}
