using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Security.Cryptography;

namespace CachedCryptography.Arm64Probe;

/// <summary>
/// Run by scripts/arm64-qemu.sh on x64 and on linux-arm64 under qemu-user: prints the architecture, which AES
/// intrinsics .NET reports, <see cref="CachedAesDiagnostics.Describe"/>, the NIST CAVP AES known answers through the
/// public API (whatever backend the process selected), and one checksum over a fixed set of messages (every length from
/// 1 to 67 blocks, three key sizes, ECB and CBC both ways, CBC in place, PKCS7, RFC 5649) that every backend on every
/// architecture must reproduce. Exits non-zero on any mismatch.
/// </summary>
internal static class Program
{
    private const ulong FnvOffset = 14695981039346656037UL;
    private const ulong FnvPrime = 1099511628211UL;

    public static int Main(string[] args)
    {
        Console.WriteLine($"Architecture={RuntimeInformation.ProcessArchitecture}");
        Console.WriteLine($"Intrinsics=X86.Aes {System.Runtime.Intrinsics.X86.Aes.IsSupported}, Arm.Aes {System.Runtime.Intrinsics.Arm.Aes.IsSupported}");
        Console.WriteLine(CachedAesDiagnostics.Describe());

        int failed = KnownAnswers(Path.Combine(args[0], "nist-cavp-aes-kat"), out int passed);
        Console.WriteLine($"CAVP: {passed} passed, {failed} failed");

        ulong checksum = Checksum(ref failed);
        Console.WriteLine($"Checksum={checksum:x16}");
        return failed == 0 ? 0 : 1;
    }

    // Every record of every ECB/CBC .rsp file, one instance per record, padding off.
    private static int KnownAnswers(string folder, out int passed)
    {
        int failed = 0;
        passed = 0;
        foreach (string file in Directory.GetFiles(folder, "*.rsp").Order(StringComparer.Ordinal))
        {
            bool cbc = Path.GetFileName(file).StartsWith("CBC", StringComparison.Ordinal);
            bool encrypt = true;
            var fields = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (string raw in File.ReadLines(file).Append(""))
            {
                string line = raw.Trim();
                if (line is "[ENCRYPT]" or "[DECRYPT]")
                {
                    encrypt = line == "[ENCRYPT]";
                }
                else if (line.Length > 0 && !line.StartsWith('#') && line.IndexOf('=', StringComparison.Ordinal) is int eq and > 0)
                {
                    fields[line[..eq].Trim()] = line[(eq + 1)..].Trim();
                }
                else if (line.Length == 0 && fields.TryGetValue("KEY", out string? keyHex))
                {
                    byte[] plaintext = Convert.FromHexString(fields["PLAINTEXT"]);
                    byte[] ciphertext = Convert.FromHexString(fields["CIPHERTEXT"]);
                    using var aes = new CachedAes { Key = Convert.FromHexString(keyHex) };
                    byte[] iv = cbc ? Convert.FromHexString(fields["IV"]) : [];
                    byte[] result = (encrypt, cbc) switch
                    {
                        (true, true) => aes.EncryptCbc(plaintext, iv, PaddingMode.None),
                        (true, false) => aes.EncryptEcb(plaintext, PaddingMode.None),
                        (false, true) => aes.DecryptCbc(ciphertext, iv, PaddingMode.None),
                        (false, false) => aes.DecryptEcb(ciphertext, PaddingMode.None),
                    };

                    if (result.AsSpan().SequenceEqual(encrypt ? ciphertext : plaintext))
                    {
                        passed++;
                    }
                    else
                    {
                        failed++;
                        Console.WriteLine($"MISMATCH {Path.GetFileName(file)} {(encrypt ? "ENCRYPT" : "DECRYPT")} COUNT={fields["COUNT"]}");
                    }

                    fields.Clear();
                }
            }
        }

        return failed;
    }

    private static ulong Checksum(ref int failed)
    {
        ulong hash = FnvOffset;
        var random = new Random(27);
        foreach (int keyBytes in (int[])[16, 24, 32])
        {
            byte[] key = new byte[keyBytes];
            byte[] iv = new byte[16];
            random.NextBytes(key);
            random.NextBytes(iv);
            using var aes = new CachedAes { Key = key };
            for (int blocks = 1; blocks <= 67; blocks++)
            {
                byte[] data = new byte[blocks * 16];
                random.NextBytes(data);
                hash = Add(hash, aes.EncryptEcb(data, PaddingMode.None));
                hash = Add(hash, aes.DecryptEcb(data, PaddingMode.None));
                hash = Add(hash, aes.EncryptCbc(data, iv, PaddingMode.None));
                hash = Add(hash, aes.DecryptCbc(data, iv, PaddingMode.None));
                hash = Add(hash, aes.EncryptCbc(data, iv, PaddingMode.PKCS7));

                byte[] inPlace = (byte[])data.Clone();
                aes.DecryptCbc(inPlace, iv, inPlace, PaddingMode.None);
                hash = Add(hash, inPlace);
            }

            byte[] wrapped = aes.EncryptKeyWrapPadded(key);
            hash = Add(hash, wrapped);
            if (!aes.DecryptKeyWrapPadded(wrapped).AsSpan().SequenceEqual(key))
            {
                Console.WriteLine($"MISMATCH RFC 5649 round trip, {keyBytes * 8}-bit key");
                failed++;
            }
        }

        return hash;
    }

    // FNV-1a: a plain checksum (no hash from the crypto library, which the probe does not want to depend on).
    private static ulong Add(ulong hash, byte[] bytes)
    {
        foreach (byte b in bytes)
        {
            hash = (hash ^ b) * FnvPrime;
        }

        return hash;
    }
}
