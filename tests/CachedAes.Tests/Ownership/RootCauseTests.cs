using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Security.Cryptography;
using CachedCryptography.Ownership;
using CachedCryptography.Tests.Infrastructure;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The cause of issue 41's hang, forced deterministically. An epoch's last reference can be the frame that closes it: in
/// optimized code, once that frame has read the epoch's key memory and generation it no longer reports the epoch to the
/// collector, and a collection there (the compare-exchange loop of the close is a safe point) finds the epoch
/// unreachable. The reclaimer then closed the memory on the "dropped" epoch's behalf and recycled it, and the epoch's own
/// close closed the recycled memory again: the memory went to the pool twice, two later keys shared it, and an epoch
/// whose memory was closed under it could no longer read its key (its caller looped for good). The test seam
/// (<see cref="KeyMemory.BeforeClose"/>) runs a collection and a sweep at exactly that point, in a child process
/// where every method is compiled optimized at once (<c>DOTNET_TieredCompilation=0</c>: unoptimized code keeps every
/// local alive to the end of its method, which hides the bug). The same scenario with the same seam in the same place
/// fails on the code before the fix: the sweep finds the live epoch's memory and one memory is handed to two keys
/// (docs/design-notes.md, "Ownership").
/// </summary>
public class RootCauseTests
{
    /// <summary>The child process's mode (<see cref="ChildProcessEntry"/>).</summary>
    internal const string ChildEntry = "root-cause";

    [Fact]
    public void An_epoch_that_closes_stays_reachable_until_its_memory_is_closed_once()
    {
        ChildProcess.Report report = ChildProcess.RunEntry(ChildEntry, new Dictionary<string, string?> { ["DOTNET_TieredCompilation"] = "0" });
        Assert.True(report.ExitCode == 0, report.Output);
        Assert.False(report.Values.ContainsKey("DisposeThrew"), report.Output);
        Assert.Equal("True", report["SeamRan"]);
        Assert.Equal("0", report["FoundDropped"]);
        Assert.Equal("256", report["DistinctMemories"]);
        Assert.Equal("True", report["KeysIntact"]);
        Assert.Equal("True", report["NextInstanceLikeStock"]);
    }

    /// <summary>The scenario, in the child process: prints its findings as <c>Name=value</c> lines.</summary>
    internal static int RunInChild()
    {
        byte[] key = RandomNumberGenerator.GetBytes(32);
        byte[] iv = RandomNumberGenerator.GetBytes(16);
        byte[] plaintext = RandomNumberGenerator.GetBytes(16);
        using Aes stock = TestUtil.Stock(key);
        byte[] expected = stock.EncryptCbc(plaintext, iv);

        var instance = new CachedAes { Key = key };
        _ = instance.EncryptCbc(plaintext, iv);
        bool ran = false;
        int found = -1;
        KeyMemory.BeforeClose = () =>
        {
            KeyMemory.BeforeClose = null;
            ran = true;

            // The collections below would queue sweeps on the thread pool; marked as queued already, they queue none,
            // so the one sweep that runs is this thread's own, now.
            FieldInfo queued = typeof(Reclaimer).GetField("s_queuedSweep", BindingFlags.NonPublic | BindingFlags.Static)!;
            queued.SetValue(null, 1);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            found = Reclaimer.SweepNow();
            queued.SetValue(null, 0);
        };

        try
        {
            // Dispose lets go of the epoch (the instance no longer refers to it) and closes it; the seam runs in the close.
            instance.Dispose();
        }
        catch (InvalidOperationException e)
        {
            Console.WriteLine($"DisposeThrew={e.Message}");
        }

        Console.WriteLine($"SeamRan={ran}");
        Console.WriteLine($"FoundDropped={found}");

        // Every memory is in one place: keys made now each get a memory of their own, and each reads its own key.
        var keys = Enumerable.Range(0, 256).Select(_ => RandomNumberGenerator.GetBytes(32)).ToList();
        var epochs = keys.Select(k => new KeyEpoch(instance.CipherBackend, k, heldByInstance: false)).ToList();
        Console.WriteLine($"DistinctMemories={epochs.Select(e => e.Memory).Distinct().Count()}");
        Console.WriteLine($"KeysIntact={epochs.Select((e, i) => e.KeyCopy()?.AsSpan().SequenceEqual(keys[i]) == true).All(ok => ok)}");
        epochs.ForEach(e => e.RemoveTransform());

        using var next = new CachedAes { Key = key };
        Console.WriteLine($"NextInstanceLikeStock={next.EncryptCbc(plaintext, iv).AsSpan().SequenceEqual(expected)}");
        return 0;
    }
}
