using System;
using System.Collections.Generic;
using System.Linq;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests;

/// <summary>
/// The six RFC 3394 section 4 examples (<c>rfc-examples/rfc3394.vec</c>, from Botan) through every public RFC 3394
/// overload of <see cref="CachedAes"/>, over every backend of the contract list; and through the OpenSSL reference,
/// which checks that harness (and that a NULL IV means the default A6A6A6A6A6A6A6A6) against the RFC itself.
/// </summary>
public sealed class Rfc3394VectorTests
{
    /// <summary>One record: in this file "Key" is the key data being wrapped and "KEK" the wrapping key.</summary>
    internal sealed record Rfc3394Vector(string Name, byte[] Kek, byte[] Data, byte[] Wrapped);

    /// <summary>Every record of <c>rfc-examples/rfc3394.vec</c>, found through the shared vector locator.</summary>
    internal static List<Rfc3394Vector> Read()
    {
        List<VectorRecord> records = Vectors.ReadRecords(Vectors.Path("rfc-examples", "rfc3394.vec"));
        Assert.Equal(6, records.Count);
        return records.Select(r => new Rfc3394Vector(r.ToString(), r.Hex("KEK"), r.Hex("Key"), r.Hex("Output"))).ToList();
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void Every_overload_wraps_Key_under_KEK_to_Output_and_unwraps_it_back(string backend)
    {
        List<Rfc3394Vector> vectors = Read();
        int checks = 0;

        foreach (Rfc3394Vector v in vectors)
        {
            using CachedAes aes = BackendData.Create(backend, v.Kek);
            Assert.Equal(v.Data.Length + 8, v.Wrapped.Length);
            Assert.Equal(v.Wrapped.Length, CachedAes.GetKeyWrapLength(v.Data.Length));

            Check("EncryptKeyWrap(byte[])", v.Wrapped, aes.EncryptKeyWrap(v.Data));
            Check("EncryptKeyWrap(span)", v.Wrapped, aes.EncryptKeyWrap(v.Data.AsSpan()));
            byte[] wrapped = TestUtil.Filled(v.Wrapped.Length);
            aes.EncryptKeyWrap(v.Data, wrapped);
            Check("EncryptKeyWrap(span, span)", v.Wrapped, wrapped);

            Check("DecryptKeyWrap(byte[])", v.Data, aes.DecryptKeyWrap(v.Wrapped));
            Check("DecryptKeyWrap(span)", v.Data, aes.DecryptKeyWrap(v.Wrapped.AsSpan()));
            byte[] unwrapped = TestUtil.Filled(v.Data.Length);
            Assert.Equal(v.Data.Length, aes.DecryptKeyWrap(v.Wrapped, unwrapped));
            Check("DecryptKeyWrap(span, span)", v.Data, unwrapped);
            unwrapped = TestUtil.Filled(v.Data.Length);
            Assert.True(aes.TryDecryptKeyWrap(v.Wrapped, unwrapped, out int written));
            Assert.Equal(v.Data.Length, written);
            Check("TryDecryptKeyWrap", v.Data, unwrapped);

            void Check(string overload, byte[] expected, byte[] actual)
            {
                checks++;
                Assert.True(expected.AsSpan().SequenceEqual(actual), $"{backend}, {v.Name}, {overload}: got {TestUtil.Hex(actual)}");
            }
        }

        Assert.Equal(6 * 7, checks);
    }

    [Theory]
    [MemberData(nameof(BackendData.Names), MemberType = typeof(BackendData))]
    public void One_instance_follows_every_key_change(string backend)
    {
        // The records use three KEKs; walking through them on one instance checks that no handle keyed with an
        // earlier KEK survives a change by any of the key-setting paths.
        List<Rfc3394Vector> vectors = Read();
        using CachedAes aes = BackendData.Create(backend);

        for (int i = 0; i < vectors.Count; i++)
        {
            Rfc3394Vector v = vectors[i];

            switch (i % 3)
            {
                case 0:
                    aes.Key = v.Kek;
                    break;
                case 1:
                    aes.SetKey(v.Kek);
                    break;
                default:
                    aes.KeySize = v.Kek.Length * 8;
                    aes.Key = v.Kek;
                    break;
            }

            Assert.True(v.Wrapped.AsSpan().SequenceEqual(aes.EncryptKeyWrap(v.Data)), $"{backend}, {v.Name}: wrap");
            Assert.True(v.Data.AsSpan().SequenceEqual(aes.DecryptKeyWrap(v.Wrapped)), $"{backend}, {v.Name}: unwrap");
        }
    }

    [OpenSslFact]
    public void The_OpenSSL_reference_with_a_NULL_IV_reproduces_the_RFC_examples()
    {
        foreach (Rfc3394Vector v in Read())
        {
            Assert.True(v.Wrapped.AsSpan().SequenceEqual(OpenSslKeyWrap.Wrap(v.Kek, v.Data)), $"{v.Name}: OpenSSL wrap");
            Assert.True(v.Data.AsSpan().SequenceEqual(OpenSslKeyWrap.Unwrap(v.Kek, v.Wrapped)), $"{v.Name}: OpenSSL unwrap");

            // The default IV given explicitly is the same as NULL; any other IV is not.
            byte[] defaultIv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6];
            Assert.True(v.Wrapped.AsSpan().SequenceEqual(OpenSslKeyWrap.Wrap(v.Kek, v.Data, defaultIv)), $"{v.Name}: explicit IV");
            byte[] otherIv = [0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA7];
            Assert.False(v.Wrapped.AsSpan().SequenceEqual(OpenSslKeyWrap.Wrap(v.Kek, v.Data, otherIv)), $"{v.Name}: other IV");

            // And OpenSSL rejects a tampered wrap, so its verdicts can be compared with CachedAes's.
            byte[] tampered = (byte[])v.Wrapped.Clone();
            tampered[^1] ^= 0x01;
            Assert.Null(OpenSslKeyWrap.Unwrap(v.Kek, tampered));
        }
    }
}
