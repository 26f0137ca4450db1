using System;
using System.Collections.Generic;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The key memory protocol (docs/design-notes.md, "Ownership", table M) as a model, checked over every interleaving of
/// an owner, a later owner of the same memory, the reclaimer and the collector by <see cref="ModelChecker"/>. The model of
/// the code before the fix (ba4d80a: the owner's close an unconditional OR, the owner unreported by its own frame once it
/// has read its memory and generation) must fail, and the model of today's code must pass. Today's model includes the
/// instance's key change in place (table E5), which writes the memory without taking a reference: it must never write into
/// a memory whose tenure has ended, and it must fail that check when the epoch is not kept reachable through the change or
/// when the write is made outside the lifecycle lock.
/// </summary>
/// <remarks>
/// <para>The threads: <b>T1</b> rents the memory for epoch E1 (an instance's key), makes one call with it (a reference
/// taken and given back; the call's native work may fail, which still gives the reference back), then either disposes
/// the instance (lets go of E1, reads E1's memory and generation, closes the memory) or drops it. Before that it may
/// change the key in place any number of times under its lifecycle lock (<c>KeyEpoch.TryRewrite</c>: the frame reports E1,
/// reads its memory, writes the bytes with no reference, returns); an instance that is dropped may be dropped while such
/// a change runs (the caller's last use of it was the setter). <b>T2</b> rents the
/// memory for a later epoch E2 once it is pooled, makes a call and closes it. <b>R</b>, the reclaimer, runs two sweeps:
/// read the state, read the weak handle, compare-exchange the state to closed. <b>GC</b> clears the weak handle of an
/// epoch nothing reports. <b>T3</b> is a call on T1's instance from another thread, racing its Dispose; in the variant
/// without the lock it is a key change instead, writing with no reference as <c>WriteKey</c> does.</para>
/// <para>The invariants: the memory is in one place (pooled at most once, never pooled while owned); a reference is never
/// taken on a pooled memory; a key change writes only into its own epoch's open tenure; a live owner's reference never
/// fails; no owner's close finds another tenure (today's code throws there); and every state can finish: a dropped
/// owner's memory is eventually pooled, and no call retries for good.</para>
/// </remarks>
public class KeyMemoryModelTests
{
    private enum Protocol
    {
        /// <summary>ba4d80a: close is an OR whatever the tenure; the epoch is not kept alive through its close; a call whose
        /// epoch cannot take a reference retries (RentAfterRelease).</summary>
        Before,

        /// <summary>Today: every transition a compare-exchange on the tenure; the epoch kept alive until its close is done;
        /// a second failure under the lifecycle lock throws.</summary>
        Now,

        /// <summary>Today's compare-exchanges, but the epoch not kept alive through its close or its key change once the frame
        /// has read the memory (GC.KeepAlive removed, and WriteKey using no field after its copy).</summary>
        NowWithoutKeepAlive,

        /// <summary>Today's protocol, but the reference-free key change made by another thread without the lifecycle lock,
        /// racing Dispose (what the lock and WriteKey's check of the holders rule out).</summary>
        RewriteWithoutLock,
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Todays_protocol_keeps_one_owner_per_memory_over_every_interleaving(bool disposes)
    {
        ModelChecker.Result result = Check(Protocol.Now, disposes);
        Assert.True(result.Violation is null, result.ToString());
        Assert.True(result.States > 500, $"only {result.States} states: the model explores too little");
    }

    [Fact]
    public void The_protocol_of_ba4d80a_fails_the_same_check()
    {
        ModelChecker.Result result = Check(Protocol.Before, disposes: true);
        Assert.NotNull(result.Violation);
        Assert.Contains("pooled twice", result.Violation, StringComparison.Ordinal);
        Assert.Contains("GC clears the weak handle of E1", result.Trace);
    }

    [Fact]
    public void Without_the_keep_alive_todays_close_throws_instead_of_pooling_the_memory_twice()
    {
        // The two defences apart: with the epoch unreported during its close the reclaimer does close a live epoch's
        // memory, and the owner's compare-exchange then finds another tenure and throws (a loud failure, never a second
        // owner).
        ModelChecker.Result result = Check(Protocol.NowWithoutKeepAlive, disposes: true);
        Assert.Equal("an owner's close found another tenure (Invariant)", result.Violation);
    }

    [Fact]
    public void A_key_change_whose_epoch_is_not_kept_reachable_writes_into_pooled_memory()
    {
        // An instance dropped while its key change runs: once the frame no longer reports the epoch, the collector clears
        // its weak handle, the reclaimer closes and pools the memory, and the rewrite's bytes land in pooled memory (which
        // the next key to rent it would then read).
        ModelChecker.Result result = Check(Protocol.NowWithoutKeepAlive, disposes: false);
        Assert.Equal("a key change wrote into a memory its epoch no longer owns", result.Violation);
        Assert.Contains("R closes the memory for the dropped owner", result.Trace);
    }

    [Fact]
    public void A_key_change_without_the_lifecycle_lock_writes_into_a_later_owners_memory()
    {
        // The write takes no reference, so only the lock keeps Dispose (and the close and the next rent after it) out.
        ModelChecker.Result result = Check(Protocol.RewriteWithoutLock, disposes: true);
        Assert.Equal("a key change wrote into a memory its epoch no longer owns", result.Violation);
        Assert.Contains("T1 closes the memory", result.Trace);
    }

    private static ModelChecker.Result Check(Protocol protocol, bool disposes) =>
        ModelChecker.Explore(new State { Pool = 1 }, s => Steps(s, protocol, disposes), Invariant, IsFinal);

    private const byte Pooled = 0, Owned = 1, Closed = 2;

    private record struct State
    {
        // The memory: phase, generation, references, weak handle target (0 none, 1 E1, 2 E2), how many times pooled.
        public byte Phase, Gen, Refs, Target, Pool;

        // T1 and its epoch E1: program counter, E1's tenure, whether the instance and T1's frame report E1, and whether
        // the instance is dropped once the key change in progress ends.
        public byte T1, E1Gen;
        public bool E1ByInstance, E1ByFrame, DropAfterChange;

        // T2 and its epoch E2.
        public byte T2, E2Gen;

        // T3: another thread's call on T1's instance, racing its Dispose.
        public byte T3;

        // Collections so far (at most three, to keep the model finite).
        public byte Collections;

        // The reclaimer: program counter, what its first read saw; and whether a collection has queued a sweep.
        public byte R, RPhase, RGen, RRefs;
        public bool SweepQueued;

        // A rule the code checks and throws on (today's Invariant), or the hang of ba4d80a's retry loop.
        public string? Broken;
    }

    private static string? Invariant(State s) =>
        s.Broken ?? (s.Pool > 1 ? "the memory is pooled twice (two later keys would share it)"
            : s.Pool == 1 && s.Phase != Pooled ? "the memory is pooled and owned at once"
            : s.Phase == Pooled && s.Refs != 0 ? "a reference is held on a pooled memory"
            : null);

    private static bool IsFinal(State s) => s.T1 == 99 && s.T2 == 99 && s.T3 == 99 && s.R == 0 && !s.SweepQueued;

    private static IEnumerable<(string, State)> Steps(State s, Protocol protocol, bool disposes)
    {
        if (s.Broken is not null)
        {
            yield break;
        }

        // ---- T1 ----
        switch (s.T1)
        {
            case 0 when s.Pool == 1:
                yield return ("T1 rents the memory for E1", Rent(s, protocol, owner: 1) with { T1 = 1, E1ByInstance = true });
                break;
            case 1:
                // A call copies the key: a reference with E1's generation. E1 is alive (the instance holds it).
                if (s.Phase == Owned && s.Gen == s.E1Gen)
                {
                    yield return ("T1's call takes a reference", s with { Refs = (byte)(s.Refs + 1), T1 = 2 });
                }
                else
                {
                    yield return ("T1's call cannot take a reference", s with { Broken = "a live owner's reference failed" });
                }

                break;
            case 2:
                yield return ("T1's call gives its reference back", ReleaseRef(s, protocol) with { T1 = 3 });
                yield return ("T1's native call fails; the reference is given back in a finally", ReleaseRef(s, protocol) with { T1 = 3 });
                break;
            case 3 when disposes:
                yield return ("T1 disposes: the instance lets go of E1", s with { E1ByInstance = false, E1ByFrame = true, T1 = 4 });
                yield return ("T1 changes the key in place under the lifecycle lock", s with { E1ByFrame = true, T1 = 20 });
                break;
            case 3:
                yield return ("T1 drops the instance without Dispose", s with { E1ByInstance = false, T1 = 99 });
                yield return ("T1 changes the key in place under the lifecycle lock", s with { E1ByFrame = true, T1 = 20 });
                yield return ("T1 changes the key in place, its caller's last use of the instance", s with { E1ByFrame = true, DropAfterChange = true, T1 = 20 });
                break;
            case 4:
                // The close reads E1's memory and generation; before the fix nothing used E1 after that.
                yield return ("T1 reads E1's memory and generation", s with { T1 = 5, E1ByFrame = protocol == Protocol.Now });
                break;
            case 5:
                yield return ("T1 closes the memory", Close(s, protocol, s.E1Gen) with { T1 = 6 });
                break;
            case 6:
                yield return ("T1's close returns (GC.KeepAlive(E1) ends)", s with { E1ByFrame = false, T1 = 99 });
                break;

            // The key change in place (KeyEpoch.TryRewrite and WriteKey): no reference is taken on the memory.
            case 20 when s.DropAfterChange:
                // Nothing reports the instance any more once its setter has read the epoch: only the frame reports E1.
                yield return ("T1's instance is no longer reported: only the key change's frame reports E1", s with { E1ByInstance = false, T1 = 21 });
                break;
            case 20:
                yield return ("T1's key change marks the version odd", s with { T1 = 21 });
                break;
            case 21:
                yield return ("T1's key change reads E1's memory", s with { T1 = 22, E1ByFrame = protocol != Protocol.NowWithoutKeepAlive });
                break;
            case 22:
                yield return ("T1 writes the new key bytes with no reference", WriteWithoutReference(s, s.E1Gen) with { T1 = 23 });
                break;
            case 23:
                yield return ("T1's key change returns (GC.KeepAlive(E1) ends)", s with { E1ByFrame = false, T1 = s.DropAfterChange ? (byte)99 : (byte)3 });
                break;
        }

        // ---- T2: a later key, once the memory is pooled ----
        switch (s.T2)
        {
            case 0 when s.Pool == 1 && s.T1 != 0:
                yield return ("T2 rents the memory for E2", Rent(s, protocol, owner: 2) with { T2 = 1 });
                break;
            case 1:
                if (s.Phase == Owned && s.Gen == s.E2Gen)
                {
                    yield return ("T2's call takes a reference", s with { Refs = (byte)(s.Refs + 1), T2 = 2 });
                }
                else if (protocol == Protocol.Before)
                {
                    // RentAfterRelease: the current epoch is still E2, whose reference keeps failing: the same state again.
                    yield return ("T2's call retries", s);
                }
                else
                {
                    yield return ("T2's call fails under the lifecycle lock", s with { Broken = "a live owner's reference failed (Invariant)" });
                }

                break;
            case 2:
                yield return ("T2's call gives its reference back", ReleaseRef(s, protocol) with { T2 = 3 });
                break;
            case 3:
                yield return ("T2 closes the memory", Close(s, protocol, s.E2Gen) with { T2 = 99 });
                break;
        }

        // ---- T3: a call on T1's instance from another thread, while the instance still holds E1 ----
        switch (s.T3)
        {
            case 0 when s.E1ByInstance:
                yield return ("T3 reads the instance's epoch E1", s with { T3 = 1 });
                break;
            case 0 when s.T1 >= 3:
                yield return ("T3 finds the instance disposed or dropped: nothing to do", s with { T3 = 99 });
                break;
            case 1 when protocol == Protocol.RewriteWithoutLock:
                yield return ("T3 writes a new key into E1's memory with no reference and no lock", WriteWithoutReference(s, s.E1Gen) with { T3 = 99 });
                break;
            case 1 when s.Phase == Owned && s.Gen == s.E1Gen:
                yield return ("T3 takes a reference on E1's memory", s with { Refs = (byte)(s.Refs + 1), T3 = 2 });
                break;
            case 1:
                // E1 was closed by Dispose since T3 read it: the call moves to the instance's next key (not modelled).
                yield return ("T3's reference fails: Dispose overtook it, the call takes the next key", s with { T3 = 99 });
                break;
            case 2:
                yield return ("T3 gives its reference back", ReleaseRef(s, protocol) with { T3 = 99 });
                break;
        }

        // ---- the collector: collections keep coming (each queues a sweep); one that clears a weak handle is always
        // possible, and at most three clear nothing (to keep the model finite) ----
        bool e1Reported = s.E1ByInstance || s.E1ByFrame || s.T1 is 1 or 2 || s.T3 is 1 or 2;
        bool e2Reported = s.T2 is > 0 and < 99;
        if ((s.Target == 1 && !e1Reported) || (s.Target == 2 && !e2Reported))
        {
            yield return ($"GC clears the weak handle of E{s.Target}", s with { Target = 0, SweepQueued = true });
        }
        else if (s.Collections < 3)
        {
            yield return ("GC collects, clearing nothing", s with { SweepQueued = true, Collections = (byte)(s.Collections + 1) });
        }

        // ---- the reclaimer: a sweep after each collection ----
        switch (s.R)
        {
            case 0 when s.SweepQueued:
                yield return ("R reads the state", s with { SweepQueued = false, R = s.Phase == Owned ? (byte)1 : (byte)0, RPhase = s.Phase, RGen = s.Gen, RRefs = s.Refs });
                break;
            case 1:
                yield return (s.Target == 0 ? "R reads a null weak handle" : "R reads a live weak handle", s with { R = s.Target == 0 ? (byte)2 : (byte)0 });
                break;
            case 2:
                if (s.Phase == s.RPhase && s.Gen == s.RGen && s.Refs == s.RRefs)
                {
                    State closed = s with { Phase = Closed, R = 0 };
                    yield return ("R closes the memory for the dropped owner", closed.Refs == 0 ? Recycle(closed, protocol) : closed);
                }
                else if (s.Phase == Owned && s.Gen == s.RGen)
                {
                    yield return ("R's compare-exchange fails on a reference count: it tries again", s with { RRefs = s.Refs });
                }
                else
                {
                    yield return ("R's compare-exchange fails: the tenure moved on", s with { R = 0 });
                }

                break;
        }
    }

    // Pooled → owned. Before the fix a rent kept the generation (the recycle moved it on); today the rent moves it on.
    private static State Rent(State s, Protocol protocol, byte owner)
    {
        byte gen = protocol != Protocol.Before ? (byte)(s.Gen + 1) : s.Gen;
        State owned = s with { Pool = 0, Phase = Owned, Gen = gen, Target = owner };
        return owner == 1 ? owned with { E1Gen = gen } : owned with { E2Gen = gen };
    }

    // A key change's write (WriteKey): it takes no reference, so it is safe only if the epoch's tenure is still open.
    private static State WriteWithoutReference(State s, byte gen) =>
        s.Phase == Owned && s.Gen == gen && s.Pool == 0 ? s : s with { Broken = "a key change wrote into a memory its epoch no longer owns" };

    private static State ReleaseRef(State s, Protocol protocol)
    {
        State released = s with { Refs = (byte)(s.Refs - 1) };
        return released.Phase == Closed && released.Refs == 0 ? Recycle(released, protocol) : released;
    }

    // The owner's close: before the fix an OR of the closed bit whatever the state (recycling when no reference is
    // held); today a compare-exchange from this owner's open tenure, which throws otherwise.
    private static State Close(State s, Protocol protocol, byte gen)
    {
        if (protocol != Protocol.Before && (s.Phase != Owned || s.Gen != gen))
        {
            return s with { Broken = "an owner's close found another tenure (Invariant)" };
        }

        State closed = s with { Phase = Closed };
        return closed.Refs == 0 ? Recycle(closed, protocol) : closed;
    }

    private static State Recycle(State s, Protocol protocol) =>
        s with { Phase = Pooled, Target = 0, Pool = (byte)(s.Pool + 1), Gen = protocol == Protocol.Before ? (byte)(s.Gen + 1) : s.Gen };
}
