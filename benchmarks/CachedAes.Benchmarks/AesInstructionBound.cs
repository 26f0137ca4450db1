using System;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using BenchmarkDotNet.Attributes;
using X86Aes = System.Runtime.Intrinsics.X86.Aes;

namespace CachedCryptography.Benchmarks;

/// <summary>
/// What the processor's AES instructions allow at best, with nothing around them: 64 AES-256 block encryptions (14 round
/// instructions each, round keys in registers) either each waiting for the one before (the latency bound: CBC
/// encryption, a key wrap's steps, a 16-byte message's blocks) or eight at a time (the issue-rate bound: ECB and CBC
/// decryption of long messages). Divide by 64 for one block. x64 with AES-NI only; the numbers bound every AES-256
/// implementation on the machine, OpenSSL's included. Neither in the quick mode nor in <c>--full</c>: run it by name
/// (<c>--filter '*AesInstructionBound*'</c>).
/// </summary>
public class AesInstructionBound
{
    private const int Blocks = 64;
    private readonly Vector128<byte>[] _roundKeys = new Vector128<byte>[15];

    /// <summary>Arbitrary round keys (the instructions' timing does not depend on the values).</summary>
    [GlobalSetup]
    public void Setup()
    {
        if (!X86Aes.IsSupported)
        {
            throw new PlatformNotSupportedException("AesInstructionBound needs AES-NI.");
        }

        for (int i = 0; i < _roundKeys.Length; i++)
        {
            _roundKeys[i] = Vector128.Create((byte)((i * 29) + 3));
        }
    }

    /// <summary>64 blocks, each one's input the previous one's output.</summary>
    [Benchmark(OperationsPerInvoke = Blocks)]
    public Vector128<byte> Dependent() => DependentBlocks(_roundKeys, Blocks);

    /// <summary>64 blocks as 8 rounds of 8 independent blocks.</summary>
    [Benchmark(OperationsPerInvoke = Blocks)]
    public Vector128<byte> EightAtATime() => IndependentBlocks(_roundKeys, Blocks / 8);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Vector128<byte> DependentBlocks(Vector128<byte>[] k, int count)
    {
        Vector128<byte> k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7];
        Vector128<byte> k8 = k[8], k9 = k[9], k10 = k[10], k11 = k[11], k12 = k[12], k13 = k[13], k14 = k[14];
        Vector128<byte> s = Vector128<byte>.Zero;
        for (int i = 0; i < count; i++)
        {
            s ^= k0;
            s = X86Aes.Encrypt(s, k1);
            s = X86Aes.Encrypt(s, k2);
            s = X86Aes.Encrypt(s, k3);
            s = X86Aes.Encrypt(s, k4);
            s = X86Aes.Encrypt(s, k5);
            s = X86Aes.Encrypt(s, k6);
            s = X86Aes.Encrypt(s, k7);
            s = X86Aes.Encrypt(s, k8);
            s = X86Aes.Encrypt(s, k9);
            s = X86Aes.Encrypt(s, k10);
            s = X86Aes.Encrypt(s, k11);
            s = X86Aes.Encrypt(s, k12);
            s = X86Aes.Encrypt(s, k13);
            s = X86Aes.EncryptLast(s, k14);
        }

        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Vector128<byte> IndependentBlocks(Vector128<byte>[] k, int rounds)
    {
        Vector128<byte> a = Vector128.Create((byte)0), b = Vector128.Create((byte)1), c = Vector128.Create((byte)2);
        Vector128<byte> d = Vector128.Create((byte)3), e = Vector128.Create((byte)4), f = Vector128.Create((byte)5);
        Vector128<byte> g = Vector128.Create((byte)6), h = Vector128.Create((byte)7);
        for (int i = 0; i < rounds; i++)
        {
            Vector128<byte> first = k[0];
            a ^= first;
            b ^= first;
            c ^= first;
            d ^= first;
            e ^= first;
            f ^= first;
            g ^= first;
            h ^= first;
            for (int r = 1; r < 14; r++)
            {
                Vector128<byte> key = k[r];
                a = X86Aes.Encrypt(a, key);
                b = X86Aes.Encrypt(b, key);
                c = X86Aes.Encrypt(c, key);
                d = X86Aes.Encrypt(d, key);
                e = X86Aes.Encrypt(e, key);
                f = X86Aes.Encrypt(f, key);
                g = X86Aes.Encrypt(g, key);
                h = X86Aes.Encrypt(h, key);
            }

            Vector128<byte> last = k[14];
            a = X86Aes.EncryptLast(a, last);
            b = X86Aes.EncryptLast(b, last);
            c = X86Aes.EncryptLast(c, last);
            d = X86Aes.EncryptLast(d, last);
            e = X86Aes.EncryptLast(e, last);
            f = X86Aes.EncryptLast(f, last);
            g = X86Aes.EncryptLast(g, last);
            h = X86Aes.EncryptLast(h, last);
        }

        return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
    }
}
