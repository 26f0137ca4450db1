using System;

namespace CachedCryptography.Selection;

/// <summary>
/// The published known answers the <see cref="SelfTest"/> checks a backend against. Every value is copied from the
/// document cited next to it, never computed here.
/// </summary>
internal static class KnownAnswers
{
    // NIST SP 800-38A (2001), Appendix F.1 (ECB) and F.2 (CBC): one four-block plaintext under three keys.
    public static readonly byte[] Sp80038aPlaintext = Convert.FromHexString(
        "6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51" +
        "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710");

    // SP 800-38A F.2: the IV of every CBC example.
    public static readonly byte[] Sp80038aIv = Convert.FromHexString("000102030405060708090a0b0c0d0e0f");

    /// <summary>One SP 800-38A example key with its ECB (F.1.1/F.1.3/F.1.5) and CBC (F.2.1/F.2.3/F.2.5) ciphertexts.</summary>
    public sealed record Sp80038aExample(string Name, byte[] Key, byte[] EcbCiphertext, byte[] CbcCiphertext)
    {
        // Step names for failure messages, made once (plain concatenation keeps the success path cheap to start).
        public string EcbEncryptStep { get; } = "ECB encrypt, " + Name;

        public string EcbDecryptStep { get; } = "ECB decrypt, " + Name;

        public string CbcEncryptStep { get; } = "CBC encrypt, " + Name;

        public string CbcDecryptStep { get; } = "CBC decrypt, " + Name;
    }

    public static readonly Sp80038aExample[] Sp80038aExamples =
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

    // FIPS 197 (2001), Appendix C: one block under a key of each size (000102... up to the key's length), a second key
    // of each size with a published answer, for the self-test's re-keying step.
    public static readonly byte[] Fips197Plaintext = Convert.FromHexString("00112233445566778899aabbccddeeff");

    /// <summary>One FIPS 197 Appendix C example: its key and the ciphertext of <see cref="Fips197Plaintext"/>.</summary>
    public sealed record Fips197Example(string Name, byte[] Key, byte[] Ciphertext);

    /// <summary>FIPS 197 C.1 (AES-128), C.2 (AES-192) and C.3 (AES-256), in the order of <see cref="Sp80038aExamples"/>.</summary>
    public static readonly Fips197Example[] Fips197Examples =
    [
        new(
            "FIPS 197 C.1",
            Convert.FromHexString("000102030405060708090a0b0c0d0e0f"),
            Convert.FromHexString("69c4e0d86a7b0430d8cdb78070b4c55a")),
        new(
            "FIPS 197 C.2",
            Convert.FromHexString("000102030405060708090a0b0c0d0e0f1011121314151617"),
            Convert.FromHexString("dda97ca4864cdfe06eaf70a0ec0d7191")),
        new(
            "FIPS 197 C.3",
            Convert.FromHexString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
            Convert.FromHexString("8ea2b7ca516745bfeafc49904b496089")),
    ];

    /// <summary>RFC 5649, Section 6: the two examples (192-bit KEK; a 20-byte key and a 7-byte key).</summary>
    public static readonly byte[] Rfc5649Kek = Convert.FromHexString("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8");

    public static readonly (byte[] Key, byte[] Wrapped)[] Rfc5649Examples =
    [
        (Convert.FromHexString("c37b7e6492584340bed12207808941155068f738"),
         Convert.FromHexString("138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a")),
        (Convert.FromHexString("466f7250617369"),
         Convert.FromHexString("afbeb0f07dfbf5419200f2ccb50bb24f")),
    ];
}
