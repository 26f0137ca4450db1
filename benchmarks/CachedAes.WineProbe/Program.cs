using System;
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
/// <c>CachedAes.WineProbe [MESSAGES]</c>: the time of one 16-byte CBC message under a new key (a new instance, its key,
/// one <c>EncryptCbc</c>, <c>Dispose</c>: the per-message shape), taken apart on CNG. Each case runs MESSAGES times
/// (default 200,000) after a warm-up, five rounds, and prints its fastest round in ns per message with the bytes it
/// allocated per message. Every CachedAes output is compared with stock's for the same key; a mismatch ends the run
/// with exit code 1.
/// </summary>
internal static class Program
{
    private const int KeyCount = 64;

    private static readonly byte[][] s_keys = Enumerable.Range(0, KeyCount)
        .Select(k => Enumerable.Range(0, 16).Select(b => (byte)(k * 31 + b * 7 + 1)).ToArray()).ToArray();

    private static readonly byte[] s_iv = Enumerable.Range(0x40, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[] s_plaintext = Enumerable.Range(0x10, 16).Select(b => (byte)b).ToArray();
    private static readonly byte[] s_destination = new byte[32];
    private static readonly byte[][] s_expected = s_keys.Select(StockCbc).ToArray();

    private static int s_next;

    public static int Main(string[] args)
    {
        if (!OperatingSystem.IsWindows())
        {
            Console.Error.WriteLine("CachedAes.WineProbe measures CNG: run it on Windows or under Wine (scripts/wine-probe.sh).");
            return 2;
        }

        int messages = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 200_000;
        return Run(messages);
    }

    [SupportedOSPlatform("windows")]
    private static int Run(int messages)
    {
        // CNG with its own CBC, whatever the self-test said of it: each instance below makes one call, on a key handle
        // made for that call, which is right even where reusing a CBC handle is not (Wine 8.0).
        if (!CngBackend.TryCreate(BCryptApi.Instance, OperatingSystem.IsWindowsVersionAtLeast(10), out CipherBackend? cng, out string? reason))
        {
            Console.Error.WriteLine($"no CNG backend: {reason}");
            return 2;
        }

        Console.WriteLine($"# .NET {Environment.Version}, {RuntimeInformation.OSDescription}, CachedAes backend: "
            + $"{CachedAesDiagnostics.Backend} (ECB {CachedAesDiagnostics.Ecb}, CBC {CachedAesDiagnostics.Cbc}), {messages} messages a round");
        Console.WriteLine("case,ns_per_message,bytes_allocated_per_message");
        using var keptKey = new KeptKey();
        bool same = Measure("stock: Aes.Create, SetKey, EncryptCbc", messages, static () => Message(Aes.Create()))
            & Measure("CachedAes as selected", messages, static () => Message(new CachedAes()))
            & Measure("CachedAes on CNG's own CBC", messages, () => Message(new CachedAes(cng)));
        bool called = Measure("bcrypt: one ECB call on a kept key (16 B)", messages, keptKey.EncryptBlock)
            & Measure("bcrypt: CBC key made, one call (32 B), destroyed", messages, KeptKey.OneShotCbc)
            & Measure("a key object buffer: allocated, zeroed, freed", messages, keptKey.KeyObjectBuffer);
        if (!same || !called)
        {
            Console.Error.WriteLine(!same ? "a CachedAes output differed from stock's" : "a bcrypt.dll call failed");
            return 1;
        }

        return 0;
    }

    // One message under the next key: returns whether the output is stock's.
    private static bool Message(Aes aes)
    {
        using (aes)
        {
            int index = s_next++ & (KeyCount - 1);
            aes.SetKey(s_keys[index]);
            int written = aes.EncryptCbc(s_plaintext, s_iv, s_destination);
            return s_destination.AsSpan(0, written).SequenceEqual(s_expected[index]);
        }
    }

    private static bool Measure(string name, int messages, Func<bool> message)
    {
        bool same = true;
        for (int i = 0; i < 20_000; i++)
        {
            same &= message();
        }

        double best = double.MaxValue;
        long allocated = 0;
        for (int round = 0; round < 5; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < messages; i++)
            {
                same &= message();
            }

            best = Math.Min(best, Stopwatch.GetElapsedTime(start).TotalNanoseconds / messages);
            allocated = (GC.GetAllocatedBytesForCurrentThread() - before) / messages;
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name},{best:F0},{allocated}"));
        return same;
    }

    private static byte[] StockCbc(byte[] key)
    {
        using var aes = Aes.Create();
        aes.Key = key;
        return aes.EncryptCbc(s_plaintext, s_iv);
    }

    /// <summary>Bare <c>bcrypt.dll</c> calls through CachedAes's own declarations: the native floor of each step.</summary>
    [SupportedOSPlatform("windows")]
    private sealed unsafe class KeptKey : IDisposable
    {
        private readonly BCryptKey _ecb = new(BCryptApi.Instance);
        private readonly int _keyObjectLength;

        public KeptKey()
        {
            if (BCryptApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, s_keys[0], _ecb) != 0
                || BCryptApi.Instance.GetObjectLength(BCrypt.BCRYPT_AES_ECB_ALG_HANDLE, out _keyObjectLength) != 0)
            {
                throw new CryptographicException("bcrypt.dll did not make an ECB key or say its object length");
            }
        }

        public bool EncryptBlock() =>
            BCryptApi.Instance.Encrypt(_ecb.Handle, s_plaintext, default, s_destination.AsSpan(0, 16), out int written) == 0 && written == 16;

        public static bool OneShotCbc()
        {
            Span<byte> iv = stackalloc byte[16];
            s_iv.CopyTo(iv);
            using var key = new BCryptKey(BCryptApi.Instance);
            return BCryptApi.Instance.GenerateSymmetricKey(BCrypt.BCRYPT_AES_CBC_ALG_HANDLE, s_keys[s_next++ & (KeyCount - 1)], key) == 0
                && BCryptApi.Instance.Encrypt(key.Handle, s_destination, iv, s_destination, out int written) == 0 && written == 32;
        }

        public bool KeyObjectBuffer()
        {
            void* buffer = NativeMemory.AllocZeroed((nuint)_keyObjectLength);
            CryptographicOperations.ZeroMemory(new Span<byte>(buffer, _keyObjectLength));
            NativeMemory.Free(buffer);
            return true;
        }

        public void Dispose() => _ecb.Dispose();
    }
}
