using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Finalization;

/// <summary>
/// Every kind of object CachedAes hands out, made, used and dropped without <c>Dispose</c> on several threads while
/// another thread runs the collector and the finalizers without pause, with every output compared with stock
/// <see cref="Aes"/>. A finalizer that frees what is still in use, or pools what is about to be freed, shows up here as a
/// wrong result, a native failure, or a crash of the process. Shared by the xunit suite (over OpenSSL, the simulated CNG
/// and CommonCrypto layers and the stock fallback) and the Wine lane (over the real bcrypt.dll).
/// </summary>
internal static class FinalizationStress
{
    /// <summary>The kinds of use, one per step in turn.</summary>
    internal enum Step
    {
        /// <summary>A new instance, ECB and CBC one-shots both ways, dropped.</summary>
        DroppedInstance,

        /// <summary>A transform for the instance's own key (<c>CreateEncryptor()</c>), instance and transform dropped.</summary>
        TransformForInstanceKey,

        /// <summary>A transform for another key than the instance's (<c>CreateEncryptor(key, iv)</c>), dropped.</summary>
        TransformForAnotherKey,

        /// <summary>A decryptor made, then the instance's key changed, then the decryptor used and dropped.</summary>
        TransformAfterKeyChange,

        /// <summary>A decryptor made, then the instance disposed, then the decryptor used and dropped.</summary>
        TransformAfterInstanceDispose,

        /// <summary>A CFB transform (stock's), dropped.</summary>
        CfbTransform,

        /// <summary>A <see cref="CryptoStream"/> over a transform, finished but never disposed.</summary>
        UndisposedCryptoStream,

        /// <summary>RFC 5649 wrap and unwrap on a new instance, dropped.</summary>
        KeyWrap,

        /// <summary>On the instance all threads share (its key changed now and then): a transform for a key read from it, dropped.</summary>
        SharedInstanceTransform,
    }

    /// <summary>What a run saw: the failures (empty when every output matched stock), and how many steps ran.</summary>
    internal sealed record Outcome(IReadOnlyList<string> Failures, long Steps, int Collections);

    /// <summary>
    /// Runs <paramref name="iterationsPerThread"/> steps on each of <paramref name="threads"/> threads over instances of
    /// <paramref name="backend"/>, with a collector thread running <c>GC.Collect</c>, <c>GC.WaitForPendingFinalizers</c>
    /// and a sweep of dropped keys throughout (besides the sweeps the collections queue on the thread pool), then drops
    /// everything and collects until the finalizers and sweeps are done.
    /// CFB steps are left out where stock CFB does not work (<paramref name="includeCfb"/>).
    /// </summary>
    public static Outcome Run(CipherBackend backend, int threads, int iterationsPerThread, bool includeCfb, int seed = 23)
    {
        var failures = new ConcurrentQueue<string>();
        long steps = 0;
        int collectionsBefore = GC.CollectionCount(2);
        var shared = new CachedAes(backend) { Key = RandomNumberGenerator.GetBytes(32) };
        int running = threads;

        var collector = new Thread(() =>
        {
            while (Volatile.Read(ref running) > 0)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                CachedCryptography.Ownership.Reclaimer.SweepNow();
            }
        });
        collector.Start();

        var workers = Enumerable.Range(0, threads).Select(t => new Thread(() =>
        {
            var rng = new Random(seed + t);
            try
            {
                for (int i = 0; i < iterationsPerThread; i++)
                {
                    var step = (Step)((i + t) % (int)(Step.SharedInstanceTransform + 1));
                    if (step == Step.CfbTransform && !includeCfb)
                    {
                        continue;
                    }

                    string? failure = RunStep(step, backend, shared, rng);
                    if (failure is not null)
                    {
                        failures.Enqueue(string.Create(CultureInfo.InvariantCulture, $"thread {t}, step {i} ({step}): {failure}"));
                    }

                    Interlocked.Increment(ref steps);
                    if (i % 16 == 15)
                    {
                        // More collections than the collector thread alone gets through on a busy machine.
                        GC.Collect();
                    }

                    if (t == 0 && i % 64 == 63)
                    {
                        // The shared instance's key changes under the other threads' transforms.
                        shared.Key = RandomNumberGenerator.GetBytes(rng.Next(3) switch { 0 => 16, 1 => 24, _ => 32 });
                    }
                }
            }
#pragma warning disable CA1031 // every outcome is recorded and asserted on
            catch (Exception e)
#pragma warning restore CA1031
            {
                failures.Enqueue($"thread {t}: {e}");
            }
            finally
            {
                Interlocked.Decrement(ref running);
            }
        })).ToList();
        workers.ForEach(w => w.Start());
        workers.ForEach(w => w.Join());
        collector.Join();

        shared.Dispose();
        CollectEverything();
        return new Outcome([.. failures], steps, GC.CollectionCount(2) - collectionsBefore);
    }

    /// <summary>
    /// Collects until every object dropped so far has been finalized or found by the sweep of dropped keys, and whatever
    /// either gave back.
    /// </summary>
    public static void CollectEverything()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            CachedCryptography.Ownership.Reclaimer.SweepNow();
        }

        // A sweep on a pool thread may still be giving back what it dequeued (GiveBackInProgressTests).
        CachedCryptography.Ownership.Reclaimer.WaitUntilGivenBack(TimeSpan.FromSeconds(30));
    }

    // One step; null when every output matched stock, else what differed.
    private static string? RunStep(Step step, CipherBackend backend, CachedAes shared, Random rng)
    {
        byte[] key = NewKey(rng);
        byte[] iv = Bytes(rng, 16);
        byte[] message = Bytes(rng, rng.Next(0, 100));
        CipherMode mode = rng.Next(2) == 0 ? CipherMode.ECB : CipherMode.CBC;
        using Aes stock = Aes.Create();
        stock.Key = key;
        byte[] expected = mode == CipherMode.ECB ? stock.EncryptEcb(message, PaddingMode.PKCS7) : stock.EncryptCbc(message, iv);

        switch (step)
        {
            case Step.DroppedInstance:
            {
                var aes = new CachedAes(backend) { Key = key };
                return Differs("EncryptEcb", stock.EncryptEcb(message, PaddingMode.PKCS7), aes.EncryptEcb(message, PaddingMode.PKCS7))
                    ?? Differs("DecryptEcb", message, aes.DecryptEcb(stock.EncryptEcb(message, PaddingMode.PKCS7), PaddingMode.PKCS7))
                    ?? Differs("EncryptCbc", stock.EncryptCbc(message, iv), aes.EncryptCbc(message, iv))
                    ?? Differs("DecryptCbc", message, aes.DecryptCbc(stock.EncryptCbc(message, iv), iv));
            }

            case Step.TransformForInstanceKey:
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv, Mode = mode };
                return Differs("CreateEncryptor()", expected, Final(aes.CreateEncryptor(), message));
            }

            case Step.TransformForAnotherKey:
            {
                var aes = new CachedAes(backend) { Key = NewKey(rng), Mode = mode };
                return Differs("CreateEncryptor(key, iv)", expected, Final(aes.CreateEncryptor(key, iv), message))
                    ?? Differs("CreateDecryptor(key, iv)", message, Final(aes.CreateDecryptor(key, iv), expected));
            }

            case Step.TransformAfterKeyChange:
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv, Mode = mode };
                ICryptoTransform decryptor = aes.CreateDecryptor();
                aes.Key = NewKey(rng);
                return Differs("decryptor after a key change", message, Final(decryptor, expected));
            }

            case Step.TransformAfterInstanceDispose:
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv, Mode = mode };
                ICryptoTransform decryptor = aes.CreateDecryptor();
                ICryptoTransform encryptor = aes.CreateEncryptor(key, iv);
                aes.Dispose();
                return Differs("decryptor after Dispose", message, Final(decryptor, expected))
                    ?? Differs("encryptor after Dispose", expected, Final(encryptor, message));
            }

            case Step.CfbTransform:
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv, Mode = CipherMode.CFB, FeedbackSize = 8 };
                return Differs("CFB encryptor", stock.EncryptCfb(message, iv, PaddingMode.PKCS7, 8), Final(aes.CreateEncryptor(), message));
            }

            case Step.UndisposedCryptoStream:
            {
                var aes = new CachedAes(backend) { Key = key, IV = iv, Mode = mode };
                var output = new MemoryStream();
                var stream = new CryptoStream(output, aes.CreateEncryptor(), CryptoStreamMode.Write, leaveOpen: true);
                stream.Write(message);
                stream.FlushFinalBlock();
                return Differs("CryptoStream", expected, output.ToArray());
            }

            case Step.KeyWrap:
            {
                var aes = new CachedAes(backend) { Key = key };
                byte[] wrapped = aes.EncryptKeyWrapPadded(key);
                return Differs("EncryptKeyWrapPadded", stock.EncryptKeyWrapPadded(key), wrapped)
                    ?? Differs("DecryptKeyWrapPadded", key, aes.DecryptKeyWrapPadded(wrapped));
            }

            default:
            {
                // The key read is the one the transform gets, whether or not the shared instance has moved on since.
                byte[] sharedKey = shared.Key;
                stock.Key = sharedKey;
                ICryptoTransform encryptor = shared.CreateEncryptor(sharedKey, iv);
                return Differs("shared instance's CreateEncryptor(aes.Key, iv)", stock.EncryptCbc(message, iv), Final(encryptor, message));
            }
        }
    }

    private static byte[] Final(ICryptoTransform transform, byte[] input) => transform.TransformFinalBlock(input, 0, input.Length);

    private static string? Differs(string what, byte[] expected, byte[] actual) =>
        expected.AsSpan().SequenceEqual(actual) ? null : $"{what}: expected {Convert.ToHexString(expected)}, got {Convert.ToHexString(actual)}";

    private static byte[] NewKey(Random rng) => Bytes(rng, rng.Next(3) switch { 0 => 16, 1 => 24, _ => 32 });

    private static byte[] Bytes(Random rng, int length)
    {
        byte[] bytes = new byte[length];
        rng.NextBytes(bytes);
        return bytes;
    }
}
