using System;
using System.Diagnostics;
using System.Security.Cryptography;
using System.Threading;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Lifecycle;

/// <summary>
/// A key change and a call that overlap, many thousand times over: once both have returned, no handle keyed with the old
/// key may still be cached ("no schedule of the old key survives the change"). The call gives its handle back with a
/// store while the key change sweeps the slots; each side must see the other's write (KeyEpoch.Handles.cs, "Release
/// and key change").
/// </summary>
public class KeyChangeRaceTests
{
    [Theory]
    [InlineData("PlatformDefault")]
    [InlineData("SimulatedCngPseudoHandles")]
    public void No_handle_of_an_old_key_stays_cached_once_a_key_change_and_a_call_it_raced_have_returned(string backend)
    {
        var rng = new Random(5);
        byte[][] keys = [TestUtil.Random(rng, 16), TestUtil.Random(rng, 32), TestUtil.Random(rng, 16), TestUtil.Random(rng, 24)];
        byte[] message = TestUtil.Random(rng, 32), iv = TestUtil.Random(rng, 16);
        using CachedAes aes = BackendData.Create(backend, keys[0]);
        _ = aes.EncryptCbc(message, iv, PaddingMode.None);

        // Each round: the caller makes eight one-shots of all four modes and directions (eight hand-backs, each racing
        // the key change's sweep), the key change starts after a random spin within about the time those calls take.
        // Before the hand-back read the version after its store, some rounds left a handle of the old key cached (how
        // often: docs/design-notes.md, "Races between owners", item 9).
        const int MaxRounds = 1_000_000;
        int go = 0, done = 0, stale = 0, rounds = 0;
        var caller = new Thread(() =>
        {
            for (int round = 1; round <= MaxRounds; round++)
            {
                while (Volatile.Read(ref go) < round)
                {
                    if (Volatile.Read(ref go) < 0)
                    {
                        return;
                    }

                    Thread.SpinWait(1);
                }

                for (int call = 0; call < 8; call++)
                {
                    _ = (call & 3) switch
                    {
                        0 => aes.EncryptCbc(message, iv, PaddingMode.None),
                        1 => aes.EncryptEcb(message, PaddingMode.None),
                        2 => aes.DecryptCbc(message, iv, PaddingMode.None),
                        _ => aes.DecryptEcb(message, PaddingMode.None),
                    };
                }

                Volatile.Write(ref done, round);
            }
        });
        caller.Start();

        var clock = Stopwatch.StartNew();
        var waits = new Random(11);
        for (int round = 1; round <= MaxRounds && stale == 0 && clock.Elapsed < TimeSpan.FromSeconds(5); round++)
        {
            Volatile.Write(ref go, round);
            Thread.SpinWait(waits.Next(200));
            aes.Key = keys[round & 3];
            while (Volatile.Read(ref done) < round)
            {
                Thread.SpinWait(1);
            }

            stale += aes.KeyEpoch!.CachedWithOlderKey();
            rounds = round;
        }

        Volatile.Write(ref go, -1);
        caller.Join();
        Assert.True(stale == 0, $"{stale} handles of an older key stayed cached after {rounds} rounds");
    }
}
