using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.Tracing;
using System.Security.Cryptography;
using System.Threading;
using Microsoft.IdentityModel.Abstractions;
using Microsoft.IdentityModel.Logging;
using Microsoft.IdentityModel.Tokens;

namespace CachedCryptography.IdentityModel;

/// <summary>
/// AES-CBC-HMAC-SHA2 authenticated encryption (RFC 7518 section 5.2: A128CBC-HS256, A192CBC-HS384, A256CBC-HS512) with
/// the AES part on <see cref="CachedAes"/>. Ciphertexts and tags are byte for byte those of IdentityModel's own
/// <see cref="AuthenticatedEncryptionProvider"/> for the same key, IV and data.
/// </summary>
/// <remarks>
/// <para>
/// IdentityModel's own provider calls the static <see cref="Aes.Create()"/>, which nothing can redirect, so this provider
/// does the whole algorithm itself. The content key of 2 × n bytes (n = 16, 24 or 32) is split into the MAC key (its
/// first n bytes) and the AES key (the next n); a longer key is accepted and its first 2 × n bytes used, as IdentityModel
/// does. The ciphertext is AES-CBC with PKCS #7 padding; the tag is the first n bytes of
/// HMAC-SHA-256/384/512(MAC key, additional data ‖ IV ‖ ciphertext ‖ the additional data's length in bits as a 64-bit
/// big-endian number). Decryption checks the tag in constant time before it decrypts anything.
/// </para>
/// <para>
/// The split keys are made on first use from a copy of the content key (<see cref="AuthenticatedEncryptionProvider.GetKeyBytes"/>),
/// which is zeroed once they are made, unless the key hands out the same array every time (then it is the key's own, and
/// left alone). <see cref="Dispose(bool)"/> zeroes the split keys once no call is using them: a call already running
/// finishes with the intact keys, and every call that starts after <see cref="AuthenticatedEncryptionProvider.Dispose()"/>
/// throws <see cref="ObjectDisposedException"/>, as IdentityModel's provider does (which does not zero its keys), so no
/// output is ever made under a zeroed key. Nothing else the provider makes holds the key: it never asks IdentityModel's
/// base class for its split keys or its HMAC signature provider, and its <see cref="Dispose(bool)"/> does not call the
/// base class's, which would make both only to release them.
/// </para>
/// <para>
/// Each <see cref="Encrypt(byte[], byte[], byte[])"/> and <see cref="Decrypt"/> makes one CachedAes for the call and
/// disposes it. The HMAC is computed with .NET's one-shot <c>CryptographicOperations.HmacData</c>
/// over a pooled copy of its input (with <see cref="IncrementalHash"/> above 64 KiB of input), not through the key's
/// <see cref="CryptoProviderFactory"/> (IdentityModel's provider asks that factory for a signature provider).
/// </para>
/// <para>
/// Bad input fails as in IdentityModel's provider, checked in its order, with its exception types and its messages, built
/// with IdentityModel's <see cref="LogHelper"/> from the same arguments (so <c>IdentityModelEventSource.ShowPII</c>
/// hides or shows them alike) and logged through it at the same level: <see cref="ArgumentNullException"/> (IDX10000) for
/// a null or empty argument; <see cref="ObjectDisposedException"/> naming <see cref="AuthenticatedEncryptionProvider"/>
/// after <see cref="AuthenticatedEncryptionProvider.Dispose()"/>; IdentityModel's own <see cref="ArgumentOutOfRangeException"/>
/// (IDX10653) for a key too short for the algorithm, on first use and on the first <see cref="AuthenticatedEncryptionProvider.Dispose()"/>;
/// <see cref="SecurityTokenDecryptionFailedException"/> for a tag of the wrong length (IDX10625), a tag that does not
/// match (IDX10650, logged as an error by IdentityModel before 8.23.0 and as informational from 8.23.0, as each version
/// does) and an authentic ciphertext that does not decrypt (IDX10654); <see cref="CryptographicException"/> from
/// <see cref="SymmetricAlgorithm.IV"/> for an IV that is not 16 bytes. A rejected input costs what a valid one does up to
/// the tag check, plus the message: nothing is decrypted or computed a second time. A successful encryption logs
/// IdentityModel's informational IDX10642, as the HMAC signature provider of IdentityModel's provider does.
/// </para>
/// <para>
/// One difference remains, with <c>ShowPII</c> on only: IDX10654's message then contains the
/// <see cref="CryptographicException"/> that AES decryption threw, stack trace included, and that stack trace names the
/// code that threw it (CachedAes's here, .NET's and IdentityModel's in IdentityModel's provider). Its type and message are
/// the same.
/// </para>
/// </remarks>
public sealed class CachedAesCbcHmacProvider : AuthenticatedEncryptionProvider
{
    private const int IvSize = 16;

    // _state: bit 0 is set by Dispose; the rest counts the calls using the split keys (OneCall each). Changed only by
    // interlocked operations, so a call either sees the bit and throws, or is counted before Dispose can zero the keys.
    private const int Disposed = 1;
    private const int OneCall = 2;

    // The longest HMAC input (AAD, IV, ciphertext and AL) hashed in one call from a pooled copy; longer ones incrementally.
    private const int OneShotMacInput = 64 * 1024;

    // IdentityModel's message texts (Microsoft.IdentityModel.Tokens' LogMessages), the same in 8.0.1 and 8.23.0.
    private const string Idx10625 = "IDX10625: Failed to verify the authenticationTag length, the actual tag length '{0}' does not match the expected tag length '{1}'. authenticationTag: '{2}', algorithm: '{3}'.";
    private const string Idx10650 = "IDX10650: Failed to verify ciphertext with aad '{0}'; iv '{1}'; and authenticationTag '{2}'.";
    private const string Idx10654 = "IDX10654: Decryption failed. Cryptographic operation exception: '{0}'.";
    private const string Idx10642 = "IDX10642: Creating signature using the input: '{0}'.";

    /// <summary>
    /// The level IdentityModel's provider logs IDX10650 (a tag that does not match) at: an error up to 8.22, informational
    /// from 8.23.0 (its pull request 3582, in 8.23.0's release notes; 8.0.1, 8.16.0, 8.19.2 and 8.23.0 checked by the
    /// tests). Read from the Microsoft.IdentityModel.Tokens assembly in use, whose version is its package's.
    /// </summary>
    private static readonly EventLevel s_tagMismatchLevel =
        typeof(AuthenticatedEncryptionProvider).Assembly.GetName().Version >= new Version(8, 23) ? EventLevel.Informational : EventLevel.Error;

    private readonly Func<Aes> _createAes;
    private readonly int _halfKeySize;
    private readonly HashAlgorithmName _hmac;
    private readonly Lazy<SplitKey> _keys;

    // IdentityModel's provider checks the key's size in two places that each remember their failure: making its split
    // keys (on encryption) and making its HMAC signature provider (on decryption, and in Dispose). _keys is the first,
    // _keySizeChecked the second, so that a key too short fails, and is logged, at the same calls.
    private readonly Lazy<bool> _keySizeChecked;
    private int _state;

    /// <summary>Creates the provider.</summary>
    /// <param name="key">The content-encryption key: a <see cref="SymmetricSecurityKey"/> or an octet
    /// <see cref="JsonWebKey"/> of at least 256, 384 or 512 bits, as the algorithm says.</param>
    /// <param name="algorithm">A128CBC-HS256, A192CBC-HS384 or A256CBC-HS512.</param>
    /// <exception cref="ArgumentNullException"><paramref name="key"/> is null or <paramref name="algorithm"/> is null or
    /// white space (IdentityModel's check).</exception>
    /// <exception cref="ArgumentException">IdentityModel does not support <paramref name="algorithm"/> with this key, or
    /// it is not one of the three AES-CBC-HMAC algorithms (this provider does not do AES-GCM).</exception>
    /// <remarks>As with IdentityModel's provider, the key's size is checked on first use, not here.</remarks>
    public CachedAesCbcHmacProvider(SecurityKey key, string algorithm)
        : this(key, algorithm, CachedAes.Create)
    {
    }

    /// <summary>Creates the provider with another maker of AES instances (the tests count them).</summary>
    internal CachedAesCbcHmacProvider(SecurityKey key, string algorithm, Func<Aes> createAes)
        : base(key, algorithm)
    {
        (_halfKeySize, _hmac) = algorithm switch
        {
            SecurityAlgorithms.Aes128CbcHmacSha256 => (16, HashAlgorithmName.SHA256),
            SecurityAlgorithms.Aes192CbcHmacSha384 => (24, HashAlgorithmName.SHA384),
            SecurityAlgorithms.Aes256CbcHmacSha512 => (32, HashAlgorithmName.SHA512),
            _ => throw new ArgumentException(
                $"{nameof(CachedAesCbcHmacProvider)} does A128CBC-HS256, A192CBC-HS384 and A256CBC-HS512, not '{algorithm}'.", nameof(algorithm)),
        };
        _createAes = createAes;
        _keys = new Lazy<SplitKey>(Split, LazyThreadSafetyMode.ExecutionAndPublication);
        _keySizeChecked = new Lazy<bool>(CheckKeySize, LazyThreadSafetyMode.ExecutionAndPublication);
    }

    /// <summary>Encrypts <paramref name="plaintext"/> with a random IV.</summary>
    /// <param name="plaintext">The data to encrypt; not null or empty.</param>
    /// <param name="authenticatedData">The additional authenticated data; not null or empty.</param>
    /// <returns>The ciphertext, the IV and the tag.</returns>
    public override AuthenticatedEncryptionResult Encrypt(byte[] plaintext, byte[] authenticatedData) =>
        Encrypt(plaintext, authenticatedData, null);

    /// <summary>Encrypts <paramref name="plaintext"/> with the IV given, or a random one when it is null.</summary>
    /// <param name="plaintext">The data to encrypt; not null or empty.</param>
    /// <param name="authenticatedData">The additional authenticated data; not null or empty.</param>
    /// <param name="iv">A 16-byte IV, or null for a random one.</param>
    /// <returns>The ciphertext, the IV and the tag.</returns>
    public override AuthenticatedEncryptionResult Encrypt(byte[] plaintext, byte[] authenticatedData, byte[]? iv)
    {
        ThrowIfNullOrEmpty(plaintext, nameof(plaintext));
        ThrowIfNullOrEmpty(authenticatedData, nameof(authenticatedData));
        EnterCall();
        try
        {
            return EncryptCore(plaintext, authenticatedData, iv);
        }
        finally
        {
            ExitCall();
        }
    }

    /// <summary>Checks the tag, then decrypts.</summary>
    /// <param name="ciphertext">The ciphertext; not null or empty.</param>
    /// <param name="authenticatedData">The additional authenticated data; not null or empty.</param>
    /// <param name="iv">The IV; not null or empty.</param>
    /// <param name="authenticationTag">The tag; not null or empty.</param>
    /// <returns>The plaintext.</returns>
    public override byte[] Decrypt(byte[] ciphertext, byte[] authenticatedData, byte[] iv, byte[] authenticationTag)
    {
        ThrowIfNullOrEmpty(ciphertext, nameof(ciphertext));
        ThrowIfNullOrEmpty(authenticatedData, nameof(authenticatedData));
        ThrowIfNullOrEmpty(iv, nameof(iv));
        ThrowIfNullOrEmpty(authenticationTag, nameof(authenticationTag));
        EnterCall();
        try
        {
            return DecryptCore(ciphertext, authenticatedData, iv, authenticationTag);
        }
        finally
        {
            ExitCall();
        }
    }

    /// <summary>True once the split keys were made and have been zeroed (a test seam).</summary>
    internal bool KeysZeroed =>
        _keys.IsValueCreated && !_keys.Value.Mac.AsSpan().ContainsAnyExcept((byte)0) && !_keys.Value.Aes.AsSpan().ContainsAnyExcept((byte)0);

    /// <summary>
    /// Marks the provider disposed; zeroes the split keys now if no call is using them, otherwise the last call to finish
    /// zeroes them. The first call with <paramref name="disposing"/> true then checks the key's size as IdentityModel's
    /// provider does there, so a key too short for the algorithm throws its <see cref="ArgumentOutOfRangeException"/>
    /// (IDX10653) as IdentityModel's does.
    /// </summary>
    /// <param name="disposing">True when called from <see cref="AuthenticatedEncryptionProvider.Dispose()"/>.</param>
    /// <remarks>
    /// IdentityModel's <c>Dispose(bool)</c> is not called: for AES-CBC-HMAC all it does is make its HMAC signature provider
    /// (splitting the key into two new keys that it never zeroes, the key-size check above being its first step) and
    /// release it, and this provider never used either.
    /// </remarks>
#pragma warning disable CA2215 // The base class's Dispose(bool) would make key copies to release them; see the remarks.
    protected override void Dispose(bool disposing)
#pragma warning restore CA2215
    {
        if (!disposing)
        {
            return;
        }

        int before = Interlocked.Or(ref _state, Disposed);
        if ((before & Disposed) != 0)
        {
            return;
        }

        if (before == 0)
        {
            ZeroKeys();
        }

        _ = _keySizeChecked.Value;
    }

    private AuthenticatedEncryptionResult EncryptCore(byte[] plaintext, byte[] authenticatedData, byte[]? iv)
    {
        SplitKey keys = _keys.Value;

        using Aes aes = _createAes();
        aes.Key = keys.Aes;
        if (iv is not null)
        {
            // Outside the wrapping below, as in IdentityModel's provider: a wrong IV length is the IV setter's exception.
            aes.IV = iv;
        }

        byte[] usedIv = aes.IV;
        byte[] ciphertext;
        try
        {
            ciphertext = aes.EncryptCbc(plaintext, usedIv, PaddingMode.PKCS7);
        }
        catch (CryptographicException e)
        {
            // IdentityModel's provider says IDX10654 (its text reads "Decryption failed") for a failed encryption too.
            throw LogHelper.LogExceptionMessage(new SecurityTokenEncryptionFailedException(LogHelper.FormatInvariant(Idx10654, e)));
        }

        if (LogHelper.IsEnabled(EventLogLevel.Informational))
        {
            // IdentityModel's provider signs with its HMAC signature provider, which logs this. Its argument there is the
            // HMAC's input, a byte array, which IdentityModel's log prints as its type alone (ShowPII off or on): an empty
            // array prints the same without copying the input.
            LogHelper.LogInformation(Idx10642, Array.Empty<byte>());
        }

        return new AuthenticatedEncryptionResult(Key, ciphertext, usedIv, Tag(keys.Mac, authenticatedData, usedIv, ciphertext));
    }

    private byte[] DecryptCore(byte[] ciphertext, byte[] authenticatedData, byte[] iv, byte[] authenticationTag)
    {
        if (authenticationTag.Length != _halfKeySize)
        {
            throw LogHelper.LogExceptionMessage(new SecurityTokenDecryptionFailedException(LogHelper.FormatInvariant(
                Idx10625, authenticationTag.Length, _halfKeySize, Base64UrlEncoder.Encode(authenticationTag), Algorithm)));
        }

        _ = _keySizeChecked.Value;
        SplitKey keys = _keys.Value;
        if (!CryptographicOperations.FixedTimeEquals(Tag(keys.Mac, authenticatedData, iv, ciphertext), authenticationTag))
        {
            throw LogHelper.LogExceptionMessage(s_tagMismatchLevel, new SecurityTokenDecryptionFailedException(LogHelper.FormatInvariant(
                Idx10650, Base64UrlEncoder.Encode(authenticatedData), Base64UrlEncoder.Encode(iv), Base64UrlEncoder.Encode(authenticationTag))));
        }

        using Aes aes = _createAes();
        aes.Key = keys.Aes;
        aes.IV = iv;
        try
        {
            return aes.DecryptCbc(ciphertext, iv, PaddingMode.PKCS7);
        }
        catch (CryptographicException e)
        {
            throw LogHelper.LogExceptionMessage(new SecurityTokenDecryptionFailedException(LogHelper.FormatInvariant(Idx10654, e)));
        }
    }

    /// <summary>Counts a call in, or throws <see cref="ObjectDisposedException"/> once the provider is disposed.</summary>
    private void EnterCall()
    {
        int state = Volatile.Read(ref _state);

        // Progress by construction: a compare-exchange fails only when another thread changed the word (a call counted in
        // or out, or Dispose), so every retry follows someone else's progress, and Dispose ends the loop with the throw.
        while (true)
        {
            if ((state & Disposed) != 0)
            {
                // IdentityModel's provider names its own type (GetType() there) and logs the exception as an error.
                throw LogHelper.LogExceptionMessage(new ObjectDisposedException(typeof(AuthenticatedEncryptionProvider).ToString()));
            }

            int seen = Interlocked.CompareExchange(ref _state, state + OneCall, state);
            if (seen == state)
            {
                return;
            }

            state = seen;
        }
    }

    /// <summary>Counts a call out; the last one out of a disposed provider zeroes the keys.</summary>
    private void ExitCall()
    {
        if (Interlocked.Add(ref _state, -OneCall) == Disposed)
        {
            ZeroKeys();
        }
    }

    // Runs once, when the provider is disposed and no call is counted in (none can start any more).
    private void ZeroKeys()
    {
        if (_keys.IsValueCreated)
        {
            CryptographicOperations.ZeroMemory(_keys.Value.Mac);
            CryptographicOperations.ZeroMemory(_keys.Value.Aes);
        }
    }

    /// <summary>IdentityModel's key-size check, as its provider makes it before its HMAC signature provider.</summary>
    private bool CheckKeySize()
    {
        ValidateKeySize(Key, Algorithm);
        return true;
    }

    /// <summary>IdentityModel's key-size check, then the MAC key and the AES key; the copy of the content key is zeroed.</summary>
    private SplitKey Split()
    {
        ValidateKeySize(Key, Algorithm);
        byte[] keyBytes = GetKeyBytes(Key);

        // GetKeyBytes returns a new copy for IdentityModel's keys (SymmetricSecurityKey.Key clones its array, and an octet
        // JsonWebKey converts to one). A key type that overrides Key to hand out its own array would lose its key if that
        // array were zeroed, so a second call tells the two apart: two different arrays are copies, both zeroed here.
        byte[] again = GetKeyBytes(Key);
        bool copies = !ReferenceEquals(keyBytes, again);
        try
        {
            return new SplitKey(keyBytes.AsSpan(0, _halfKeySize).ToArray(), keyBytes.AsSpan(_halfKeySize, _halfKeySize).ToArray());
        }
        finally
        {
            if (copies)
            {
                CryptographicOperations.ZeroMemory(keyBytes);
                CryptographicOperations.ZeroMemory(again);
            }
        }
    }

    /// <summary>
    /// The tag: the first half of HMAC(MAC key, AAD ‖ IV ‖ ciphertext ‖ AL). Up to <see cref="OneShotMacInput"/> bytes of
    /// input are copied into one pooled buffer (not secret: the AAD, IV and ciphertext travel in the token) and hashed in
    /// one call, which costs less than an incremental HMAC; longer inputs are hashed incrementally, without the copy.
    /// </summary>
    private byte[] Tag(byte[] macKey, byte[] authenticatedData, byte[] iv, byte[] ciphertext)
    {
        Span<byte> lengthInBits = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(lengthInBits, 8L * authenticatedData.Length);
        Span<byte> mac = stackalloc byte[64];
        long inputLength = (long)authenticatedData.Length + iv.Length + ciphertext.Length + lengthInBits.Length;
        if (inputLength <= OneShotMacInput)
        {
            byte[] input = ArrayPool<byte>.Shared.Rent((int)inputLength);
            try
            {
                Span<byte> rest = input;
                authenticatedData.CopyTo(rest);
                rest = rest[authenticatedData.Length..];
                iv.CopyTo(rest);
                rest = rest[iv.Length..];
                ciphertext.CopyTo(rest);
                lengthInBits.CopyTo(rest[ciphertext.Length..]);
                _ = CryptographicOperations.HmacData(_hmac, macKey, input.AsSpan(0, (int)inputLength), mac);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(input);
            }
        }
        else
        {
            using IncrementalHash hmac = IncrementalHash.CreateHMAC(_hmac, macKey);
            hmac.AppendData(authenticatedData);
            hmac.AppendData(iv);
            hmac.AppendData(ciphertext);
            hmac.AppendData(lengthInBits);
            _ = hmac.GetHashAndReset(mac);
        }

        return mac[.._halfKeySize].ToArray();
    }

    private static void ThrowIfNullOrEmpty(byte[]? value, string name)
    {
        if (value is null || value.Length == 0)
        {
            throw LogHelper.LogArgumentNullException(name);
        }
    }

    private sealed record SplitKey(byte[] Mac, byte[] Aes);
}
