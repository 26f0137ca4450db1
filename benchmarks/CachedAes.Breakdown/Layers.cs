using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CachedCryptography.Benchmarks;
using CachedCryptography.Operations;
using CachedCryptography.Ownership;
using CachedCryptography.Seam;
using CachedCryptography.Selection;

namespace CachedCryptography.Breakdown;

/// <summary>One layer: a name for the tables, what it adds, and a factory for one call of it.</summary>
/// <param name="Name">Short name (CSV and report).</param>
/// <param name="Description">What this layer adds over the one before it.</param>
/// <param name="Create">Makes the call for an operation from the shared fixture.</param>
internal sealed record Layer(string Name, string Description, Func<Fixture, Action> Create);

/// <summary>
/// THE LIST OF LAYERS, innermost first: the one place to adapt when CachedAes's internals change. Each layer is one
/// complete call of the same work (a 32 B message) through one more piece of the stack, so the difference between
/// two consecutive rows is what that piece costs. The native update alone (the floor) comes from the C program in
/// benchmarks/native-floor, measured the same way; breakdown.sh puts both in one table.
/// <para>
/// The internal names: <see cref="BlockCipher"/> (the seam: one ECB transform or one CBC message per call),
/// <see cref="KeyEpoch"/> (the handle borrowed from the key's slots and given back per call), <see cref="OneShot"/> (padding, destination
/// sizing, hygiene), and the public <see cref="CachedAes"/> override.
/// </para>
/// </summary>
internal static class Layers
{
    public static IReadOnlyList<Layer> All { get; } =
    [
        new("harness", "an empty call: the harness's own loop and delegate call (subtracted from nothing; shown for scale)",
            _ => static () => { }),

        new("pinvoke", "the same native work as the floor from C#: a raw IntPtr context, LibraryImport with the GC transition; CBC as the floor's never-reset scheme",
            f => f.RawCall(suppressTransition: false)),

        new("pinvoke-sgt", "as pinvoke, with [SuppressGCTransition]",
            f => f.RawCall(suppressTransition: true)),

        new("handle", "BlockCipher.TryTransform from the backend: a virtual call, the raw-context update without GC transition, the never-reset CBC fix-up in the handle; encrypt copies the padded plaintext in first, as the one-shot does",
            f => f.HandleCall()),

        new("lease", "InstanceKey.Rent and KeyEpoch.HandleLease.Dispose around it: the handle taken from the current key's slot and put back (one compare-exchange to hold the slot, one release store to let it go, the staleness check; no exception handler, as in the one-shots)",
            f => f.LeaseCall()),

        new("oneshot", "the one-shot's length checks, then OneShot.Encrypt/Decrypt on the leased handle: copy and PKCS7 pad or unpad (vectorised), failure hygiene",
            f => f.OneShotCall()),

        new("public", "CachedAes's public span one-shot: the Aes base class checks and the virtual core call",
            f => f.PublicCall(cached: true)),

        new("stock", "stock Aes.Create() span one-shot, for scale (a new native context per call)",
            f => f.PublicCall(cached: false)),

        new("newkey", "a kept CachedAes given another key before each one-shot (two keys in turn): the per-message key change, as BenchmarkDotNet's PerMessage NewKey row",
            f => f.PerMessageCall(cached: true, newInstance: false)),

        new("apifloor-newkey", "the native:rekey row's two calls from C# (the re-key with the GC transition, the update without; a context keyed as CachedAes keys its own) behind the Aes API of a subclass that does nothing else: its Key setter (length check, copy into a pinned field), the base class's one-shot checks, the virtual core: the least any Aes subclass pays for the newkey row",
            f => f.ApiFloorNewKeyCall()),

        new("stock-newkey", "the same on stock Aes.Create(), for scale",
            f => f.PerMessageCall(cached: false, newInstance: false)),

        new("newinstance", "a new CachedAes per message: made, keyed, one one-shot, disposed, as PerMessage NewInstance",
            f => f.PerMessageCall(cached: true, newInstance: true)),

        new("stock-newinstance", "the same with stock Aes.Create(), for scale",
            f => f.PerMessageCall(cached: false, newInstance: true)),
    ];
}

/// <summary>
/// Inputs, outputs and objects for one operation, shared by every layer's call. The workload is the benchmarks' own
/// (<see cref="CipherCase"/> with a 16 B plaintext, in benchmarks/Shared): the same key, IV, plaintext and stock outputs.
/// </summary>
internal sealed unsafe class Fixture : IDisposable
{
    private const int BlockSize = 16;
    private const int PlaintextLength = 16;
    private const int MessageLength = 32;

    private readonly CipherOperation _operation;
    private readonly byte[] _key = TestData.Key;
    private readonly byte[] _iv = Pinned(TestData.Iv);
    private readonly byte[] _plaintext;
    private readonly byte[] _message; // the padded plaintext (encrypt) or stock's ciphertext (decrypt): 32 B
    private readonly byte[] _output = GC.AllocateArray<byte>(MessageLength, pinned: true);
    private readonly byte[] _chain = GC.AllocateArray<byte>(BlockSize, pinned: true);
    private readonly List<IDisposable> _owned = [];
    private readonly List<IntPtr> _contexts = [];

    public Fixture(CipherOperation operation)
    {
        _operation = operation;
        var call = new CipherCase(operation, PlaintextLength);
        _plaintext = call.Plaintext;

        // The layers below the padding transform the padded plaintext, and decrypt back to it.
        _message = Pinned(call.Encrypting ? call.PaddedPlaintext : call.Ciphertext);
        Expected = call.Encrypting ? call.Ciphertext : call.PaddedPlaintext;
    }

    /// <summary>What every layer must leave in <see cref="Output"/> (unpadded layers: the padded plaintext).</summary>
    public byte[] Expected { get; }

    public ReadOnlySpan<byte> Output => _output;

    private bool Encrypting => _operation is CipherOperation.EncryptEcb or CipherOperation.EncryptCbc;

    private bool Cbc => _operation is CipherOperation.EncryptCbc or CipherOperation.DecryptCbc;

    /// <summary>The floor's work through a raw P/Invoke: one update, plus the never-reset CBC fix-up.</summary>
    /// <remarks>
    /// Pinned buffers captured as addresses, and 16-byte vector moves: nothing but the native call and the fix-up
    /// (under valgrind the JIT was seen not to inline generic span helpers here, which would inflate this row).
    /// </remarks>
    public Action RawCall(bool suppressTransition)
    {
        IntPtr ctx = RawLibcrypto.CreateKeyed(Cbc, Encrypting, _key, _iv);
        _contexts.Add(ctx);
        _iv.CopyTo(_chain); // keyed at IV, nothing processed yet
        nint input = Address(_message);
        nint output = Address(_output);
        nint chain = Address(_chain);
        nint iv = Address(_iv);

        if (!Cbc)
        {
            return suppressTransition
                ? () => Check(RawLibcrypto.EVP_CipherUpdateNoTransition(ctx, (byte*)output, out int written, (byte*)input, MessageLength), written)
                : () => Check(RawLibcrypto.EVP_CipherUpdate(ctx, (byte*)output, out int written, (byte*)input, MessageLength), written);
        }

        if (Encrypting)
        {
            // Start the message at IV: the context XORs the first block with its chain, so pre-XOR IV ^ chain.
            return () =>
            {
                byte* result = (byte*)output;
                byte* source = (byte*)input;
                (Vector128.Load(source) ^ Vector128.Load((byte*)iv) ^ Vector128.Load((byte*)chain)).Store(result);
                Vector128.Load(source + BlockSize).Store(result + BlockSize);
                int status = suppressTransition
                    ? RawLibcrypto.EVP_CipherUpdateNoTransition(ctx, result, out int written, result, MessageLength)
                    : RawLibcrypto.EVP_CipherUpdate(ctx, result, out written, result, MessageLength);
                Check(status, written);
                Vector128.Load(result + MessageLength - BlockSize).Store((byte*)chain);
            };
        }

        // Decrypt: the context XORs the first plaintext block with its chain; correct it to IV afterwards.
        return () =>
        {
            byte* result = (byte*)output;
            byte* source = (byte*)input;
            int status = suppressTransition
                ? RawLibcrypto.EVP_CipherUpdateNoTransition(ctx, result, out int written, source, MessageLength)
                : RawLibcrypto.EVP_CipherUpdate(ctx, result, out written, source, MessageLength);
            Check(status, written);
            (Vector128.Load(result) ^ Vector128.Load((byte*)iv) ^ Vector128.Load((byte*)chain)).Store(result);
            Vector128.Load(source + MessageLength - BlockSize).Store((byte*)chain);
        };
    }

    /// <summary>One message through a handle from the platform backend.</summary>
    public Action HandleCall()
    {
        BlockCipher handle = ProcessBackend.Current.Create(Cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb, Encrypting, _key);
        _owned.Add(new Releaser(handle));
        byte[] message = _message;
        byte[] output = _output;
        byte[] iv = Cbc ? _iv : [];
        return Encrypting
            ? () =>
            {
                message.CopyTo(output, 0);
                Check(handle.TryTransform(iv, output, output));
            }
            : () => Check(handle.TryTransform(iv, message, output));
    }

    /// <summary>The same, on a handle borrowed from a key's slots and given back.</summary>
    public Action LeaseCall()
    {
        KeyHolder key = KeyedHolder();
        byte[] message = _message;
        byte[] output = _output;
        byte[] iv = Cbc ? _iv : [];
        BlockCipherMode mode = Cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        return Encrypting
            ? () =>
            {
                KeyEpoch.HandleLease lease = key.Rent(mode, encrypting: true);
                message.CopyTo(output, 0);
                bool done = lease.Cipher.TryTransform(iv, output, output);
                lease.Dispose();
                Check(done);
            }
            : () =>
            {
                KeyEpoch.HandleLease lease = key.Rent(mode, encrypting: false);
                bool done = lease.Cipher.TryTransform(iv, message, output);
                lease.Dispose();
                Check(done);
            };
    }

    /// <summary>One 16 B one-shot through <see cref="OneShot"/>, as CachedAes's cores call it: lengths first, then a lease.</summary>
    public Action OneShotCall()
    {
        KeyHolder key = KeyedHolder();
        byte[] input = Encrypting ? _plaintext : _message;
        byte[] output = _output;
        byte[] iv = Cbc ? _iv : [];
        BlockCipherMode mode = Cbc ? BlockCipherMode.Cbc : BlockCipherMode.Ecb;
        return Encrypting
            ? () =>
            {
                int length = SymmetricPadding.GetCiphertextLength(input.Length, PaddingMode.PKCS7);
                KeyEpoch.HandleLease lease = key.Rent(mode, encrypting: true);
                OneShot.Outcome outcome = OneShot.Encrypt(lease.Cipher, iv, PaddingMode.PKCS7, input, output.AsSpan(0, length));
                lease.Dispose();
                Check(outcome == OneShot.Outcome.Done);
            }
            : () =>
            {
                if (OneShot.CheckDecryption(input.Length, output.Length, PaddingMode.PKCS7) == OneShot.Decryption.Needed)
                {
                    KeyEpoch.HandleLease lease = key.Rent(mode, encrypting: false);
                    OneShot.Outcome outcome = OneShot.Decrypt(lease.Cipher, iv, PaddingMode.PKCS7, input, output, out _);
                    lease.Dispose();
                    Check(outcome == OneShot.Outcome.Done);
                }
            };
    }

    /// <summary>The public span one-shot on a kept instance (CachedAes, or stock for scale).</summary>
    public Action PublicCall(bool cached)
    {
        Aes aes = cached ? CachedAes.Create() : Aes.Create();
        aes.SetKey(_key);
        _owned.Add(aes);
        byte[] input = Encrypting ? _plaintext : _message;
        byte[] output = _output;
        byte[] iv = _iv;
        return _operation switch
        {
            CipherOperation.EncryptEcb => () => aes.EncryptEcb(input, output, PaddingMode.PKCS7),
            CipherOperation.DecryptEcb => () => aes.DecryptEcb(input, output, PaddingMode.PKCS7),
            CipherOperation.EncryptCbc => () => aes.EncryptCbc(input, iv, output, PaddingMode.PKCS7),
            _ => () => aes.DecryptCbc(input, iv, output, PaddingMode.PKCS7),
        };
    }

    /// <summary>
    /// One message per call with a key of its own: on a kept instance given another key each time (two keys in turn,
    /// the fixture's first, so that the first call's output is checked), or on a new instance keyed, used and disposed.
    /// </summary>
    public Action PerMessageCall(bool cached, bool newInstance)
    {
        if (!newInstance)
        {
            Aes kept = cached ? CachedAes.Create() : Aes.Create();
            _owned.Add(kept);
            return KeyChangingCall(kept);
        }

        byte[] key = _key;
        byte[] input = Encrypting ? _plaintext : _message;
        byte[] output = _output;
        byte[] iv = _iv;
        CipherOperation operation = _operation;
        return () =>
        {
            using Aes aes = cached ? CachedAes.Create() : Aes.Create();
            aes.Key = key;
            OneShotOf(aes, operation, input, iv, output);
        };
    }

    /// <summary>The newkey row's shape on <see cref="ApiFloorAes"/> (benchmarks/Shared), over a context keyed as CachedAes keys its own.</summary>
    public Action ApiFloorNewKeyCall()
    {
        IntPtr ctx = RawLibcrypto.CreateKeyed(Cbc, Encrypting, _key, _iv, asCachedAes: true);
        _contexts.Add(ctx);
        var floor = new ApiFloorAes(ctx);
        _owned.Add(floor);
        return KeyChangingCall(floor);
    }

    // One message per call on `kept`, given the fixture's key and its complement in turn before each.
    private Action KeyChangingCall(Aes kept)
    {
        byte[] key = _key;
        byte[] other = [.. key.Select(b => (byte)~b)];
        byte[] input = Encrypting ? _plaintext : _message;
        byte[] output = _output;
        byte[] iv = _iv;
        CipherOperation operation = _operation;
        int calls = 0;
        return () =>
        {
            kept.Key = (calls++ & 1) == 0 ? key : other;
            OneShotOf(kept, operation, input, iv, output);
        };
    }

    private static void OneShotOf(Aes aes, CipherOperation operation, byte[] input, byte[] iv, byte[] output)
    {
        switch (operation)
        {
            case CipherOperation.EncryptEcb:
                aes.EncryptEcb(input, output, PaddingMode.PKCS7);
                break;
            // Decryption without depadding: under the other key the padding is garbage, and both would throw.
            case CipherOperation.DecryptEcb:
                aes.DecryptEcb(input, output, PaddingMode.None);
                break;
            case CipherOperation.EncryptCbc:
                aes.EncryptCbc(input, iv, output, PaddingMode.PKCS7);
                break;
            default:
                aes.DecryptCbc(input, iv, output, PaddingMode.None);
                break;
        }
    }

    /// <summary>True when the last call left the expected bytes (decrypt one-shots: the plaintext, pad bytes zeroed).</summary>
    public bool OutputIsCorrect(string layer)
    {
        bool unpadded = layer is "oneshot" or "public" or "stock";
        ReadOnlySpan<byte> expected = !Encrypting && unpadded ? _plaintext : Expected;
        return _output.AsSpan(0, expected.Length).SequenceEqual(expected);
    }

    public void Dispose()
    {
        foreach (IDisposable owned in _owned)
        {
            owned.Dispose();
        }

        foreach (IntPtr ctx in _contexts)
        {
            RawLibcrypto.EVP_CIPHER_CTX_free(ctx);
        }
    }

    private KeyHolder KeyedHolder()
    {
        var key = new KeyHolder(_key);
        _owned.Add(key);
        return key;
    }

    private static void Check(bool transformed)
    {
        if (!transformed)
        {
            throw new InvalidOperationException("TryTransform failed.");
        }
    }

    private static void Check(int status, int written)
    {
        if (status != 1 || written != MessageLength)
        {
            throw new InvalidOperationException("EVP_CipherUpdate failed.");
        }
    }

    private static byte[] Pinned(byte[] bytes)
    {
        byte[] pinned = GC.AllocateArray<byte>(bytes.Length, pinned: true);
        bytes.CopyTo(pinned, 0);
        return pinned;
    }

    // The arrays above that this is used on live on the pinned object heap: their address never changes.
    private static nint Address(byte[] pinned) => (nint)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(pinned));

    private sealed class Releaser(BlockCipher handle) : IDisposable
    {
        public void Dispose() => handle.Release();
    }

    /// <summary>What a CachedAes holds for its key: the current epoch (in a field, as the lease protocol needs) and the backend.</summary>
    private sealed class KeyHolder(byte[] key) : IDisposable
    {
        private InstanceKey _key = Keyed(key);

        // As CachedAes rents: without the lock, then under it when a lifecycle operation overtook the call.
        public KeyEpoch.HandleLease Rent(BlockCipherMode mode, bool encrypting)
        {
            KeyEpoch.HandleLease lease = _key.TryRent(mode, encrypting);
            return lease.IsTaken ? lease : _key.RentLocked(256, mode, encrypting);
        }

        public void Dispose()
        {
            _key.Enter();
            _key.Release();
            _key.Exit();
        }

        private static InstanceKey Keyed(byte[] key)
        {
            var instanceKey = new InstanceKey(ProcessBackend.Current);
            instanceKey.Enter();
            instanceKey.Replace(key);
            instanceKey.Exit();
            return instanceKey;
        }
    }
}
