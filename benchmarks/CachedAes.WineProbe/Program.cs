using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using CachedCryptography.Backends.Cng;
using CachedCryptography.Seam;

namespace CachedCryptography.WineProbe;

/// <summary>
/// <c>CachedAes.WineProbe [MESSAGES]</c>: the per-message shapes of one 16-byte CBC message on CNG, stock against
/// CachedAes, and the bare <c>bcrypt.dll</c> steps they are made of. Each case runs MESSAGES times (default 50,000) per
/// round after a warm-up; the rounds of all cases are interleaved (round 1 of every case, then round 2, ...), fifteen in
/// all, so that a slow spell of a shared machine falls on every case alike, and each case's fastest round is one the
/// machine left it alone. Before each round the heap is collected, untimed, so that a round does not start with another
/// case's garbage (CACHEDAES_WINE_PROBE_SETTLE: collect, none or sweep; see <c>Case.Settle</c>). Each case prints its fastest round and its median round in ns per message, with
/// the bytes it allocated per message, the collections of each generation per 1,000 messages of its rounds, and the
/// processor time of the whole process per message in its median round (every thread's: the collector's, the
/// finalizer's and the thread pool's work counts too, which a wall-clock time on a machine with idle cores hides). The
/// client cases (<see cref="Clients"/>) are given as the second argument: <c>shapes</c> (the default), <c>clients</c>,
/// <c>all</c>, or the start of case names. Every output is compared with stock's for the same key; a mismatch ends the
/// run with exit code 1.
/// </summary>
internal static class Program
{
    private const int KeyCount = 64;
    private const int Rounds = 15;

    private static readonly byte[][] s_keys = Enumerable.Range(0, KeyCount)
        .Select(k => Enumerable.Range(0, 16).Select(b => (byte)(k * 31 + b * 7 + 1)).ToArray()).ToArray();

    private static readonly byte[] s_iv = Enumerable.Range(0x40, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[] s_plaintext = Enumerable.Range(0x10, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[] s_destination = new byte[32];
    private static readonly byte[][] s_expected = s_keys.Select(StockCbc).ToArray();

    private static readonly string s_settle = Environment.GetEnvironmentVariable("CACHEDAES_WINE_PROBE_SETTLE") ?? "collect";

    private static int s_next;

    public static int Main(string[] args)
    {
        if (!OperatingSystem.IsWindows())
        {
            Console.Error.WriteLine("CachedAes.WineProbe measures CNG: run it on Windows or under Wine (scripts/wine-probe.sh).");
            return 2;
        }

        int messages = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 50_000;
        string cases = args.Length > 1 ? args[1] : "shapes";
        return Run(messages, cases);
    }

    [SupportedOSPlatform("windows")]
    private static int Run(int messages, string which)
    {
        // CNG with its own CBC, whatever the self-test said of it: each new instance below makes one call on a key handle
        // made for it, and each new key on the kept instance re-keys its handle before its one call, which is right even
        // where reusing a CBC key for a second message is not (Wine 8.0). Every output is checked against stock's.
        if (!CngBackend.TryCreate(CngApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10), out CipherBackend? cng, out string? reason))
        {
            Console.Error.WriteLine($"no CNG backend: {reason}");
            return 2;
        }

        Console.WriteLine($"# .NET {Environment.Version}, {RuntimeInformation.OSDescription}, CachedAes backend: "
            + $"{CachedAesDiagnostics.Backend} (ECB {CachedAesDiagnostics.Ecb}, CBC {CachedAesDiagnostics.Cbc}), "
            + $"{messages} messages a round, {Rounds} interleaved rounds, cases: {which}");
        using var kept = new KeptKey();
        using Aes stockKept = Aes.Create();
        using var cachedKept = new CachedAes(cng);
        // shapes, clients, all, or the cases whose name starts with the given text ("NeverDisposed: stock"): only the cases
        // asked for are set up, so that nothing else lives in the heap or leaves garbage behind.
        Func<string, bool> wanted = which switch
        {
            "all" => _ => true,
            "shapes" => name => !Clients.IsClientCase(name),
            "clients" => Clients.IsClientCase,
            _ => name => name.StartsWith(which, StringComparison.Ordinal),
        };
        using var clients = new Clients();
        List<Case> cases = [.. ShapeCases(cng, kept, stockKept, cachedKept).Where(c => wanted(c.Name)), .. clients.Cases(wanted)];
        if (cases.Count == 0)
        {
            Console.Error.WriteLine($"no case is '{which}': shapes, clients, all, or the start of a case's name");
            return 2;
        }

        foreach (Case c in cases)
        {
            c.Warm();
        }

        for (int round = 0; round < Rounds; round++)
        {
            foreach (Case c in cases)
            {
                c.Round(messages);
            }
        }

        Console.WriteLine("case,ns_per_message,ns_median_round,bytes_allocated_per_message,gen0_per_1000,gen1_per_1000,gen2_per_1000,cpu_ns_median_round");
        foreach (Case c in cases)
        {
            Console.WriteLine(c.Report());
        }

        foreach (Case c in cases)
        {
            Console.WriteLine(c.Rounds());
        }

        if (cases.FirstOrDefault(c => !c.Correct) is Case failed)
        {
            Console.Error.WriteLine($"{failed.Name}: an output differed from stock's, or a call failed");
            return 1;
        }

        return 0;
    }

    // The per-message shapes of one 16-byte CBC message, and the bare bcrypt.dll steps.
    [SupportedOSPlatform("windows")]
    private static List<Case> ShapeCases(CipherBackend cng, KeptKey kept, Aes stockKept, CachedAes cachedKept) =>
        [
            new("NewInstance: stock", () => Message(Aes.Create(), dispose: true)),
            new("NewInstance: CachedAes as selected", () => Message(new CachedAes(), dispose: true)),
            new("NewInstance: CachedAes on CNG's own CBC", () => Message(new CachedAes(cng), dispose: true)),
            new("NeverDisposed: stock", () => Message(Aes.Create(), dispose: false)),
            new("NeverDisposed: CachedAes on CNG's own CBC", () => Message(new CachedAes(cng), dispose: false)),
            new("NewKey: stock", () => Message(stockKept, dispose: false)),
            new("NewKey: CachedAes on CNG's own CBC", () => Message(cachedKept, dispose: false)),
            new("LearnSample: stock", () => LearnSample(Aes.Create())),
            new("LearnSample: CachedAes on CNG's own CBC", () => LearnSample(new CachedAes(cng))),
            new("bcrypt: one ECB call on a kept key (16 B)", kept.EncryptBlock),
            new("bcrypt: CBC key made in an object CNG allocates, one call (32 B), destroyed", KeptKey.OneShotCbc),
            new("bcrypt: a key object buffer allocated, zeroed, freed", kept.KeyObjectBuffer),
            new("bcrypt: re-key, the new key in an object CNG allocates", kept.RekeyCngObject),
            new("bcrypt: re-key, the new key in the handle's own buffer", kept.RekeyOwnBuffer),
        ];

    // One message under the next key: returns whether the output is stock's.
    private static bool Message(Aes aes, bool dispose)
    {
        try
        {
            int index = s_next++ & (KeyCount - 1);
            aes.SetKey(s_keys[index]);
            int written = aes.EncryptCbc(s_plaintext, s_iv, s_destination);
            return s_destination.AsSpan(0, written).SequenceEqual(s_expected[index]);
        }
        finally
        {
            if (dispose)
            {
                aes.Dispose();
            }
        }
    }

    // Microsoft Learn's sample: a new instance, Key, IV, CreateEncryptor, one TransformFinalBlock; the transform is dropped.
    private static bool LearnSample(Aes aes)
    {
        using (aes)
        {
            int index = s_next++ & (KeyCount - 1);
            aes.Key = s_keys[index];
            aes.IV = s_iv;
            ICryptoTransform encryptor = aes.CreateEncryptor();
            return encryptor.TransformFinalBlock(s_plaintext, 0, s_plaintext.Length).AsSpan().SequenceEqual(s_expected[index]);
        }
    }

    private static byte[] StockCbc(byte[] key)
    {
        using var aes = Aes.Create();
        aes.Key = key;
        return aes.EncryptCbc(s_plaintext, s_iv);
    }

    /// <summary>
    /// One case: its rounds' times and allocations, and whether every message was right. A round runs MESSAGES ÷
    /// <paramref name="divisor"/> messages (a slow client call takes a smaller share, so that every round is short).
    /// </summary>
    internal sealed class Case(string name, Func<bool> message, int divisor = 1)
    {
        private readonly List<double> _nanoseconds = [];
        private readonly List<double> _cpuNanoseconds = [];
        private readonly long[] _collections = new long[3];
        private long _allocated;
        private long _measured;

        public string Name { get; } = name;

        public bool Correct { get; private set; } = true;

        public void Warm()
        {
            for (int i = 0; i < 20_000 / divisor; i++)
            {
                Correct &= message();
            }
        }

        public void Round(int messages)
        {
            Settle();
            messages = Math.Max(1, messages / divisor);
            bool correct = true;
            long before = GC.GetAllocatedBytesForCurrentThread();
            int[] collections = [GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2)];
            using Process process = Process.GetCurrentProcess();
            TimeSpan cpu = process.TotalProcessorTime;
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < messages; i++)
            {
                correct &= message();
            }

            _nanoseconds.Add(Stopwatch.GetElapsedTime(start).TotalNanoseconds / messages);
            process.Refresh();
            _cpuNanoseconds.Add((process.TotalProcessorTime - cpu).TotalNanoseconds / messages);
            _allocated = (GC.GetAllocatedBytesForCurrentThread() - before) / messages;
            for (int generation = 0; generation < 3; generation++)
            {
                _collections[generation] += GC.CollectionCount(generation) - collections[generation];
            }

            _measured += messages;
            Correct &= correct;
        }

        /// <summary>Each round's time in order, on a comment line: whether a case slows down as its rounds go on.</summary>
        public string Rounds() =>
            string.Create(CultureInfo.InvariantCulture, $"# rounds of {Name}: {string.Join(" ", _nanoseconds.Select(n => n.ToString("F0", CultureInfo.InvariantCulture)))}");

        // Before each round, untimed (CACHEDAES_WINE_PROBE_SETTLE): "collect" (the default) collects the heap and waits for
        // the finalizers, so that a round starts without another case's garbage; "none" does nothing. A dropped CachedAes
        // key's sweep is queued by a collection and runs on the thread pool, so some of the case before may still overlap
        // a round; "sweep" also sweeps at once, which takes that work out of the rounds, the case's own included.
        private static void Settle()
        {
            if (s_settle == "none")
            {
                return;
            }

            GC.Collect();
            GC.WaitForPendingFinalizers();
            if (s_settle == "sweep")
            {
                _ = Ownership.Reclaimer.SweepNow();
                GC.Collect();
            }
        }

        public string Report()
        {
            double[] sorted = [.. _nanoseconds.Order()];
            double[] cpu = [.. _cpuNanoseconds.Order()];
            double per1000(long count) => count * 1000.0 / _measured;
            return string.Create(CultureInfo.InvariantCulture,
                $"{Name},{sorted[0]:F0},{sorted[sorted.Length / 2]:F0},{_allocated},{per1000(_collections[0]):F3},{per1000(_collections[1]):F3},{per1000(_collections[2]):F3},{cpu[cpu.Length / 2]:F0}");
        }
    }

    /// <summary>Bare <c>bcrypt.dll</c> calls through CachedAes's own declarations: the native floor of each step.</summary>
    [SupportedOSPlatform("windows")]
    private sealed unsafe class KeptKey : IDisposable
    {
        private readonly CngCipher _ecb = Unkeyed(0);
        private readonly int _keyObjectLength;
        private readonly CngCipher _rekeyedInCngObjects;
        private readonly CngCipher _rekeyedInOwnBuffer;

        public KeptKey()
        {
            if (CngApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, s_keys[0], _ecb) != 0
                || CngApi.Instance.GetObjectLength(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, out _keyObjectLength) != 0)
            {
                throw new CryptographicException("bcrypt.dll did not make an ECB key or say its object length");
            }

            // Two ECB keys that are re-keyed over and over: one with no object length (every key in an object CNG
            // allocates), one with it (from its first re-key on, every key in the handle's own buffer).
            _rekeyedInCngObjects = Unkeyed(0);
            _rekeyedInOwnBuffer = Unkeyed(_keyObjectLength);
            if (CngApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, s_keys[1], _rekeyedInCngObjects) != 0
                || CngApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, s_keys[2], _rekeyedInOwnBuffer) != 0)
            {
                throw new CryptographicException("bcrypt.dll did not make the keys to re-key");
            }
        }

        public bool EncryptBlock() =>
            CngApi.Instance.Encrypt(_ecb.Handle, s_plaintext, default, s_destination.AsSpan(0, 16), out int written) == 0 && written == 16;

        public static bool OneShotCbc()
        {
            Span<byte> iv = stackalloc byte[16];
            s_iv.CopyTo(iv);
            using var key = new CngCipher(CngApi.Instance, BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, 0, BlockCipherMode.Cbc, encrypting: true);
            return CngApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, s_keys[s_next++ & (KeyCount - 1)], key) == 0
                && CngApi.Instance.Encrypt(key.Handle, s_destination, iv, s_destination, out int written) == 0 && written == 32;
        }

        public bool KeyObjectBuffer()
        {
            void* buffer = NativeMemory.AllocZeroed((nuint)_keyObjectLength);
            CryptographicOperations.ZeroMemory(new Span<byte>(buffer, _keyObjectLength));
            NativeMemory.Free(buffer);
            return true;
        }

        public bool RekeyCngObject() => Rekey(_rekeyedInCngObjects);

        public bool RekeyOwnBuffer() => Rekey(_rekeyedInOwnBuffer) && _rekeyedInOwnBuffer.KeyObject != 0;

        private static bool Rekey(CngCipher key) =>
            key.Rekey(s_keys[s_next++ & (KeyCount - 1)], out _) == 0
            && CngApi.Instance.Encrypt(key.Handle, s_plaintext, default, s_destination.AsSpan(0, 16), out int written) == 0 && written == 16;

        // An ECB key with no key yet, re-keyed (if ever) on the ECB pseudo-handle.
        private static CngCipher Unkeyed(int rekeyObjectLength) =>
            new(CngApi.Instance, BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, rekeyObjectLength, BlockCipherMode.Ecb, encrypting: true);

        public void Dispose()
        {
            _ecb.Dispose();
            _rekeyedInCngObjects.Dispose();
            _rekeyedInOwnBuffer.Dispose();
        }
    }
}
