using System;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// Differential tests of the public key-wrap API against stock <see cref="Aes.Create()"/>: every
/// overload, destinations too short, exact and longer, invalid input, tampering, key changes and
/// concurrent use. Run against <see cref="CachedAes"/> and against <see cref="KeyWrapCoreAes"/> (the
/// core behind the base class's overloads, independent of how CachedAes is wired).
/// </summary>
public sealed class KeyWrapDifferentialTests
{
    public enum Subject
    {
        CachedAes,
        CoreBehindBaseClass,
    }

    public static TheoryData<Subject, int> SubjectsAndKeySizes() => TestUtil.WithEveryKeySize<Subject>();

    public static TheoryData<Subject> Subjects() => new(Enum.GetValues<Subject>());

    [Theory]
    [MemberData(nameof(SubjectsAndKeySizes))]
    public void Every_overload_matches_stock_for_random_lengths_and_destination_sizes(Subject subject, int keyBits)
    {
        var random = new Random(5649 + keyBits);
        byte[] key = new byte[keyBits / 8];
        random.NextBytes(key);
        using Aes stock = Aes.Create();
        using Aes tested = Create(subject);
        stock.Key = key;
        tested.Key = key;

        int[] edges = [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 4096, 4097];
        int[] lengths = [.. edges, .. Enumerable.Range(0, 6).Select(_ => random.Next(1, 5001))];
        int comparisons = 0;

        foreach (int length in lengths)
        {
            byte[] plaintext = new byte[length];
            random.NextBytes(plaintext);
            int wrappedLength = Aes.GetKeyWrapPaddedLength(length);

            Same($"EncryptKeyWrapPadded(byte[{length}])", a => Outcome.Of(() => a.EncryptKeyWrapPadded(plaintext)));
            Same($"EncryptKeyWrapPadded(span[{length}])", a => Outcome.Of(() => a.EncryptKeyWrapPadded(plaintext.AsSpan())));

            foreach (int size in new[] { wrappedLength - 1, wrappedLength, wrappedLength + 1 })
            {
                Same($"EncryptKeyWrapPadded(span[{length}], dest[{size}])", a => Outcome.WithDestination(size, d =>
                {
                    a.EncryptKeyWrapPadded(plaintext, d);
                    return 0;
                }));
            }

            byte[] wrapped = stock.EncryptKeyWrapPadded(plaintext);
            Same($"DecryptKeyWrapPadded(byte[{wrapped.Length}])", a => Outcome.Of(() => a.DecryptKeyWrapPadded(wrapped)));
            Same($"DecryptKeyWrapPadded(span[{wrapped.Length}])", a => Outcome.Of(() => a.DecryptKeyWrapPadded(wrapped.AsSpan())));

            foreach (int size in new[] { length - 1, length, wrapped.Length - 9, wrapped.Length - 8, wrapped.Length }.Where(s => s >= 0).Distinct())
            {
                Same($"DecryptKeyWrapPadded(span[{wrapped.Length}], dest[{size}])",
                    a => Outcome.WithDestination(size, d => a.DecryptKeyWrapPadded(wrapped, d)));
                Same($"TryDecryptKeyWrapPadded(span[{wrapped.Length}], dest[{size}])",
                    a => Outcome.WithDestination(size, d => a.TryDecryptKeyWrapPadded(wrapped, d, out int written) ? written : -1 - written));
            }
        }

        Assert.True(comparisons > 22 * 12, $"only {comparisons} comparisons");

        void Same(string operation, Func<Aes, Outcome> run)
        {
            comparisons++;
            AssertSameOutcome(stock, tested, subject, $"{keyBits}-bit key, {operation}", run);
        }
    }

    [Theory]
    [MemberData(nameof(Subjects))]
    public void Invalid_arguments_and_inputs_fail_like_stock(Subject subject)
    {
        byte[] key = Enumerable.Range(0, 16).Select(i => (byte)(i + 100)).ToArray();
        using Aes stock = Aes.Create();
        using Aes tested = Create(subject);
        stock.Key = key;
        tested.Key = key;
        byte[] wrapped = stock.EncryptKeyWrapPadded(new byte[20]);
        byte[] corrupt = (byte[])wrapped.Clone();
        corrupt[3] ^= 0x10;
        byte[] corruptSingle = stock.EncryptKeyWrapPadded(new byte[5]);
        corruptSingle[15] ^= 0x01;

        Same("Encrypt(null byte[])", a => Outcome.Of(() => a.EncryptKeyWrapPadded((byte[])null!)));
        Same("Encrypt(empty byte[])", a => Outcome.Of(() => a.EncryptKeyWrapPadded(Array.Empty<byte>())));
        Same("Encrypt(empty span)", a => Outcome.Of(() => a.EncryptKeyWrapPadded(ReadOnlySpan<byte>.Empty)));
        Same("Encrypt(empty span, dest[16])", a => Outcome.WithDestination(16, d =>
        {
            a.EncryptKeyWrapPadded(ReadOnlySpan<byte>.Empty, d);
            return 0;
        }));
        Same("Decrypt(null byte[])", a => Outcome.Of(() => a.DecryptKeyWrapPadded((byte[])null!)));

        foreach (int length in new[] { 0, 7, 8, 15, 17, 23, 25 })
        {
            byte[] ciphertext = Enumerable.Range(0, length).Select(i => (byte)i).ToArray();
            Same($"Decrypt(byte[{length}])", a => Outcome.Of(() => a.DecryptKeyWrapPadded(ciphertext)));
            Same($"Decrypt(span[{length}])", a => Outcome.Of(() => a.DecryptKeyWrapPadded(ciphertext.AsSpan())));
            Same($"Decrypt(span[{length}], dest[32])", a => Outcome.WithDestination(32, d => a.DecryptKeyWrapPadded(ciphertext, d)));
            Same($"TryDecrypt(span[{length}], dest[32])", a => Outcome.WithDestination(32, d => a.TryDecryptKeyWrapPadded(ciphertext, d, out int w) ? w : -1 - w));
        }

        foreach ((string name, byte[] bad) in new[] { ("corrupt", corrupt), ("corrupt single block", corruptSingle) })
        {
            foreach (int size in new[] { bad.Length - 9, bad.Length - 8, bad.Length })
            {
                Same($"Decrypt({name}, dest[{size}])", a => Outcome.WithDestination(size, d => a.DecryptKeyWrapPadded(bad, d)));
                Same($"TryDecrypt({name}, dest[{size}])", a => Outcome.WithDestination(size, d => a.TryDecryptKeyWrapPadded(bad, d, out int w) ? w : -1 - w));
            }

            Same($"Decrypt({name} byte[])", a => Outcome.Of(() => a.DecryptKeyWrapPadded(bad)));
        }

        // Overlapping source and destination, exact and partial, in both directions.
        foreach (int offset in new[] { 0, 4, 8, 16 })
        {
            Same($"Encrypt overlapping at {offset}", a =>
            {
                byte[] buffer = Enumerable.Range(0, 64).Select(i => (byte)i).ToArray();
                return Outcome.Of(() =>
                {
                    a.EncryptKeyWrapPadded(buffer.AsSpan(0, 20), buffer.AsSpan(offset, 32));
                    return buffer;
                });
            });
            Same($"Decrypt overlapping at {offset}", a =>
            {
                byte[] buffer = new byte[64];
                wrapped.CopyTo(buffer, 0);
                return Outcome.Of(() => (a.DecryptKeyWrapPadded(buffer.AsSpan(0, 32), buffer.AsSpan(offset, 24)), buffer));
            });
        }

        void Same(string operation, Func<Aes, Outcome> run) => AssertSameOutcome(stock, tested, subject, operation, run);
    }

    // Runs one operation on stock and on the tested instance: both must end alike (the same output, or the same exception).
    // Compared with the stock of the runtime this runs on: on .NET 11 (Linux) stock rejects a corrupt wrap with an internal
    // CryptographicException subclass, where CachedAes throws CryptographicException itself (see Runtimes.ExpectedTypeFor);
    // every other outcome, and every outcome on .NET 10, must be identical.
    private static void AssertSameOutcome(Aes stock, Aes tested, Subject subject, string operation, Func<Aes, Outcome> run)
    {
        Outcome expected = run(stock).ExpectedFromStock();
        Outcome actual = run(tested);
        Assert.True(expected.Equals(actual), $"{subject}, {operation}:\n stock: {expected}\n {subject}: {actual}");
    }

    [Theory]
    [MemberData(nameof(Subjects))]
    public void Flipping_any_single_byte_of_a_wrapped_key_is_rejected(Subject subject)
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(255 - i)).ToArray();
        using Aes tested = Create(subject);
        tested.Key = key;

        foreach (int length in new[] { 5, 32 })
        {
            byte[] wrapped = tested.EncryptKeyWrapPadded(Enumerable.Range(0, length).Select(i => (byte)(i * 5)).ToArray());

            for (int i = 0; i < wrapped.Length; i++)
            {
                foreach (byte flip in new byte[] { 0x01, 0x80 })
                {
                    byte[] tampered = (byte[])wrapped.Clone();
                    tampered[i] ^= flip;
                    byte[] destination = new byte[tampered.Length - 8];
                    destination.AsSpan().Fill(0xCC);
                    Assert.Throws<CryptographicException>(() => tested.DecryptKeyWrapPadded(tampered, destination));
                    Assert.All(destination, b => Assert.Equal(0, b));
                    Assert.Throws<CryptographicException>(() => tested.DecryptKeyWrapPadded(tampered));
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(Subjects))]
    public void Every_kind_of_key_change_between_wraps_uses_the_new_key(Subject subject)
    {
        byte[] plaintext = Enumerable.Range(0, 32).Select(i => (byte)(i ^ 0x3C)).ToArray();
        using Aes tested = Create(subject);
        byte[] previousWrap = [];
        byte[] previousKey = [];

        Step("Key setter 128", a => a.Key = Enumerable.Repeat((byte)1, 16).ToArray());
        Step("Key setter 256", a => a.Key = Enumerable.Repeat((byte)2, 32).ToArray());
        Step("SetKey 192", a => a.SetKey(Enumerable.Repeat((byte)3, 24).ToArray()));
        Step("GenerateKey", a => a.GenerateKey());
        Step("KeySize 128", a => a.KeySize = 128);
        Step("KeySize 256", a => a.KeySize = 256);
        Step("Key setter 128 again", a => a.Key = Enumerable.Repeat((byte)1, 16).ToArray());

        void Step(string change, Action<Aes> apply)
        {
            apply(tested);
            byte[] wrapped = tested.EncryptKeyWrapPadded(plaintext);
            using Aes stock = Aes.Create();
            stock.Key = tested.Key;
            Assert.True(stock.EncryptKeyWrapPadded(plaintext).AsSpan().SequenceEqual(wrapped), $"{subject}: wrap after {change} did not use the new key");
            Assert.Equal(plaintext, tested.DecryptKeyWrapPadded(wrapped));

            if (previousWrap.Length != 0 && !stock.Key.AsSpan().SequenceEqual(previousKey))
            {
                // The previous key's wrap no longer unwraps: the cached decrypt handle was replaced too.
                Assert.Throws<CryptographicException>(() => tested.DecryptKeyWrapPadded(previousWrap));
            }

            previousWrap = wrapped;
            previousKey = stock.Key;
        }
    }

    [Theory]
    [MemberData(nameof(Subjects))]
    public void Use_after_Dispose_behaves_like_stock(Subject subject)
    {
        byte[] plaintext = new byte[24];
        Aes stock = Aes.Create();
        Aes tested = Create(subject);
        stock.Key = new byte[16];
        tested.Key = new byte[16];
        stock.Dispose();
        tested.Dispose();

        Outcome expected = Outcome.Of(() => stock.DecryptKeyWrapPadded(stock.EncryptKeyWrapPadded(plaintext)));
        Outcome actual = Outcome.Of(() => tested.DecryptKeyWrapPadded(tested.EncryptKeyWrapPadded(plaintext)));
        Assert.True(expected.Equals(actual), $"stock: {expected}\n {subject}: {actual}");
    }

    /// <summary>
    /// CachedAes promises that no call fails because of another thread (and the core behind the base class makes its
    /// own ECB transform per call): every concurrent wrap and unwrap must succeed with stock's bytes.
    /// </summary>
    [Theory]
    [MemberData(nameof(Subjects))]
    public void Concurrent_wraps_on_one_instance_all_match_stock_and_none_throws(Subject subject)
    {
        byte[] key = Enumerable.Range(0, 32).Select(i => (byte)(i * 11)).ToArray();
        byte[] plaintext = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();
        using Aes stock = Aes.Create();
        stock.Key = key;
        byte[] expectedWrap = stock.EncryptKeyWrapPadded(plaintext);
        using Aes tested = Create(subject);
        tested.Key = key;

        const int Threads = 4;
        const int Iterations = 150;
        int correct = 0;
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        using var start = new Barrier(Threads);

        Thread[] threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            byte[] wrapDestination = new byte[expectedWrap.Length];
            byte[] unwrapDestination = new byte[expectedWrap.Length - 8];
            start.SignalAndWait();

            for (int i = 0; i < Iterations; i++)
            {
                try
                {
                    // Half the threads wrap and half unwrap, so both cached directions are contended.
                    if (t % 2 == 0)
                    {
                        wrapDestination.AsSpan().Clear();
                        tested.EncryptKeyWrapPadded(plaintext, wrapDestination);

                        if (!wrapDestination.AsSpan().SequenceEqual(expectedWrap))
                        {
                            failures.Enqueue($"thread {t}, call {i}: wrong wrap {Convert.ToHexString(wrapDestination)}");
                            continue;
                        }
                    }
                    else
                    {
                        unwrapDestination.AsSpan().Clear();
                        int written = tested.DecryptKeyWrapPadded(expectedWrap, unwrapDestination);

                        if (written != plaintext.Length || !unwrapDestination.AsSpan(0, written).SequenceEqual(plaintext))
                        {
                            failures.Enqueue($"thread {t}, call {i}: wrong unwrap ({written} bytes)");
                            continue;
                        }
                    }

                    Interlocked.Increment(ref correct);
                }
#pragma warning disable CA1031 // every exception is a failure here, recorded with its type and message
                catch (Exception e)
#pragma warning restore CA1031
                {
                    failures.Enqueue($"thread {t}, call {i}: {e.GetType().Name}: {e.Message}");
                }
            }
        })).ToArray();

        foreach (Thread thread in threads)
        {
            thread.Start();
        }

        foreach (Thread thread in threads)
        {
            thread.Join();
        }

        Assert.True(failures.IsEmpty, $"{failures.Count} failed calls:\n" + string.Join('\n', failures.Take(10)));
        Assert.Equal(Threads * Iterations, correct);

        // The instance still works afterwards.
        Assert.Equal(expectedWrap, tested.EncryptKeyWrapPadded(plaintext));
        Assert.Equal(plaintext, tested.DecryptKeyWrapPadded(expectedWrap));
    }

    [Fact]
    public void CachedAes_warm_span_overloads_allocate_nothing_and_create_no_more_handles()
    {
        using CachedAes tested = BackendData.Create("PlatformDefault", Enumerable.Range(0, 32).Select(i => (byte)(i + 7)).ToArray());
        byte[] plaintext = new byte[32];
        byte[] wrapped = new byte[40];
        byte[] unwrapped = new byte[32];

        // The key's first handle (the first wrap's ECB encryption one) is given back after its call (KeyEpoch.Handles.cs,
        // _cachesHandles): a second wrap makes the one that stays, and the first unwrap one more (ECB decryption), which
        // the second reuses: three in all.
        tested.EncryptKeyWrapPadded(plaintext, wrapped);
        tested.EncryptKeyWrapPadded(plaintext, wrapped);
        tested.DecryptKeyWrapPadded(wrapped, unwrapped);
        Assert.True(tested.TryDecryptKeyWrapPadded(wrapped, unwrapped, out _));
        int handles = tested.HandleCreations;
        Assert.Equal(3, handles);

        long before = GC.GetAllocatedBytesForCurrentThread();

        for (int i = 0; i < 10; i++)
        {
            tested.EncryptKeyWrapPadded(plaintext, wrapped);
            tested.DecryptKeyWrapPadded(wrapped, unwrapped);
            tested.TryDecryptKeyWrapPadded(wrapped, unwrapped, out _);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(handles, tested.HandleCreations);
    }

    private static Aes Create(Subject subject) => subject switch
    {
        Subject.CachedAes => new CachedAes(),
        _ => new KeyWrapCoreAes(),
    };

    /// <summary>What an operation did: its result or exception type, and the destination afterwards.</summary>
    private readonly record struct Outcome(string Text, Type? Thrown = null)
    {
        public static Outcome Of<T>(Func<T> operation)
        {
            try
            {
                return new Outcome("returned " + Describe(operation()));
            }
            catch (Exception e)
            {
                return new Outcome("threw " + e.GetType().FullName, e.GetType());
            }
        }

        /// <summary>This outcome of stock's as CachedAes must reproduce it on this runtime (<see cref="Runtimes.ExpectedTypeFor(System.Type?)"/>).</summary>
        public Outcome ExpectedFromStock()
        {
            Type? expected = Runtimes.ExpectedTypeFor(Thrown);
            return expected == Thrown
                ? this
                : new Outcome(Text.Replace("threw " + Thrown!.FullName, "threw " + expected!.FullName, StringComparison.Ordinal), expected);
        }

        /// <summary>Runs with a fresh destination of <paramref name="size"/> bytes filled with 0x5A and records it.</summary>
        public static Outcome WithDestination(int size, Func<byte[], int> operation)
        {
            byte[] destination = new byte[size];
            destination.AsSpan().Fill(0x5A);
            Outcome result = Of(() => operation(destination));
            return new Outcome($"{result.Text}; destination {Convert.ToHexString(destination)}", result.Thrown);
        }

        private static string Describe(object? value) => value switch
        {
            null => "null",
            byte[] bytes => Convert.ToHexString(bytes),
            ValueTuple<int, byte[]> pair => $"{pair.Item1}, {Convert.ToHexString(pair.Item2)}",
            _ => value.ToString() ?? "",
        };

        public override string ToString() => Text.Length > 400 ? Text[..400] + "…" : Text;
    }
}
