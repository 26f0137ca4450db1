using System;
using System.Globalization;
using CachedCryptography.Operations;
using CachedCryptography.Seam;
using static CachedCryptography.Selection.KnownAnswers;

namespace CachedCryptography.Selection;

/// <summary>
/// The known-answer self-test a backend must pass, once per process, before <see cref="CachedAes"/> uses it: ECB and
/// CBC in both directions on handles that are reused the way the cache reuses them, and RFC 5649 key wrap over the
/// ECB handles. Platform-neutral: it drives handles only through <see cref="CipherBackend.Create"/> and the seam
/// helpers at the end of this file.
/// </summary>
/// <remarks>
/// <para>The CBC check includes the property the cache depends on and that a platform can silently break: on one
/// handle, two messages that start at the same IV give the same output, and a message at a different IV restarts the
/// chain there. Wine 8.0's <c>bcrypt</c> breaks the first half (it keeps the chaining value in the key and restarts
/// only when the IV differs from the previous call's), with a success status.</para>
/// <para>Every handle that can be re-keyed in place (<see cref="BlockCipher.TryRekey"/>) is re-keyed once it has been
/// used, as a key change re-keys the handles a call used, and checked again under the new key: a CBC handle must start
/// the next message at its own IV whatever it chained from before, which is what a re-key that leaves the library's IV
/// as it was (a provider that does not restore it) breaks. A handle whose backend does not re-key is checked without.</para>
/// <para>The expected values are the published examples in <see cref="KnownAnswers"/>. The self-test creates 14 handles
/// and runs about 170 AES blocks.</para>
/// </remarks>
internal static class SelfTest
{
    private const int BlockSize = BlockCipher.BlockSize;

    // One family of checks: returns null when all pass, or what failed; `step` names the check under way.
    private delegate string? Checks(CipherBackend backend, ref string step);

    /// <summary>The verdicts: null for a mode that passed, else what went wrong (for diagnostics).</summary>
    internal readonly record struct Result(string? EcbFailure, string? CbcFailure);

    /// <summary>Runs every check against <paramref name="backend"/>. Never throws: a failure is a verdict.</summary>
    public static Result Run(CipherBackend backend) => new(CheckEcbAndKeyWrap(backend), CheckCbc(backend));

    /// <summary>
    /// ECB known answers in both directions on reused handles, each then re-keyed to FIPS 197's key of the same size and
    /// checked on its block; then RFC 5649 over ECB handles. Null if all pass.
    /// </summary>
    internal static string? CheckEcbAndKeyWrap(CipherBackend backend) => Guarded(backend, "ECB", s_ecbAndKeyWrap);

    /// <summary>
    /// CBC known answers in both directions on one reused handle per direction and key: a message at the IV; the same
    /// message at the same IV again (it must restart, not continue); the last three blocks at the first ciphertext
    /// block as IV (a different IV restarts the chain: SP 800-38A's own chain gives the expected output); one block
    /// back at the first IV; then, re-keyed to FIPS 197's key of the same size, that example's block as a one-block
    /// message at the zero IV, and re-keyed to the next example's key (another size), its whole message. Null if all pass.
    /// </summary>
    internal static string? CheckCbc(CipherBackend backend) => Guarded(backend, "CBC", s_cbc);

    private static readonly Checks s_ecbAndKeyWrap = EcbAndKeyWrapChecks;
    private static readonly Checks s_cbc = CbcChecks;

    // The checks run outside the exception handler's method: the JIT compiles a method with loops inside a handler fully
    // optimised at once instead of quickly, which would cost more than the whole check on a process's first use.
    private static string? Guarded(CipherBackend backend, string firstStep, Checks checks)
    {
        string step = firstStep;
        try
        {
            return checks(backend, ref step);
        }
        catch (Exception e)
        {
            // Any exception from a backend that should have worked is a failure of that backend, whatever its type.
            return string.Create(CultureInfo.InvariantCulture, $"{step}: {e.GetType().Name}: {e.Message}");
        }
    }

    private static string? EcbAndKeyWrapChecks(CipherBackend backend, ref string step)
    {
        // An array, not stackalloc: a method with stackalloc and loops is also compiled fully optimised at once.
        Span<byte> output = new byte[4 * BlockSize];
        for (int i = 0; i < Sp80038aExamples.Length; i++)
        {
            Sp80038aExample example = Sp80038aExamples[i];
            Fips197Example sameSize = Fips197Examples[i];
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

                // Re-keyed in place to another key of the same size, as a key change does.
                if (encryptor.Handle.TryRekey(sameSize.Key))
                {
                    Ecb(encryptor, Fips197Plaintext, output[..BlockSize]);
                    if (Differs(output[..BlockSize], sameSize.Ciphertext))
                    {
                        return Failed(step, $"after a re-key to {sameSize.Name}'s key the block gave the wrong ciphertext");
                    }
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

                if (decryptor.Handle.TryRekey(sameSize.Key))
                {
                    Ecb(decryptor, sameSize.Ciphertext, output[..BlockSize]);
                    if (Differs(output[..BlockSize], Fips197Plaintext))
                    {
                        return Failed(step, $"after a re-key to {sameSize.Name}'s key the block gave the wrong plaintext");
                    }
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

    private static string? CbcChecks(CipherBackend backend, ref string step)
    {
        // An array, not stackalloc: a method with stackalloc and loops is also compiled fully optimised at once.
        Span<byte> output = new byte[4 * BlockSize];
        ReadOnlySpan<byte> zeroIv = new byte[BlockSize];
        for (int i = 0; i < Sp80038aExamples.Length; i++)
        {
            Sp80038aExample example = Sp80038aExamples[i];
            Fips197Example sameSize = Fips197Examples[i];
            Sp80038aExample otherSize = Sp80038aExamples[(i + 1) % Sp80038aExamples.Length];
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

                // A key change re-keys a handle that has chained: the next message must start at its own IV under the new
                // key, whatever the handle chained from before (FIPS 197's block is a one-block message at the zero IV).
                if (!handle.Handle.TryRekey(sameSize.Key))
                {
                    continue;
                }

                CbcMessage(handle, zeroIv, encrypting ? Fips197Plaintext : sameSize.Ciphertext, output[..BlockSize]);
                if (Differs(output[..BlockSize], encrypting ? sameSize.Ciphertext : Fips197Plaintext))
                {
                    return Failed(step, $"after a re-key to {sameSize.Name}'s key (the same size) the first block was wrong (the message did not start at its IV)");
                }

                // Then to a key of another size (another cipher on OpenSSL): the other example's whole message at its IV.
                if (handle.Handle.TryRekey(otherSize.Key))
                {
                    CbcMessage(handle, Sp80038aIv, encrypting ? Sp80038aPlaintext : otherSize.CbcCiphertext, output);
                    if (Differs(output, encrypting ? otherSize.CbcCiphertext : Sp80038aPlaintext))
                    {
                        return Failed(step, $"after a re-key to {otherSize.Name}'s key (another size) the message was wrong");
                    }
                }
            }
        }

        return null;
    }

    private static bool Differs(ReadOnlySpan<byte> actual, ReadOnlySpan<byte> expected) => !actual.SequenceEqual(expected);

    private static string Failed(string step, string what) => $"{step}: {what}.";

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
