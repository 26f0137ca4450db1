using System;
using System.Runtime.InteropServices;

namespace CachedCryptography.Tests.Intrinsics;

/// <summary>
/// The reference for the key schedules: OpenSSL's own key expansion, <c>AES_set_encrypt_key</c> and
/// <c>AES_set_decrypt_key</c> (<c>libcrypto.so.3</c>, Linux; deprecated in OpenSSL 3 but exported), an implementation
/// independent of CachedAes. Its decryption schedule is the equivalent inverse cipher's, as ours.
/// </summary>
/// <remarks>
/// <c>AES_KEY</c> is <c>unsigned int rd_key[60]; int rounds;</c>. Depending on how libcrypto was built, a round-key word
/// is stored either in FIPS 197's byte order (OpenSSL's x86-64 assembly, as on the development machine) or as a host
/// integer of the big-endian word (its C code): <see cref="Schedule"/> returns FIPS 197's byte order either way, telling
/// the two apart by round key 0, which is the key itself in both.
/// </remarks>
internal static unsafe partial class OpenSslAesKey
{
    private const string Libcrypto = "libcrypto.so.3";
    private const int AesKeyBytes = 60 * 4 + 4;

    /// <summary>OpenSSL's round keys for <paramref name="key"/>, <c>16 * (rounds + 1)</c> bytes in FIPS 197's byte order.</summary>
    public static byte[] Schedule(byte[] key, bool forDecryption)
    {
        byte* aesKey = stackalloc byte[AesKeyBytes];
        byte* encryptionKey = stackalloc byte[AesKeyBytes];
        fixed (byte* k = key)
        {
            if (AES_set_encrypt_key(k, key.Length * 8, encryptionKey) != 0
                || (forDecryption ? AES_set_decrypt_key(k, key.Length * 8, aesKey) : AES_set_encrypt_key(k, key.Length * 8, aesKey)) != 0)
            {
                throw new InvalidOperationException("OpenSSL refused the key.");
            }
        }

        int rounds = *(int*)(aesKey + 240);
        byte[] schedule = new Span<byte>(aesKey, 16 * (rounds + 1)).ToArray();

        // The layout, from the encryption schedule's round key 0 (the key's first 16 bytes in either layout).
        ReadOnlySpan<byte> first = new(encryptionKey, 16);
        if (!first.SequenceEqual(key.AsSpan(0, 16)))
        {
            ReverseEachWord(schedule);
            byte[] check = first.ToArray();
            ReverseEachWord(check);
            if (!check.AsSpan().SequenceEqual(key.AsSpan(0, 16)))
            {
                throw new InvalidOperationException("OpenSSL's AES_KEY layout is neither of the two known ones.");
            }
        }

        return schedule;
    }

    private static void ReverseEachWord(byte[] bytes)
    {
        for (int i = 0; i < bytes.Length; i += 4)
        {
            bytes.AsSpan(i, 4).Reverse();
        }
    }

    [LibraryImport(Libcrypto)]
    private static partial int AES_set_encrypt_key(byte* userKey, int bits, byte* key);

    [LibraryImport(Libcrypto)]
    private static partial int AES_set_decrypt_key(byte* userKey, int bits, byte* key);
}
