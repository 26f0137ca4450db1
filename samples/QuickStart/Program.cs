// CachedAes in one minute. Run from the repository root:  dotnet run --project samples/QuickStart
using System;
using System.Security.Cryptography;
using System.Text;
using CachedCryptography;

// 1. Replace Aes.Create() with CachedAes.Create(). A CachedAes is an Aes: code that takes an Aes keeps working.
using CachedAes aes = CachedAes.Create();
aes.GenerateKey();                                        // or aes.Key = key; or aes.SetKey(key)
Console.WriteLine($"backend: {aes.Backend}");             // OpenSsl, Cng, CommonCrypto or StockFallback

// 2. Encrypt and decrypt. The first call creates the native CBC handle; later calls reuse it.
byte[] iv = RandomNumberGenerator.GetBytes(16);
byte[] message = Encoding.UTF8.GetBytes("Hello from CachedAes");
byte[] ciphertext = aes.EncryptCbc(message, iv);          // PKCS7 padding by default, as stock
byte[] decrypted = aes.DecryptCbc(ciphertext, iv);
Console.WriteLine($"CBC: {ciphertext.Length}-byte ciphertext, decrypts to \"{Encoding.UTF8.GetString(decrypted)}\"");

// The bytes are exactly stock Aes's.
using Aes stock = Aes.Create();
stock.Key = aes.Key;
bool sameAsStock = stock.EncryptCbc(message, iv).AsSpan().SequenceEqual(ciphertext);
Console.WriteLine($"same ciphertext as stock Aes: {sameAsStock}");

// 3. Key wrap (RFC 5649): protect a data key under this key.
byte[] dataKey = RandomNumberGenerator.GetBytes(32);
byte[] wrapped = aes.EncryptKeyWrapPadded(dataKey);
bool unwrapsBack = aes.DecryptKeyWrapPadded(wrapped).AsSpan().SequenceEqual(dataKey);
Console.WriteLine($"key wrap: 32-byte key -> {wrapped.Length} bytes, unwraps back: {unwrapsBack}");

// A tampered wrap is rejected with CryptographicException, as stock does.
wrapped[^1] ^= 1;
bool tamperRejected = false;
try
{
    aes.DecryptKeyWrapPadded(wrapped);
}
catch (CryptographicException)
{
    tamperRejected = true;
}

Console.WriteLine($"tampered wrap rejected: {tamperRejected}");

// 4. Watch it work. `--watch 10` keeps encrypting for 10 s (a kept instance with a new key now and then, new instances,
// and now and then one dropped without Dispose), so the CachedAes meter's counters move. dotnet-counters must start the
// app itself, not `dotnet run` (which would be the process it watches), so build first, then, from the repository root:
//   dotnet build samples/QuickStart -c Release
//   dotnet tool restore
//   dotnet dotnet-counters monitor --counters CachedAes -- dotnet samples/QuickStart/bin/Release/net10.0/QuickStart.dll --watch 10
// Or attach to a running app: `dotnet run --project samples/QuickStart -- --watch 60` starts it as a process named
// QuickStart, and from another terminal `dotnet dotnet-counters monitor -n QuickStart --counters CachedAes` watches it.
if (args is ["--watch", string seconds])
{
    var until = DateTime.UtcNow.AddSeconds(double.Parse(seconds, System.Globalization.CultureInfo.InvariantCulture));
    for (int i = 0; DateTime.UtcNow < until; i++)
    {
        if (i % 1000 == 0)
        {
            aes.GenerateKey();                            // re-keys the cached handles in place

            // Dropped, not disposed. Don't do this: after the collection that finds it unreachable, a sweep on the thread
            // pool zeroes its key and gives back its handle (cachedaes.handles.finalized counts it; CachedAes has no finalizer).
            CachedAes.Create().EncryptEcb(message, PaddingMode.PKCS7);
        }

        aes.EncryptCbc(message, iv);
        using CachedAes perMessage = CachedAes.Create();  // a new instance per message: a pooled context each time
        perMessage.Key = dataKey;
        perMessage.EncryptCbc(message, iv);
    }

    Console.WriteLine("watch: done");
}

bool ok = decrypted.AsSpan().SequenceEqual(message) && sameAsStock && unwrapsBack && tamperRejected;
Console.WriteLine(ok ? "quickstart: OK" : "quickstart: FAILED");
return ok ? 0 : 1;
