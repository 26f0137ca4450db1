using CachedCryptography.Operations;
using CachedCryptography.Tests.Infrastructure;
using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;

namespace CachedCryptography.Tests;

/// <summary>
/// Known-answer tests from the vector files in tests/vectors/, run against three implementations: the
/// platform-neutral <see cref="KeyWrap"/> core over a stock ECB reference cipher, the public API of
/// <see cref="CachedAes"/>, and stock <see cref="Aes.Create()"/> (which validates the harness itself).
/// </summary>
public sealed class KeyWrapVectorTests
{
    public enum Target
    {
        Core,
        CachedAes,
        Stock,
    }

    private const string KwpFolder = "nist-cavp-kwp-cavs17.4";

    public static TheoryData<Target, int> TargetsAndKeySizes() => TestUtil.WithEveryKeySize<Target>();

    public static TheoryData<Target> Targets() => new(Enum.GetValues<Target>());

    [Theory]
    [MemberData(nameof(TargetsAndKeySizes))]
    public void Nist_KWP_AE_every_record_wraps_to_C(Target target, int keyBits)
    {
        List<VectorRecord> records = Vectors.ReadRecords(Vectors.Path(KwpFolder, $"KWP_AE_{keyBits}.txt"));
        Assert.Equal(500, records.Count);
        var failures = new List<string>();

        foreach (VectorRecord record in records)
        {
            byte[] key = record.Hex("K");
            byte[] plaintext = record.Hex("P");
            byte[] expected = record.Hex("C");
            Assert.Equal(keyBits / 8, key.Length);
            Assert.Equal(record.Section, $"PLAINTEXT LENGTH = {plaintext.Length * 8}");

            byte[] actual = Wrap(target, key, plaintext);

            if (!actual.AsSpan().SequenceEqual(expected))
            {
                failures.Add($"{record}: got {Convert.ToHexString(actual)}");
            }
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {records.Count} records failed:\n" + string.Join('\n', failures.Take(10)));
    }

    [Theory]
    [MemberData(nameof(TargetsAndKeySizes))]
    public void Nist_KWP_AD_every_record_unwraps_to_P_or_is_rejected_leaving_no_plaintext(Target target, int keyBits)
    {
        List<VectorRecord> records = Vectors.ReadRecords(Vectors.Path(KwpFolder, $"KWP_AD_{keyBits}.txt"));
        Assert.Equal(500, records.Count);
        Assert.Equal(100, records.Count(r => r.Has("FAIL")));
        var failures = new List<string>();

        foreach (VectorRecord record in records)
        {
            byte[] key = record.Hex("K");
            byte[] ciphertext = record.Hex("C");
            Assert.Equal(keyBits / 8, key.Length);
            Assert.True(record.Has("FAIL") ^ record.Has("P"), $"{record}: needs exactly one of P and FAIL");

            byte[] destination = new byte[ciphertext.Length - 8];
            destination.AsSpan().Fill(0xCC);

            if (record.Has("FAIL"))
            {
                Exception? thrown = Record.Exception(() => Unwrap(target, key, ciphertext, destination));

                if (thrown is not CryptographicException)
                {
                    failures.Add($"{record}: expected CryptographicException, got {thrown?.GetType().Name ?? "success"}");
                }
                else if (destination.Any(b => b != 0))
                {
                    failures.Add($"{record}: rejected but the destination is not all zero: {Convert.ToHexString(destination)}");
                }
            }
            else
            {
                byte[] expected = record.Hex("P");
                Assert.Equal(record.Section, $"PLAINTEXT LENGTH = {expected.Length * 8}");

                try
                {
                    int written = Unwrap(target, key, ciphertext, destination);

                    if (!destination.AsSpan(0, written).SequenceEqual(expected))
                    {
                        failures.Add($"{record}: got {Convert.ToHexString(destination, 0, written)}");
                    }
                }
                catch (CryptographicException e)
                {
                    failures.Add($"{record}: valid record rejected: {e.Message}");
                }
            }
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {records.Count} records failed:\n" + string.Join('\n', failures.Take(10)));
    }

    [Theory]
    [MemberData(nameof(Targets))]
    public void Botan_KWP_wraps_Input_to_Output_and_unwraps_back(Target target)
    {
        List<VectorRecord> records = Vectors.ReadRecords(Vectors.Path("rfc-examples", "kwp_botan.txt"));
        Assert.Equal(129, records.Count);
        var failures = new List<string>();

        foreach (VectorRecord record in records)
        {
            byte[] key = record.Hex("Key");
            byte[] input = record.Hex("Input");
            byte[] output = record.Hex("Output");

            byte[] wrapped = Wrap(target, key, input);

            if (!wrapped.AsSpan().SequenceEqual(output))
            {
                failures.Add($"{record}: wrap gave {Convert.ToHexString(wrapped)}");
            }

            byte[] destination = new byte[output.Length - 8];

            try
            {
                int written = Unwrap(target, key, output, destination);

                if (!destination.AsSpan(0, written).SequenceEqual(input))
                {
                    failures.Add($"{record}: unwrap gave {Convert.ToHexString(destination, 0, written)}");
                }
            }
            catch (CryptographicException e)
            {
                failures.Add($"{record}: unwrap rejected: {e.Message}");
            }
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of {records.Count} records failed:\n" + string.Join('\n', failures.Take(10)));
    }

    [Fact]
    public void Rfc3394_core_wraps_Key_under_KEK_to_Output_and_unwraps_back()
    {
        // The RFC 3394 default initial value (section 2.2.3.1).
        ReadOnlySpan<byte> defaultIv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];
        List<VectorRecord> records = Vectors.ReadRecords(Vectors.Path("rfc-examples", "rfc3394.vec"));
        Assert.Equal(6, records.Count);

        foreach (VectorRecord record in records)
        {
            // In this file "Key" is the key data being wrapped and "KEK" the wrapping key.
            byte[] data = record.Hex("Key");
            byte[] kek = record.Hex("KEK");
            byte[] output = record.Hex("Output");

            using var encryptor = new StockEcbCipher(kek, encrypting: true);
            byte[] wrapped = new byte[data.Length + 8];
            KeyWrap.Wrap(encryptor, defaultIv, data, wrapped);
            Assert.True(output.AsSpan().SequenceEqual(wrapped), $"{record}: wrap gave {Convert.ToHexString(wrapped)}");
            Assert.Equal(6 * data.Length / 8, encryptor.TransformCalls);

            using var decryptor = new StockEcbCipher(kek, encrypting: false);
            byte[] unwrapped = new byte[output.Length - 8];
            KeyWrap.Unwrap(decryptor, defaultIv, output, unwrapped);
            Assert.True(data.AsSpan().SequenceEqual(unwrapped), $"{record}: unwrap gave {Convert.ToHexString(unwrapped)}");

            // A different expected initial value must be rejected and leave nothing behind.
            ReadOnlySpan<byte> otherIv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA7];
            byte[] rejected = new byte[output.Length - 8];
            byte[] otherIvArray = otherIv.ToArray();
            Assert.Throws<CryptographicException>(() => KeyWrap.Unwrap(decryptor, otherIvArray, output, rejected));
            Assert.All(rejected, b => Assert.Equal(0, b));
        }
    }

    private static byte[] Wrap(Target target, byte[] key, byte[] plaintext)
    {
        switch (target)
        {
            case Target.Core:
            {
                using var cipher = new StockEcbCipher(key, encrypting: true);
                byte[] destination = new byte[Aes.GetKeyWrapPaddedLength(plaintext.Length)];
                KeyWrap.WrapPadded(cipher, plaintext, destination);
                return destination;
            }

            case Target.CachedAes:
            {
                using var aes = new CachedAes();
                aes.Key = key;
                return aes.EncryptKeyWrapPadded(plaintext);
            }

            default:
            {
                using Aes aes = Aes.Create();
                aes.Key = key;
                return aes.EncryptKeyWrapPadded(plaintext);
            }
        }
    }

    /// <summary>Unwraps into <paramref name="destination"/> (ciphertext length - 8 bytes); returns the plaintext length.</summary>
    private static int Unwrap(Target target, byte[] key, byte[] ciphertext, byte[] destination)
    {
        switch (target)
        {
            case Target.Core:
            {
                using var cipher = new StockEcbCipher(key, encrypting: false);
                return KeyWrap.UnwrapPadded(cipher, ciphertext, destination);
            }

            case Target.CachedAes:
            {
                using var aes = new CachedAes();
                aes.Key = key;
                return aes.DecryptKeyWrapPadded(ciphertext, destination);
            }

            default:
            {
                using Aes aes = Aes.Create();
                aes.Key = key;
                return aes.DecryptKeyWrapPadded(ciphertext, destination);
            }
        }
    }
}
