using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Finalization;
using CachedCryptography.Tests.Infrastructure;
using CachedCryptography.Tests.Lifecycle;

[assembly: SupportedOSPlatform("linux")]

namespace CachedCryptography.Stress;

/// <summary>
/// <c>CachedAes.Stress [stress STEPS | SHAPE ITERATIONS | lifecycle SECONDS OPS]</c> over the OpenSSL backend; exits 0 only when every output
/// matched stock and every native context made was freed or pooled.
/// <list type="bullet">
/// <item><c>stress STEPS</c> (the default, 300): <see cref="FinalizationStress"/> on 4 threads, STEPS steps each.</item>
/// <item><c>other-key</c>, <c>after-key-change</c>, <c>after-dispose</c> ITERATIONS: one kept instance and, per
/// iteration, an ECB/CBC transform that holds a key of its own (for another key than the instance's, used after the
/// instance's key changed, used after the instance was disposed), used once and dropped without <c>Dispose</c>; every
/// 100,000th output is compared with stock.</item>
/// <item><c>never-disposed</c> ITERATIONS: a new instance per iteration, keyed, one CBC encryption, dropped without
/// <c>Dispose</c> (as IdentityModel drops its key-wrap providers): the collector finalizes every one.</item>
/// <item><c>key-dispose SECONDS</c>, <c>transform-dispose SECONDS</c>, <c>key-buffer SECONDS</c>, <c>dropped-load SECONDS
/// [THREADS [MB]]</c>: issue 41's programs on the public surface (<see cref="UserRaces"/>).</item>
/// <item><c>lifecycle SECONDS OPS</c>: <see cref="LifecycleRaces"/> for SECONDS seconds, OPS a comma-separated list of
/// <see cref="LifecycleOp"/> names (<c>SetKey,SetKey</c>: two key setters; <c>SetKey,Dispose</c>: setters racing
/// <c>Dispose</c> with replacement) or <c>all</c>; each on two threads (<c>CACHEDAES_STRESS_THREADS_PER_OP</c> changes
/// that).</item>
/// </list>
/// </summary>
internal static class Program
{
    public static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "stress";
        long count = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 300;
        if (!OpenSslBackend.TryCreate(out CipherBackend? raw, out string? reason))
        {
            Console.WriteLine($"stress: no OpenSSL backend: {reason}");
            return 2;
        }

        var openSsl = (OpenSslBackend)raw;
        var counted = new CountingBackend(openSsl);
        var clock = Stopwatch.StartNew();
        string? failure = mode switch
        {
            "stress" => Stress(counted, (int)count),
            "lifecycle" => Lifecycle(counted, args.Length > 2 ? args[2] : "all", count),
            "key-dispose" => UserRaces.KeyDispose(count),
            "dropped-load" => UserRaces.DroppedLoad(count, args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 4, (args.Length > 3 ? long.Parse(args[3], CultureInfo.InvariantCulture) : 150) << 20),
            "transform-dispose" => UserRaces.TransformDispose(count),
            "key-buffer" => UserRaces.KeyBuffer(count),
            _ => Shape(counted, mode, count),
        };
        FinalizationStress.CollectEverything();

        // Every handle made was given back or freed, and natively only the pool's keyless contexts remain.
        int inUse = openSsl.Pool.LiveContexts - openSsl.Pool.Count;
        failure ??= counted.LiveHandles != 0 || counted.DoubleReleases != 0 || inUse != 0
            ? $"handles not given back: {counted.LiveHandles}, given back twice: {counted.DoubleReleases}, native contexts in use: {inUse}"
            : null;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"stress {mode} {count}: {clock.Elapsed.TotalSeconds:0.0} s, handles made {counted.Creations}, given back for dropped key epochs {counted.DroppedReleases}, native contexts left {openSsl.Pool.LiveContexts} (all pooled)"));
        if (Ownership.OwnershipAudit.Enabled)
        {
            // The audit ends the process at the first thing with two holders; this line shows that it ran.
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"ownership audit: {Ownership.OwnershipAudit.Checks} checks, no thing with two holders"));
            failure ??= Ownership.OwnershipAudit.Checks == 0 ? "the ownership audit was on but checked nothing" : null;
        }

        Console.WriteLine(failure is null ? "stress: OK" : $"stress: FAILED: {failure}");
        return failure is null ? 0 : 1;
    }

    private static string? Stress(CipherBackend backend, int steps)
    {
        FinalizationStress.Outcome outcome = FinalizationStress.Run(backend, threads: 4, steps, includeCfb: true);
        return outcome.Failures.Count == 0 ? null : $"{outcome.Failures.Count} failures, the first: {outcome.Failures[0]}";
    }

    private static string? Lifecycle(CipherBackend backend, string ops, long seconds)
    {
        IReadOnlyList<LifecycleOp> races = ops == "all" ? LifecycleRaces.AllOps : LifecycleRaces.Parse(ops);
        int threadsPerOp = int.TryParse(Environment.GetEnvironmentVariable("CACHEDAES_STRESS_THREADS_PER_OP"), out int n) ? n : 2;
        LifecycleRaces.Outcome outcome = LifecycleRaces.Run(backend, races, TimeSpan.FromSeconds(seconds), threadsPerOp);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"lifecycle {string.Join(',', races)}: {threadsPerOp} threads each, {outcome.Operations} operations, {outcome.UnchosenKeyOutputs} outputs under keys nobody chose"));
        return outcome.Failures.Count == 0 ? null : $"{outcome.Failures.Count} failures, the first: {outcome.Failures[0]}";
    }

    private static string? Shape(CipherBackend backend, string shape, long iterations)
    {
        using var aes = new CachedAes(backend) { IV = new byte[16] };
        aes.Key = RandomNumberGenerator.GetBytes(32);
        byte[] iv = new byte[16], message = new byte[117];
        for (long i = 0; i < iterations; i++)
        {
            byte[] key = RandomNumberGenerator.GetBytes(32);
            ICryptoTransform transform;
            switch (shape)
            {
                case "other-key":
                    transform = aes.CreateEncryptor(key, iv);
                    break;
                case "after-key-change":
                    aes.Key = key;
                    transform = aes.CreateEncryptor();
                    aes.Key = RandomNumberGenerator.GetBytes(32);
                    break;
                case "never-disposed":
                {
                    var instance = new CachedAes(backend) { Key = key };
                    byte[] ciphertext = instance.EncryptCbc(message, iv);
                    transform = new FixedOutput(ciphertext);
                    break;
                }

                case "after-dispose":
                {
                    var instance = new CachedAes(backend) { Key = key, IV = iv };
                    transform = instance.CreateEncryptor();
                    instance.Dispose();
                    break;
                }

                default:
                    return $"unknown shape '{shape}' (other-key, after-key-change, after-dispose, never-disposed)";
            }

            byte[] output = transform.TransformFinalBlock(message, 0, message.Length);
            if (i % 100_000 == 0)
            {
                using Aes stock = Aes.Create();
                stock.Key = key;
                if (!stock.EncryptCbc(message, iv).AsSpan().SequenceEqual(output))
                {
                    return $"iteration {i}: the output differs from stock's";
                }
            }
        }

        return null;
    }

    // Hands back a result already computed, so every shape is checked the same way.
    private sealed class FixedOutput(byte[] output) : ICryptoTransform
    {
        public bool CanReuseTransform => true;

        public bool CanTransformMultipleBlocks => true;

        public int InputBlockSize => 16;

        public int OutputBlockSize => 16;

        public int TransformBlock(byte[] inputBuffer, int inputOffset, int inputCount, byte[] outputBuffer, int outputOffset) => throw new NotSupportedException();

        public byte[] TransformFinalBlock(byte[] inputBuffer, int inputOffset, int inputCount) => output;

        public void Dispose()
        {
        }
    }
}
