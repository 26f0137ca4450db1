using System;
using System.Globalization;
using CachedCryptography.Core;

namespace CachedCryptography.Interop;

/// <summary>
/// The known-answer self-test a backend must pass, once per process, before <see cref="CachedAes"/> uses it: ECB and
/// CBC in both directions on handles that are reused the way the cache reuses them, and RFC 5649 key wrap over the
/// ECB handles. Platform-neutral: it drives handles only through <see cref="CipherBackend.Create"/> and the three
/// seam helpers at the end of this file.
/// </summary>
/// <remarks>
/// <para>The CBC check includes the property the cache depends on and that a platform can silently break: on one
/// handle, two messages that start at the same IV give the same output, and a message at a different IV restarts the
/// chain there. Wine 8.0's <c>bcrypt</c> breaks the first half (it keeps the chaining value in the key and restarts
/// only when the IV differs from the previous call's), with a success status.</para>
/// <para>Every expected value is a published example, copied from the document cited next to it, never computed
/// here. The self-test creates 14 handles and runs about 40 AES blocks.</para>
/// </remarks>
internal static class BackendSelfTest
{
    private const int BlockSize = 16;

    // NIST SP 800-38A (2001), Appendix F.1 (ECB) and F.2 (CBC): one four-block plaintext under three keys.
    internal static readonly byte[] Sp80038aPlaintext = Convert.FromHexString(
        "6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51" +
        "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710");

    // SP 800-38A F.2: the IV of every CBC example.
    internal static readonly byte[] Sp80038aIv = Convert.FromHexString("000102030405060708090a0b0c0d0e0f");

    /// <summary>One SP 800-38A example key with its ECB (F.1.1/F.1.3/F.1.5) and CBC (F.2.1/F.2.3/F.2.5) ciphertexts.</summary>
    internal sealed record Sp80038aExample(string Name, byte[] Key, byte[] EcbCiphertext, byte[] CbcCiphertext)
    {
        // Step names for failure messages, made once (plain concatenation keeps the success path cheap to start).
        public string EcbEncryptStep { get; } = "ECB encrypt, " + Name;

        public string EcbDecryptStep { get; } = "ECB decrypt, " + Name;

        public string CbcEncryptStep { get; } = "CBC encrypt, " + Name;

        public string CbcDecryptStep { get; } = "CBC decrypt, " + Name;
    }

    internal static readonly Sp80038aExample[] Sp80038aExamples =
    [
        new(
            "AES-128 (SP 800-38A F.1.1/F.2.1)",
            Convert.FromHexString("2b7e151628aed2a6abf7158809cf4f3c"),
            Convert.FromHexString(
                "3ad77bb40d7a3660a89ecaf32466ef97" + "f5d3d58503b9699de785895a96fdbaaf" +
                "43b1cd7f598ece23881b00e3ed030688" + "7b0c785e27e8ad3f8223207104725dd4"),
            Convert.FromHexString(
                "7649abac8119b246cee98e9b12e9197d" + "5086cb9b507219ee95db113a917678b2" +
                "73bed6b8e3c1743b7116e69e22229516" + "3ff1caa1681fac09120eca307586e1a7")),
        new(
            "AES-192 (SP 800-38A F.1.3/F.2.3)",
            Convert.FromHexString("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"),
            Convert.FromHexString(
                "bd334f1d6e45f25ff712a214571fa5cc" + "974104846d0ad3ad7734ecb3ecee4eef" +
                "ef7afd2270e2e60adce0ba2face6444e" + "9a4b41ba738d6c72fb16691603c18e0e"),
            Convert.FromHexString(
                "4f021db243bc633d7178183a9fa071e8" + "b4d9ada9ad7dedf4e5e738763f69145a" +
                "571b242012fb7ae07fa9baac3df102e0" + "08b0e27988598881d920a9e64f5615cd")),
        new(
            "AES-256 (SP 800-38A F.1.5/F.2.5)",
            Convert.FromHexString("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"),
            Convert.FromHexString(
                "f3eed1bdb5d2a03c064b5a7e3db181f8" + "591ccb10d410ed26dc5ba74a31362870" +
                "b6ed21b99ca6f4f9f153e7b1beafed1d" + "23304b7a39f9f3ff067d8d8f9e24ecc7"),
            Convert.FromHexString(
                "f58c4c04d6e5f1ba779eabfb5f7bfbd6" + "9cfc4e967edb808d679f777bc6702c7d" +
                "39f23369a9d9bacfa530e26304231461" + "b2eb05e2c39be9fcda6c19078c6a9d1b")),
    ];

    /// <summary>RFC 5649, Section 6: the two examples (192-bit KEK; a 20-byte key and a 7-byte key).</summary>
    internal static readonly byte[] Rfc5649Kek = Convert.FromHexString("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8");

    internal static readonly (byte[] Key, byte[] Wrapped)[] Rfc5649Examples =
    [
        (Convert.FromHexString("c37b7e6492584340bed12207808941155068f738"),
         Convert.FromHexString("138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a")),
        (Convert.FromHexString("466f7250617369"),
         Convert.FromHexString("afbeb0f07dfbf5419200f2ccb50bb24f")),
    ];

    /// <summary>The verdicts: null for a mode that passed, else what went wrong (for diagnostics).</summary>
    internal readonly record struct Result(string? EcbFailure, string? CbcFailure);

    /// <summary>Runs every check against <paramref name="backend"/>. Never throws: a failure is a verdict.</summary>
    public static Result Run(CipherBackend backend) => new(CheckEcbAndKeyWrap(backend), CheckCbc(backend));

    /// <summary>ECB known answers in both directions on reused handles, then RFC 5649 over ECB handles. Null if all pass.</summary>
    internal static string? CheckEcbAndKeyWrap(CipherBackend backend)
    {
        string step = "ECB";
        try
        {
            return CheckEcbAndKeyWrap(backend, ref step);
        }
        catch (Exception e)
        {
            // Any exception from a backend that should have worked is a failure of that backend, whatever its type.
            return Threw(step, e);
        }
    }

    // The loops are kept out of the exception handler's method: the JIT compiles a method with loops inside a handler
    // fully optimised at once instead of quickly, which cost more than the whole check on a process's first use.
    private static string? CheckEcbAndKeyWrap(CipherBackend backend, ref string step)
    {
        {
            // An array, not stackalloc, for the same reason (a method with stackalloc and loops is fully optimised at once).
            Span<byte> output = new byte[4 * BlockSize];
            foreach (Sp80038aExample example in Sp80038aExamples)
            {
                step = example.EcbEncryptStep;
                using (Owned encryptor = Open(backend, BlockCipherMode.Ecb, encrypting: true, example.Key))
                {
                    // The whole message, then the same message again (a reused handle), then one block alone.
                    Ecb(encryptor, Sp80038aPlaintext, output);
                    if (Differs(output, example.EcbCiphertext))
                    {
                        return Failed(step, "a four-block message gave the wrong ciphertext");
                    }

                    output.Clear();
                    Ecb(encryptor, Sp80038aPlaintext, output);
                    if (Differs(output, example.EcbCiphertext))
                    {
                        return Failed(step, "the same message again on the same handle gave a different ciphertext");
                    }

                    Ecb(encryptor, Sp80038aPlaintext.AsSpan(2 * BlockSize, BlockSize), output[..BlockSize]);
                    if (Differs(output[..BlockSize], example.EcbCiphertext.AsSpan(2 * BlockSize, BlockSize)))
                    {
                        return Failed(step, "a single block on the reused handle gave the wrong ciphertext");
                    }
                }

                step = example.EcbDecryptStep;
                using (Owned decryptor = Open(backend, BlockCipherMode.Ecb, encrypting: false, example.Key))
                {
                    Ecb(decryptor, example.EcbCiphertext, output);
                    if (Differs(output, Sp80038aPlaintext))
                    {
                        return Failed(step, "a four-block message gave the wrong plaintext");
                    }

                    // In place, as the one-shots may call it.
                    example.EcbCiphertext.CopyTo(output);
                    Ecb(decryptor, output, output);
                    if (Differs(output, Sp80038aPlaintext))
                    {
                        return Failed(step, "the same message again, in place, on the same handle gave a different plaintext");
                    }
                }
            }

            step = "RFC 5649 key wrap (Section 6 examples)";
            using (Owned wrapper = Open(backend, BlockCipherMode.Ecb, encrypting: true, Rfc5649Kek))
            using (Owned unwrapper = Open(backend, BlockCipherMode.Ecb, encrypting: false, Rfc5649Kek))
            {
                foreach ((byte[] key, byte[] wrapped) in Rfc5649Examples)
                {
                    Span<byte> result = output[..wrapped.Length];
                    WrapPadded(wrapper, key, result);
                    if (Differs(result, wrapped))
                    {
                        return Failed(step, $"wrapping the {key.Length}-byte key gave the wrong output");
                    }

                    int length = UnwrapPadded(unwrapper, wrapped, output[..(wrapped.Length - 8)]);
                    if (Differs(output[..length], key))
                    {
                        return Failed(step, $"unwrapping the {key.Length}-byte key gave the wrong key");
                    }
                }
            }

            return null;
        }
    }

    /// <summary>
    /// CBC known answers in both directions on one reused handle per direction and key: a message at the IV; the same
    /// message at the same IV again (it must restart, not continue); the last three blocks at the first ciphertext
    /// block as IV (a different IV restarts the chain: SP 800-38A's own chain gives the expected output); and one
    /// block back at the first IV. Null if all pass.
    /// </summary>
    internal static string? CheckCbc(CipherBackend backend)
    {
        string step = "CBC";
        try
        {
            return CheckCbc(backend, ref step);
        }
        catch (Exception e)
        {
            return Threw(step, e);
        }
    }

    private static string? CheckCbc(CipherBackend backend, ref string step)
    {
        {
            // An array, not stackalloc, for the same reason (a method with stackalloc and loops is fully optimised at once).
            Span<byte> output = new byte[4 * BlockSize];
            foreach (Sp80038aExample example in Sp80038aExamples)
            {
                foreach (bool encrypting in (ReadOnlySpan<bool>)[true, false])
                {
                    step = encrypting ? example.CbcEncryptStep : example.CbcDecryptStep;
                    ReadOnlySpan<byte> input = encrypting ? Sp80038aPlaintext : example.CbcCiphertext;
                    ReadOnlySpan<byte> expected = encrypting ? example.CbcCiphertext : Sp80038aPlaintext;
                    ReadOnlySpan<byte> secondBlockIv = example.CbcCiphertext.AsSpan(0, BlockSize);

                    using Owned handle = Open(backend, BlockCipherMode.Cbc, encrypting, example.Key);
                    CbcMessage(handle, Sp80038aIv, input, output);
                    if (Differs(output, expected))
                    {
                        return Failed(step, "the first message gave the wrong output");
                    }

                    output.Clear();
                    CbcMessage(handle, Sp80038aIv, input, output);
                    if (Differs(output, expected))
                    {
                        return Failed(step, "a second message with the same IV on the same handle gave a different output (the handle did not restart at the IV)");
                    }

                    input[BlockSize..].CopyTo(output);
                    CbcMessage(handle, secondBlockIv, output[..(3 * BlockSize)], output[..(3 * BlockSize)]);
                    if (Differs(output[..(3 * BlockSize)], expected[BlockSize..]))
                    {
                        return Failed(step, "a message at a different IV (in place) did not restart the chain at that IV");
                    }

                    CbcMessage(handle, Sp80038aIv, input[..BlockSize], output[..BlockSize]);
                    if (Differs(output[..BlockSize], expected[..BlockSize]))
                    {
                        return Failed(step, "a one-block message back at the first IV gave the wrong output");
                    }
                }
            }

            return null;
        }
    }

    private static bool Differs(ReadOnlySpan<byte> actual, ReadOnlySpan<byte> expected) => !actual.SequenceEqual(expected);

    private static string Failed(string step, string what) => $"{step}: {what}.";

    private static string Threw(string step, Exception e) =>
        string.Create(CultureInfo.InvariantCulture, $"{step}: {e.GetType().Name}: {e.Message}");

    // ---- The only code that touches the seam: each call reports a failure by return value, which becomes the handle's
    // ---- own exception here (and so a verdict with its message).

    private static Owned Open(CipherBackend backend, BlockCipherMode mode, bool encrypting, ReadOnlySpan<byte> key) =>
        new(backend.Create(mode, encrypting, key));

    private static void Ecb(Owned handle, ReadOnlySpan<byte> input, Span<byte> output) =>
        Run(handle.Handle, default, input, output);

    /// <summary>One whole CBC message starting at <paramref name="iv"/>.</summary>
    private static void CbcMessage(Owned handle, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output) =>
        Run(handle.Handle, iv, input, output);

    private static void Run(BlockCipher handle, ReadOnlySpan<byte> iv, ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (!handle.TryTransform(iv, input, output))
        {
            throw handle.CreateFailure();
        }
    }

    private static void WrapPadded(Owned ecbEncrypt, ReadOnlySpan<byte> key, Span<byte> wrapped) =>
        KeyWrap.WrapPadded(ecbEncrypt.Handle, key, wrapped);

    private static int UnwrapPadded(Owned ecbDecrypt, ReadOnlySpan<byte> wrapped, Span<byte> key) =>
        KeyWrap.UnwrapPadded(ecbDecrypt.Handle, wrapped, key);

    /// <summary>A handle the self-test made, released when the check is done.</summary>
    private readonly ref struct Owned
    {
        public Owned(BlockCipher handle) => Handle = handle;

        public BlockCipher Handle { get; }

        public void Dispose() => Handle.Release();
    }
}
