using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Seam;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>The operations that race.</summary>
public enum LifecycleOp
{
    /// <summary>ECB and CBC one-shots, both directions.</summary>
    OneShot,

    /// <summary>RFC 5649 wrap.</summary>
    KeyWrap,

    /// <summary>The <c>Key</c> setter and <c>SetKey</c>, with keys of every size.</summary>
    SetKey,

    /// <summary>The <c>KeySize</c> setter (discards the key).</summary>
    KeySize,

    /// <summary><c>GenerateKey</c>.</summary>
    GenerateKey,

    /// <summary><c>Dispose</c>, and every other time the instance is replaced by a new one.</summary>
    Dispose,

    /// <summary><c>CreateEncryptor()</c> and <c>CreateDecryptor()</c>, the transforms kept for <see cref="TransformCall"/>.</summary>
    CreateTransform,

    /// <summary><c>CreateEncryptor(key, iv)</c> and <c>CreateDecryptor(key, iv)</c>, with the instance's key or another.</summary>
    CreateTransformWithKey,

    /// <summary>A kept transform's <c>TransformBlock</c> and <c>TransformFinalBlock</c>.</summary>
    TransformCall,

    /// <summary>A kept transform's <c>Dispose</c>, while another thread may be using it.</summary>
    TransformDispose,

    /// <summary>Instances and transforms dropped without <c>Dispose</c>, and the collector and finalizers run.</summary>
    Finalizer,
}

/// <summary>
/// Lifecycle operations on one shared <see cref="CachedAes"/> from many threads at once: key changes, key size changes,
/// <c>GenerateKey</c>, <c>Dispose</c> (with the instance replaced), transforms made, used and disposed, one-shots, key
/// wrap and the finalizer, in any combination, with more threads than cores and forced yields between operations. Every
/// output is compared with stock <see cref="Aes"/>, and every native handle must be given back or freed at the end.
/// </summary>
/// <remarks>
/// <para>A stress harness rather than Coyote's systematic exploration: the races it hunts are in lock-free code over
/// native memory (interlocked slot exchanges, a versioned key, a process-wide barrier), where Coyote only schedules at
/// the task and lock operations it rewrites, and the failures are heap corruption that only the process's allocator or a
/// memory checker can see. So the harness is run in the test suite (plain glibc, where a freed small block that is
/// written aborts the process), under glibc's debug allocator and under valgrind's memcheck (<c>.ci/run</c>,
/// <c>scripts/memcheck.sh</c>), and for minutes at a time by <c>tests/lanes/CachedAes.Stress</c>.</para>
/// <para>Outputs: every key an instance is given comes from four fixed keys, and each call's output must be stock's for
/// one of them. Operations that give the instance a key nobody chose (<c>Dispose</c>, after which a use generates one as
/// stock does; <c>KeySize</c>; <c>GenerateKey</c>) make other outputs possible: those are counted, not failed, and only
/// when one of these operations is part of the race. A transform keeps the key it was made with, so every output of one
/// transform must be the same. The only exception allowed is <see cref="ObjectDisposedException"/> from a transform
/// that another thread disposed (stock's disposed transform throws it).</para>
/// </remarks>
internal static class LifecycleRaces
{
    /// <summary>What a run saw.</summary>
    /// <param name="Failures">Wrong outputs and unexpected exceptions (empty when all went well).</param>
    /// <param name="Operations">Operations completed.</param>
    /// <param name="UnchosenKeyOutputs">Outputs under a key none of the four (allowed only in races that generate keys).</param>
    internal sealed record Outcome(IReadOnlyList<string> Failures, long Operations, long UnchosenKeyOutputs);

    /// <summary>Every operation, for runs of all of them at once.</summary>
    internal static IReadOnlyList<LifecycleOp> AllOps { get; } = Enum.GetValues<LifecycleOp>();

    /// <summary>
    /// Runs <paramref name="ops"/> against one instance over <paramref name="backend"/> for <paramref name="duration"/>,
    /// each on <paramref name="threadsPerOp"/> threads of its own, then disposes and drops everything and collects.
    /// </summary>
    public static Outcome Run(CipherBackend backend, IReadOnlyList<LifecycleOp> ops, TimeSpan duration, int threadsPerOp = 2, int seed = 31)
    {
        var race = new Race(backend, ops, seed);
        return race.Run(duration, threadsPerOp);
    }

    /// <summary>The operations named in <paramref name="names"/> (comma-separated, case-insensitive).</summary>
    public static LifecycleOp[] Parse(string names) =>
        [.. names.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(n => Enum.Parse<LifecycleOp>(n, ignoreCase: true))];

    private sealed record Made(ICryptoTransform Transform, bool Encrypting, int KeyIndex)
    {
        // The first output of a transform made with the instance's key: every later one must equal it.
        public byte[]? First { get; set; }
    }

    private sealed class Race
    {
        private const int PoolSize = 8;
        private static readonly int[] s_keySizes = [128, 192, 256];

        private readonly CipherBackend _backend;
        private readonly IReadOnlyList<LifecycleOp> _ops;
        private readonly int _seed;
        private readonly bool _unchosenKeys;
        private readonly bool _disposedTransforms;

        // Four keys (16, 24, 32, 32 bytes), one 48-byte message, one IV, and stock's outputs for each key.
        private readonly byte[][] _keys;
        private readonly byte[] _iv;
        private readonly byte[] _message;
        private readonly byte[][] _ecb;
        private readonly byte[][] _cbc;
        private readonly byte[][] _ecbDecrypted; // _ecb[0] decrypted under each key
        private readonly byte[][] _cbcDecrypted; // _cbc[0] decrypted (no padding) under each key
        private readonly byte[][] _wrap;

        private readonly ConcurrentQueue<string> _failures = new();
        private readonly ConcurrentBag<CachedAes> _instances = [];
        private readonly Made?[] _pool = new Made?[PoolSize];
        private Made?[] _inUse = [];
        private CachedAes _shared;
        private long _operations;
        private long _unchosen;
        private int _stop;

        public Race(CipherBackend backend, IReadOnlyList<LifecycleOp> ops, int seed)
        {
            _backend = backend;
            _ops = ops;
            _seed = seed;
            _unchosenKeys = ops.Any(op => op is LifecycleOp.Dispose or LifecycleOp.KeySize or LifecycleOp.GenerateKey);
            _disposedTransforms = ops.Contains(LifecycleOp.TransformDispose);
            var rng = new Random(seed);
            _keys = [Bytes(rng, 16), Bytes(rng, 24), Bytes(rng, 32), Bytes(rng, 32)];
            _iv = Bytes(rng, 16);
            _message = Bytes(rng, 48);
            _ecb = new byte[_keys.Length][];
            _cbc = new byte[_keys.Length][];
            _ecbDecrypted = new byte[_keys.Length][];
            _cbcDecrypted = new byte[_keys.Length][];
            _wrap = new byte[_keys.Length][];
            for (int k = 0; k < _keys.Length; k++)
            {
                using Aes stock = Aes.Create();
                stock.Key = _keys[k];
                _ecb[k] = stock.EncryptEcb(_message, PaddingMode.None);
                _cbc[k] = stock.EncryptCbc(_message, _iv, PaddingMode.None);
                _wrap[k] = stock.EncryptKeyWrapPadded(_message.AsSpan(0, 32));
            }

            for (int k = 0; k < _keys.Length; k++)
            {
                using Aes stock = Aes.Create();
                stock.Key = _keys[k];
                _ecbDecrypted[k] = stock.DecryptEcb(_ecb[0], PaddingMode.None);
                _cbcDecrypted[k] = stock.DecryptCbc(_cbc[0], _iv, PaddingMode.None);
            }

            _shared = NewInstance(0);
        }

        public Outcome Run(TimeSpan duration, int threadsPerOp)
        {
            var threads = new List<Thread>();
            _inUse = new Made?[_ops.Count * threadsPerOp];
            int index = 0;
            foreach (LifecycleOp op in _ops)
            {
                for (int i = 0; i < threadsPerOp; i++)
                {
                    int worker = index++;
                    threads.Add(new Thread(() => Work(op, worker)) { IsBackground = true });
                }
            }

            var clock = Stopwatch.StartNew();
            threads.ForEach(t => t.Start());
            while (clock.Elapsed < duration && _failures.IsEmpty)
            {
                Thread.Sleep(10);
            }

            Volatile.Write(ref _stop, 1);
            threads.ForEach(t => t.Join());

            // Everything made is disposed (the transforms in the pool and the instances) or dropped, and collected.
            foreach (Made? made in _pool)
            {
                made?.Transform.Dispose();
            }

            foreach (CachedAes instance in _instances)
            {
                instance.Dispose();
            }

            Finalization.FinalizationStress.CollectEverything();
            return new Outcome([.. _failures], Interlocked.Read(ref _operations), Interlocked.Read(ref _unchosen));
        }

        private void Work(LifecycleOp op, int worker)
        {
            var rng = new Random(_seed * 1000 + worker);
            try
            {
                while (Volatile.Read(ref _stop) == 0)
                {
                    RunOp(op, worker, rng);
                    Interlocked.Increment(ref _operations);
                    if (rng.Next(4) == 0)
                    {
                        Thread.Yield();
                    }
                }
            }
#pragma warning disable CA1031 // every outcome is recorded and asserted on
            catch (Exception e)
#pragma warning restore CA1031
            {
                _failures.Enqueue(string.Create(CultureInfo.InvariantCulture, $"{op} (thread {worker}): {e}"));
            }
        }

        private void RunOp(LifecycleOp op, int worker, Random rng)
        {
            CachedAes aes = Volatile.Read(ref _shared);
            switch (op)
            {
                case LifecycleOp.OneShot:
                    switch (rng.Next(4))
                    {
                        case 0:
                            Check("EncryptEcb", aes.EncryptEcb(_message, PaddingMode.None), _ecb);
                            break;
                        case 1:
                            Check("EncryptCbc", aes.EncryptCbc(_message, _iv, PaddingMode.None), _cbc);
                            break;
                        case 2:
                            Check("DecryptCbc", aes.DecryptCbc(_cbc[0], _iv, PaddingMode.None), _cbcDecrypted);
                            break;
                        default:
                            Span<byte> output = stackalloc byte[48];
                            aes.DecryptEcb(_ecb[0], output, PaddingMode.None);
                            Check("DecryptEcb", output.ToArray(), _ecbDecrypted);
                            break;
                    }

                    break;

                case LifecycleOp.KeyWrap:
                    Check("EncryptKeyWrapPadded", aes.EncryptKeyWrapPadded(_message.AsSpan(0, 32)), _wrap);
                    break;

                case LifecycleOp.SetKey:
                    if (rng.Next(2) == 0)
                    {
                        aes.Key = _keys[rng.Next(_keys.Length)];
                    }
                    else
                    {
                        aes.SetKey(_keys[rng.Next(_keys.Length)]);
                    }

                    break;

                case LifecycleOp.KeySize:
                    aes.KeySize = s_keySizes[rng.Next(s_keySizes.Length)];
                    break;

                case LifecycleOp.GenerateKey:
                    aes.GenerateKey();
                    break;

                case LifecycleOp.Dispose:
                    aes.Dispose();
                    if (rng.Next(2) == 0)
                    {
                        Volatile.Write(ref _shared, NewInstance(rng.Next(_keys.Length)));
                    }

                    break;

                case LifecycleOp.CreateTransform:
                {
                    bool encrypting = rng.Next(2) == 0;
                    Keep(rng, new Made(encrypting ? aes.CreateEncryptor() : aes.CreateDecryptor(), encrypting, -1));
                    break;
                }

                case LifecycleOp.CreateTransformWithKey:
                {
                    // The instance's own key (its cached handles) or another one (a key epoch of the transform's own).
                    int k = rng.Next(_keys.Length);
                    bool encrypting = rng.Next(2) == 0;
                    ICryptoTransform transform = encrypting ? aes.CreateEncryptor(_keys[k], _iv) : aes.CreateDecryptor(_keys[k], _iv);
                    Keep(rng, new Made(transform, encrypting, k));
                    break;
                }

                case LifecycleOp.TransformCall:
                    CallTransform(worker, rng, aes);
                    break;

                case LifecycleOp.TransformDispose:
                {
                    // A transform another thread is using right now, or one waiting in the pool.
                    Made?[] inUse = _inUse;
                    Made? target = Volatile.Read(ref inUse[rng.Next(inUse.Length)]) ?? Interlocked.Exchange(ref _pool[rng.Next(PoolSize)], null);
                    target?.Transform.Dispose();
                    break;
                }

                case LifecycleOp.Finalizer:
                {
                    // An instance and transforms dropped without Dispose; now and then a kept transform dropped too.
                    var dropped = new CachedAes(_backend) { Key = _keys[rng.Next(_keys.Length)], IV = _iv, Padding = PaddingMode.None };
                    _ = dropped.EncryptCbc(_message, _iv, PaddingMode.None);
                    _ = dropped.CreateEncryptor().TransformFinalBlock(_message, 0, _message.Length);
                    _ = aes.CreateEncryptor(_keys[rng.Next(_keys.Length)], _iv).TransformFinalBlock(_message, 0, 16);
                    if (rng.Next(8) == 0)
                    {
                        Interlocked.Exchange(ref _pool[rng.Next(PoolSize)], null);
                    }

                    if (rng.Next(4) == 0)
                    {
                        GC.Collect();
                        GC.WaitForPendingFinalizers();
                        CachedCryptography.Ownership.Reclaimer.SweepNow();
                    }

                    break;
                }
            }
        }

        private void CallTransform(int worker, Random rng, CachedAes aes)
        {
            Made? made = Interlocked.Exchange(ref _pool[rng.Next(PoolSize)], null);
            if (made is null)
            {
                // An empty pool slot: this thread makes a transform itself (of either kind).
                int k = rng.Next(_keys.Length);
                made = rng.Next(2) == 0
                    ? new Made(aes.CreateEncryptor(_keys[k], _iv), true, k)
                    : new Made(aes.CreateEncryptor(), true, -1);
            }

            Volatile.Write(ref _inUse[worker], made);
            byte[] input = made.Encrypting ? _message : _cbc[0];
            byte[] output;
            try
            {
                if (rng.Next(2) == 0)
                {
                    output = made.Transform.TransformFinalBlock(input, 0, input.Length);
                }
                else
                {
                    output = new byte[48];
                    int written = made.Transform.TransformBlock(input, 0, 32, output, 0);
                    byte[] last = made.Transform.TransformFinalBlock(input, 32, 16);
                    last.CopyTo(output, written);
                }
            }
            catch (ObjectDisposedException) when (_disposedTransforms)
            {
                // Disposed by another thread before or during the call, as stock's throws.
                Volatile.Write(ref _inUse[worker], null);
                return;
            }

            Volatile.Write(ref _inUse[worker], null);
            byte[][] expected = made.Encrypting ? _cbc : _cbcDecrypted;
            if (made.KeyIndex >= 0)
            {
                if (!output.AsSpan().SequenceEqual(expected[made.KeyIndex]))
                {
                    _failures.Enqueue($"a transform made for key {made.KeyIndex}: expected {Convert.ToHexString(expected[made.KeyIndex])}, got {Convert.ToHexString(output)}");
                }
            }
            else
            {
                // The instance's key when it was made: one of the four, or (where such keys are made) another, but the
                // same for every call of the transform.
                Check("a transform made with the instance's key", output, expected);
                byte[]? first = made.First;
                if (first is null)
                {
                    made.First = output;
                }
                else if (!first.AsSpan().SequenceEqual(output))
                {
                    _failures.Enqueue("a transform's key changed under it: two calls gave different outputs");
                }
            }

            if (Interlocked.CompareExchange(ref _pool[rng.Next(PoolSize)], made, null) is not null)
            {
                made.Transform.Dispose();
            }
        }

        private void Keep(Random rng, Made made)
        {
            Made? displaced = Interlocked.Exchange(ref _pool[rng.Next(PoolSize)], made);
            displaced?.Transform.Dispose();
        }

        private CachedAes NewInstance(int key)
        {
            var aes = new CachedAes(_backend) { Key = _keys[key], IV = _iv, Padding = PaddingMode.None };
            _instances.Add(aes);

            // A cached handle from the start, so that the first key change re-keys one.
            _ = aes.EncryptCbc(_message, _iv, PaddingMode.None);
            return aes;
        }

        // The output must be stock's for one of the four keys or, in a race that makes keys nobody chose, have the right
        // length (counted: stock's output for a key this harness cannot know).
        private void Check(string what, byte[] actual, byte[][] expectedPerKey)
        {
            if (expectedPerKey.Any(e => e.AsSpan().SequenceEqual(actual)))
            {
                return;
            }

            if (_unchosenKeys && actual.Length == expectedPerKey[0].Length)
            {
                Interlocked.Increment(ref _unchosen);
                return;
            }

            _failures.Enqueue($"{what}: {Convert.ToHexString(actual)} is stock's output for none of the keys");
        }

        private static byte[] Bytes(Random rng, int length)
        {
            byte[] bytes = new byte[length];
            rng.NextBytes(bytes);
            return bytes;
        }
    }
}
