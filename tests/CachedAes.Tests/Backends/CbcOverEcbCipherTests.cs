using System;
using CachedCryptography.Seam;
using CachedCryptography.Backends.Stock;
using CachedCryptography.Backends.CbcOverEcb;

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
    public void Random_messages_in_place_or_not_match_stock_and_continue_from_the_previous_ciphertext_block(string backendName, bool encrypting)
    {
        ISimulatedNativeLayer? layer = null;
        var backend = new Infrastructure.CountingBackend(backendName == "stock" ? StockBackend.Instance : SimulatedBackends.Create(backendName, out layer));
        var composed = new CbcOverEcbBackend(backend);
        var random = new Random(0xCBC + (encrypting ? 1 : 0));

        foreach (int keySize in new[] { 16, 24, 32 })
        {
            byte[] key = Stock.Bytes(keySize, keySize + 100);
            BlockCipher handle = composed.Create(BlockCipherMode.Cbc, encrypting, key);
            for (int message = 0; message < 40; message++)
            {
                // Up to 40 blocks: more than one 256-byte decrypt chunk, so the chain crosses chunk boundaries.
                byte[] data = new byte[16 * random.Next(1, 41)];
                byte[] iv = new byte[16];
                random.NextBytes(data);
                random.NextBytes(iv);
                byte[] expected = Stock.Cbc(key, iv, data, encrypting);
                byte[] ciphertext = encrypting ? expected : data;

                bool inPlace = random.Next(2) == 0;
                byte[] output = inPlace ? (byte[])data.Clone() : new byte[data.Length];
                byte[] input = inPlace ? output : data;
                int done = 0;
                while (done < data.Length)
                {
                    // One message in one to several calls, each a message at the ciphertext block before it.
                    int take = 16 * random.Next(1, (data.Length - done) / 16 + 1);
                    byte[] chainIv = done == 0 ? iv : ciphertext[(done - 16)..done];
                    Assert.True(handle.TryTransform(chainIv, input.AsSpan(done, take), output.AsSpan(done, take)));
                    done += take;
                }

                Assert.Equal(expected, output);
            }

            Assert.False(handle.IsFaulted);
            handle.Release();
        }

        Assert.Equal(0, backend.LiveHandles);
        if (layer is not null)
        {
            Assert.Equal(0, layer.LiveHandles);
            Assert.Empty(layer.Violations);
        }
    }

    [Fact]
    public void Release_releases_the_ecb_handle_once()
    {
        var backend = new Infrastructure.CountingBackend(SimulatedBackends.Create(SimulatedBackends.CngProviders, out ISimulatedNativeLayer layer));
        var composed = new CbcOverEcbBackend(backend);
        BlockCipher handle = composed.Create(BlockCipherMode.Cbc, encrypting: true, new byte[16]);
        Assert.Equal(1, layer.LiveHandles);
        Assert.Equal(1, backend.LiveHandles);

        handle.Release();

        Assert.Equal(0, layer.LiveHandles);
        Assert.Equal(0, backend.LiveHandles);
        Assert.Empty(layer.Violations);
    }

    [Fact]
    public void A_failing_ecb_call_faults_the_cbc_handle()
    {
        var api = new SimulatedCngApi();
        Assert.True(global::CachedCryptography.Backends.Cng.CngBackend.TryCreate(api, tryPseudoHandles: true, out CipherBackend? backend, out _));
        BlockCipher handle = new CbcOverEcbBackend(backend).Create(BlockCipherMode.Cbc, encrypting: false, new byte[32]);
        api.Inject("BCryptDecrypt", SimulatedCngApi.STATUS_NO_MEMORY);

        Assert.False(handle.TryTransform(new byte[16], new byte[64], new byte[64]));

        Assert.Contains("BCryptDecrypt", handle.CreateFailure().Message, StringComparison.Ordinal);
        Assert.True(handle.IsFaulted);
        handle.Release();
        Assert.Equal(0, api.LiveKeys);
    }

    [Fact]
    public void The_composed_backend_reports_the_inner_kind_and_its_ecb_handles_are_the_inner_ones()
    {
        var inner = new Infrastructure.CountingBackend(SimulatedBackends.Create(SimulatedBackends.CngPseudoHandles));
        var composed = new CbcOverEcbBackend(inner);
        byte[] key = Stock.Bytes(16, 5);
        byte[] data = Stock.Bytes(32, 6);
        byte[] output = new byte[32];

        BlockCipher ecb = composed.Create(BlockCipherMode.Ecb, encrypting: true, key);
        Assert.IsNotType<CbcOverEcbCipher>(ecb);
        Assert.Equal(1, inner.LiveHandles);
        Assert.True(ecb.TryTransform(default, data, output));
        ecb.Release();

        Assert.Equal(CachedAesBackend.Cng, composed.Kind);
        Assert.Equal(0, inner.LiveHandles);
        Assert.Equal(Stock.Ecb(key, data, encrypt: true), output);
    }
}
