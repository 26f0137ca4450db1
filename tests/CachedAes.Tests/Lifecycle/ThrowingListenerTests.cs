using System;
using System.Diagnostics.Metrics;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Backends.OpenSsl;
using CachedCryptography.Seam;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// A <see cref="MeterListener"/> whose measurement callback throws, on every CachedAes counter: every operation still
/// succeeds with stock's bytes, <c>Dispose</c> never throws, and no native context is left behind, keyed or not. A
/// counter is recorded where a handle is made, re-keyed or given back and where the pool is hit or missed, so a throw
/// that escaped there would leave a context without an owner or an epoch half released. The listener sees every
/// CachedAes measurement in the process while it runs, so this runs alone (the metrics tests' collection).
/// </summary>
[Collection(nameof(MetricsRunAlone))]
public sealed class ThrowingListenerTests
{
    [OpenSslFact]
    [SupportedOSPlatform("linux")]
    public void A_listener_that_throws_fails_no_operation_and_leaks_no_native_context()
    {
        Assert.True(OpenSslBackend.TryCreate(out CipherBackend? backend, out string? reason), reason);
        var openSsl = (OpenSslBackend)backend;
        var counted = new CountingBackend(openSsl);
        int thrown = 0;
        using (var listener = new MeterListener())
        {
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == CachedAesMetrics.MeterName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            listener.SetMeasurementEventCallback<long>((_, _, _, _) =>
            {
                Interlocked.Increment(ref thrown);
                throw new InvalidOperationException("A listener that throws.");
            });
            listener.Start();

            var rng = new Random(3);
            byte[] iv = TestUtil.Random(rng, 16), message = TestUtil.Random(rng, 48);
            for (int i = 0; i < 300; i++)
            {
                byte[] key = TestUtil.Random(rng, 16 + (8 * (i % 3)));
                using Aes stock = TestUtil.Stock(key);
                var aes = new CachedAes(counted) { Key = key, IV = iv };
                Assert.Equal(stock.EncryptCbc(message, iv, PaddingMode.None), aes.EncryptCbc(message, iv, PaddingMode.None));
                using (ICryptoTransform decryptor = aes.CreateDecryptor(key, iv))
                {
                    Assert.Equal(message, decryptor.TransformFinalBlock(stock.EncryptCbc(message, iv), 0, 64));
                }

                // A key change re-keys the cached handle (counted), then the instance is disposed or dropped.
                byte[] next = TestUtil.Random(rng, 32);
                aes.Key = next;
                stock.Key = next;
                Assert.Equal(stock.EncryptEcb(message, PaddingMode.None), aes.EncryptEcb(message, PaddingMode.None));
                if (i % 4 != 0)
                {
                    aes.Dispose();
                }
            }
        }

        TestUtil.CollectUntil(() => counted.LiveHandles == 0);
        Assert.True(thrown > 0, "the listener saw no measurement");
        Assert.Equal(0, counted.LiveHandles);
        Assert.Equal(0, openSsl.Pool.LiveContexts - openSsl.Pool.Count);
    }
}
