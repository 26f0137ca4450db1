using System;
using System.Security.Cryptography;
using CachedCryptography.Interop;
using CachedCryptography.Interop.Stock;

namespace CachedCryptography.Tests.Backends;

/// <summary>The managed CBC chain over a native ECB handle (the fallback for a CBC handle that failed the self-test), against stock.</summary>
public sealed class CbcOverEcbCipherTests
{
    public static TheoryData<string, bool> BackendsAndDirections()
    {
        var data = new TheoryData<string, bool>();
        foreach (string backend in new[] { "stock", SimulatedBackends.CngPseudoHandles, SimulatedBackends.CngWine8Providers })
        {
            data.Add(backend, true);
            data.Add(backend, false);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(BackendsAndDirections))]
    public void Random_messages_split_in_place_or_not_match_stock(string backendName, bool encrypting)
    {
        ISimulatedNativeLayer? layer = null;
        CipherBackend backend = backendName == "stock" ? StockBackend.Instance : SimulatedBackends.Create(backendName, out layer);
        var composed = new CbcOverEcbBackend(backend);
        var random = new Random(0xCBC + (encrypting ? 1 : 0));

        foreach (int keySize in new[] { 16, 24, 32 })
        {
            byte[] key = Stock.Bytes(keySize, keySize + 100);
            using IBlockCipher handle = composed.Create(BlockCipherMode.Cbc, encrypting, key);
            for (int message = 0; message < 40; message++)
            {
                // Up to 40 blocks: more than one 256-byte decrypt chunk, so the chain crosses chunk boundaries.
                byte[] data = new byte[16 * random.Next(1, 41)];
                byte[] iv = new byte[16];
                random.NextBytes(data);
                random.NextBytes(iv);
                byte[] expected = Stock.Cbc(key, iv, data, encrypting);

                bool inPlace = random.Next(2) == 0;
                byte[] output = inPlace ? (byte[])data.Clone() : new byte[data.Length];
                byte[] input = inPlace ? output : data;
                handle.Reset(iv);
                int done = 0;
                while (done < data.Length)
                {
                    // One message in one to several calls: consecutive transforms continue the chain.
                    int take = 16 * random.Next(1, (data.Length - done) / 16 + 1);
                    handle.Transform(input.AsSpan(done, take), output.AsSpan(done, take));
                    done += take;
                }

                Assert.Equal(expected, output);
            }

            Assert.False(handle.IsFaulted);
        }

        if (layer is not null)
        {
            Assert.Equal(0, layer.LiveHandles);
            Assert.Empty(layer.Violations);
        }
    }

    [Fact]
    public void Disposing_releases_the_ecb_handle_once()
    {
        CipherBackend backend = SimulatedBackends.Create(SimulatedBackends.CngProviders, out ISimulatedNativeLayer layer);
        IBlockCipher handle = new CbcOverEcbBackend(backend).Create(BlockCipherMode.Cbc, encrypting: true, new byte[16]);
        Assert.Equal(1, layer.LiveHandles);

        handle.Dispose();
        handle.Dispose();

        Assert.Equal(0, layer.LiveHandles);
        Assert.True(handle.IsFaulted);
        Assert.Throws<CryptographicException>(() => handle.Transform(new byte[16], new byte[16]));
        Assert.Empty(layer.Violations);
    }

    [Fact]
    public void A_failing_ecb_call_faults_the_cbc_handle()
    {
        var api = new SimulatedBCryptApi();
        Assert.True(Interop.Cng.CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend));
        using IBlockCipher handle = new CbcOverEcbBackend(backend).Create(BlockCipherMode.Cbc, encrypting: false, new byte[32]);
        handle.Reset(new byte[16]);
        api.Inject("BCryptDecrypt", SimulatedBCryptApi.STATUS_NO_MEMORY);

        CryptographicException e = Assert.Throws<CryptographicException>(() => handle.Transform(new byte[64], new byte[64]));

        Assert.Contains("BCryptDecrypt", e.Message, StringComparison.Ordinal);
        Assert.True(handle.IsFaulted);
    }

    [Fact]
    public void The_composed_backend_reports_the_inner_kind_and_makes_plain_ecb_handles()
    {
        CipherBackend inner = SimulatedBackends.Create(SimulatedBackends.CngPseudoHandles);
        var composed = new CbcOverEcbBackend(inner);
        byte[] key = Stock.Bytes(16, 5);
        byte[] data = Stock.Bytes(32, 6);
        byte[] output = new byte[32];

        using (IBlockCipher ecb = composed.Create(BlockCipherMode.Ecb, encrypting: true, key))
        {
            Assert.IsNotType<CbcOverEcbCipher>(ecb);
            ecb.Transform(data, output);
        }

        Assert.Equal(CachedAesBackend.Cng, composed.Kind);
        Assert.Equal(inner.ShortCbcEncryptBlocks, composed.ShortCbcEncryptBlocks);
        Assert.Equal(Stock.Ecb(key, data, encrypt: true), output);
    }
}
