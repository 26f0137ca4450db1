using System;
using System.Collections.Generic;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// The lease protocol over one handle slot (docs/design-notes.md, "Ownership", table S; <c>KeyEpoch.Handles.cs</c>) as a
/// model under x86's memory order (TSO: a thread's plain stores wait in its store buffer, its later loads may pass them,
/// interlocked operations and fences drain it), checked over every interleaving by <see cref="ModelChecker"/>. A caller
/// makes two calls on the instance while a key change rewrites the key and, in one variant, <c>Dispose</c> closes the
/// epoch; every native call (making a handle, using it, re-keying it) may fail.
/// </summary>
/// <remarks>
/// The invariants: a handle is given back at most once and never while a call or a sweep holds it; at the end no handle
/// of an older key (and, once closed, no handle at all) is cached, and every handle made is cached or given back; a
/// failed handle is never cached; the slot is never left busy. The model of the protocol without the sweep's
/// process-wide barrier must fail: the returning call's store can sit in its store buffer while both sides miss each
/// other.
/// <para>How the model maps the code's <c>Slot</c> (a busy flag and a handle): the slot here is one value, empty, a
/// handle, or busy. A party holds the slot with one compare-exchange on the flag (<c>TryHold</c>: a full fence, so its
/// own buffered stores drain first) and lets it go with a plain store of the flag (<c>Let</c>), which waits in its store
/// buffer. The handle field is written only by the holder, before its <c>Let</c>, and read by others only after they
/// saw the flag clear (a load or a compare-exchange of the flag), so under TSO's first-in-first-out buffers it becomes
/// visible together with the flag: the model folds the two into one buffered store of the slot's next value. While a
/// call holds the slot its handle stays in the handle field; nobody reads it there, so the model shows the slot busy.
/// Taking a handle back out after a change (<c>GiveBackFromSlot</c>) and a sweep's give-back hold the slot and let it go
/// empty with a buffered store, so the slot stays busy for the others until that store drains.</para>
/// </remarks>
public class HandleSlotModelTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void The_slot_protocol_holds_over_every_interleaving_and_native_failure(bool disposes)
    {
        ModelChecker.Result result = ModelChecker.Explore(new State { Closes = disposes }, s => Steps(s, barrier: true), Invariant, IsFinal);
        Assert.True(result.Violation is null, result.ToString());
        Assert.True(result.States > 1_000, $"only {result.States} states: the model explores too little");
    }

    [Theory]
    [InlineData(false, "of an older key is cached after the key change")]
    [InlineData(true, "is cached by a closed epoch")]
    public void Without_the_process_wide_barrier_a_handle_stays_cached_that_must_not(bool disposes, string found)
    {
        ModelChecker.Result result = ModelChecker.Explore(new State { Closes = disposes }, s => Steps(s, barrier: false), Invariant, IsFinal);
        Assert.NotNull(result.Violation);
        Assert.Contains(found, result.Violation, StringComparison.Ordinal);
    }

    private const byte Empty = 0, Busy = 9;

    private record struct State
    {
        // Memory: the slot (0 empty, 1-3 a handle, 9 busy), the key version (0, then 2), whether the epoch is closed.
        public byte Slot, Version;
        public bool Closed;

        // Handles 1-3: made, the version each was keyed with, failed, how often given back.
        public byte Made;
        public byte V1, V2, V3;
        public bool F1, F2, F3;
        public byte G1, G2, G3;

        // The caller: program counter, calls done, the handle it holds, whether that handle is its own (not from the
        // slot), and its store buffer (one plain store of the slot, waiting).
        public byte C, Calls, Held;
        public bool Own, Buffered;
        public byte BufferedValue;

        // The key change: program counter, the handle it took out of the slot, whether a sweep found the slot busy, and
        // its store buffer (one plain store of the slot, waiting).
        public byte K, KHeld;
        public bool KSawBusy, KBuffered;
        public byte KBufferedValue;

        // Dispose, in the variants where it runs (Closes): program counter, whether its sweep found the slot busy, and
        // its store buffer (the store that lets the slot go empty after a give-back, waiting).
        public bool Closes;
        public byte D;
        public bool DSawBusy, DBuffered;

        public string? Broken;
    }

    private static byte VersionOf(State s, byte h) => h switch { 1 => s.V1, 2 => s.V2, _ => s.V3 };

    private static bool Failed(State s, byte h) => h switch { 1 => s.F1, 2 => s.F2, _ => s.F3 };

    private static byte GivenBack(State s, byte h) => h switch { 1 => s.G1, 2 => s.G2, _ => s.G3 };

    private static State WithFailed(State s, byte h) => h switch { 1 => s with { F1 = true }, 2 => s with { F2 = true }, _ => s with { F3 = true } };

    private static State WithVersion(State s, byte h, byte v) => h switch { 1 => s with { V1 = v }, 2 => s with { V2 = v }, _ => s with { V3 = v } };

    // Gives a handle back to the backend; a second time, or while a call or a sweep holds it, breaks the protocol.
    private static State GiveBack(State s, byte h)
    {
        if (GivenBack(s, h) != 0)
        {
            return s with { Broken = $"handle {h} given back twice" };
        }

        return h switch { 1 => s with { G1 = 1 }, 2 => s with { G2 = 1 }, _ => s with { G3 = 1 } };
    }

    // An interlocked operation or a fence by the caller: its buffered store reaches memory first.
    private static State Drain(State s) => s.Buffered ? s with { Slot = s.BufferedValue, Buffered = false } : s;

    // The same for the key change's thread.
    private static State DrainK(State s) => s.KBuffered ? s with { Slot = s.KBufferedValue, KBuffered = false } : s;

    // The same for Dispose's thread (its one store is always "empty").
    private static State DrainD(State s) => s.DBuffered ? s with { Slot = Empty, DBuffered = false } : s;

    // What the key change's thread reads from the slot: its own buffered store first, else memory.
    private static byte KSees(State s) => s.KBuffered ? s.KBufferedValue : s.Slot;

    private static string? Invariant(State s)
    {
        if (s.Broken is not null)
        {
            return s.Broken;
        }

        if (IsFinal(s))
        {
            for (byte h = 1; h <= s.Made; h++)
            {
                bool cached = s.Slot == h;
                if (cached == (GivenBack(s, h) != 0))
                {
                    return cached ? $"handle {h} is cached and given back" : $"handle {h} is neither cached nor given back (leaked)";
                }

                if (cached && s.Closed)
                {
                    return $"handle {h} is cached by a closed epoch";
                }

                if (cached && VersionOf(s, h) != s.Version)
                {
                    return $"handle {h} of an older key is cached after the key change and every call returned";
                }

                if (cached && Failed(s, h))
                {
                    return $"failed handle {h} is cached";
                }
            }

            if (s.Slot == Busy)
            {
                return "the slot is left busy";
            }
        }

        return null;
    }

    private static bool IsFinal(State s) => s.C == 99 && s.K == 99 && (!s.Closes || s.D == 99) && !s.Buffered && !s.KBuffered && !s.DBuffered;

    private static IEnumerable<(string, State)> Steps(State s, bool barrier)
    {
        if (s.Broken is not null)
        {
            yield break;
        }

        // A buffered store may reach memory at any time.
        if (s.Buffered)
        {
            yield return ("the caller's store reaches memory", Drain(s));
        }

        if (s.KBuffered)
        {
            yield return ("the key change's store reaches memory", DrainK(s));
        }

        if (s.DBuffered)
        {
            yield return ("Dispose's store reaches memory", DrainD(s));
        }

        foreach ((string, State) step in CallerSteps(s))
        {
            yield return step;
        }

        foreach ((string, State) step in KeyChangeSteps(s, barrier))
        {
            yield return step;
        }

        if (s.Closes)
        {
            foreach ((string, State) step in DisposeSteps(s, barrier))
            {
                yield return step;
            }
        }
    }

    private static IEnumerable<(string, State)> CallerSteps(State s)
    {
        switch (s.C)
        {
            case 0 when s.Calls < 2:
            {
                // TryHold: a compare-exchange of the busy flag (drains the caller's buffer first), then a read of the
                // handle; a busy slot is left as it is.
                State d = Drain(s);
                byte held = d.Slot;
                if (held == Busy)
                {
                    // Another party (a key change's re-key) holds it: a handle of the call's own.
                    yield return ("C finds the slot busy: a handle of its own", d with { C = 1, Own = true });
                }
                else if (held == Empty)
                {
                    yield return ("C reserves the empty slot", d with { Slot = Busy, C = 1, Own = false });
                }
                else if (VersionOf(d, held) == d.Version && !d.Closed)
                {
                    yield return ($"C takes handle {held}", d with { Slot = Busy, C = 2, Held = held, Own = false });
                }
                else if (VersionOf(d, held) == d.Version)
                {
                    // A closed epoch's cached handle, taken before the close's sweep: used, then given back.
                    yield return ($"C takes handle {held} of a closed epoch", d with { Slot = Busy, C = 2, Held = held, Own = false });
                }
                else
                {
                    // An older key's handle the key change has not swept yet: given back, and a new one made.
                    yield return ($"C gives back handle {held} of an older key", GiveBack(d, held) with { Slot = Busy, C = 1, Own = false });
                }

                break;
            }

            case 1:
            {
                // Make a handle with the current key (a copy of the key under its version); the native call may fail.
                if (s.Made == 3)
                {
                    yield return ("C cannot make more handles in this model", s with { Broken = "the model needs more than three handles" });
                    break;
                }

                byte h = (byte)(s.Made + 1);
                State made = WithVersion(s with { Made = h, Held = h, C = 2 }, h, s.Version);
                yield return ($"C makes handle {h} at version {s.Version}", made);
                State failed = s.Own ? s with { C = 9 } : s with { Buffered = true, BufferedValue = Empty, C = 9 };
                yield return ("C's native create fails: the slot is let go (buffered), the call throws", failed);
                break;
            }

            case 2:
            {
                // The call's native work, which may fail (the handle is then faulted).
                yield return ("C uses its handle", s with { C = 3 });
                yield return ("C's native call fails: the handle is faulted", WithFailed(s, s.Held) with { C = 3 });
                break;
            }

            case 3:
            {
                byte h = s.Held;
                if (s.Own)
                {
                    yield return ($"C gives back its own handle {h}", GiveBack(s, h) with { C = 9, Held = 0 });
                }
                else if (!Failed(s, h) && VersionOf(s, h) == s.Version)
                {
                    // Return: the handle is in the slot already; Let, a plain store (buffered), then the reads of IsStale.
                    yield return ($"C lets the slot go with handle {h} in it (buffered)", s with { Buffered = true, BufferedValue = h, C = 4 });
                }
                else
                {
                    // A faulted handle or one of an older key: the slot is emptied and let go (plain stores) and the
                    // handle given back.
                    yield return ($"C empties the slot and gives back handle {h}", GiveBack(s with { Buffered = true, BufferedValue = Empty }, h) with { C = 9, Held = 0 });
                }

                break;
            }

            case 4:
            {
                // IsStale: the caller's loads of the holders and the version, which may pass its buffered store.
                byte h = s.Held;
                if (s.Closed || VersionOf(s, h) != s.Version)
                {
                    // GiveBackFromSlot: TryHold (drains the buffer); if the slot still holds this handle, it is emptied
                    // and let go (buffered), and the handle given back; otherwise the slot is let go as it was.
                    State d = Drain(s);
                    yield return d.Slot == h
                        ? ($"C sees the change and takes handle {h} back out", GiveBack(d with { Slot = Busy, Buffered = true, BufferedValue = Empty }, h) with { C = 9, Held = 0 })
                        : ($"C sees the change, but the sweep took handle {h}", d with { C = 9, Held = 0 });
                }
                else
                {
                    yield return ("C sees no change", s with { C = 9, Held = 0 });
                }

                break;
            }

            case 9:
                yield return s.Calls == 1 ? ("C is done", s with { C = 99, Calls = 2 }) : ("C makes its next call", s with { C = 0, Calls = 1 });
                break;
        }
    }

    private static IEnumerable<(string, State)> KeyChangeSteps(State s, bool barrier)
    {
        switch (s.K)
        {
            case 0 when !s.Closed:
                // The new version, then a full fence (Interlocked.MemoryBarrier).
                yield return ("K rewrites the key (version 2) and fences", DrainK(s) with { Version = 2, K = 1 });
                break;
            case 0:
                yield return ("K finds the epoch closed: a new epoch (not modelled)", s with { K = 99 });
                break;
            case 1:
            case 4:
            {
                // The sweep: a plain load of the slot (its own buffer, else memory: the caller's buffer is invisible).
                byte held = KSees(s);
                bool second = s.K == 4;
                if (held == Empty)
                {
                    yield return ("K's sweep finds the slot empty", s with { K = SweepDoneTo(s, second, barrier) });
                }
                else if (held == Busy)
                {
                    State busy = s with { KSawBusy = true };
                    yield return ("K's sweep finds the slot busy", busy with { K = SweepDoneTo(busy, second, barrier) });
                }
                else
                {
                    // RekeyInPlace: hold the slot (a compare-exchange: K's buffer drains first), then re-key the handle.
                    State d = DrainK(s);
                    if (d.Slot != held)
                    {
                        yield return ("K's hold finds the slot changed: the sweep goes on", d with { K = SweepDoneTo(d, second, barrier) });
                    }
                    else
                    {
                        yield return ($"K holds handle {held}", d with { Slot = Busy, KHeld = held, K = (byte)(second ? 6 : 2) });
                    }
                }

                break;
            }

            case 2:
            case 6:
            {
                byte h = s.KHeld;
                byte next = s.K == 2 ? (byte)3 : (byte)7;
                if (VersionOf(s, h) == 2)
                {
                    yield return ($"K finds handle {h} already at the new key", s with { K = next });
                }
                else
                {
                    yield return ($"K re-keys handle {h}", WithVersion(s, h, 2) with { K = next });

                    // The slot is emptied and let go with plain stores (buffered), and the handle given back.
                    yield return ($"K's native re-key of handle {h} fails: the slot is freed and the handle given back", GiveBack(s with { KBuffered = true, KBufferedValue = Empty, KHeld = 0 }, h) with { K = (byte)(next == 3 ? 10 : 99) });
                }

                break;
            }

            case 3:
            case 7:
                // Let the slot go with the re-keyed handle in it (a plain store, buffered), then the reads of IsStale.
                yield return ($"K lets the slot go with handle {s.KHeld} in it (buffered)", s with { KBuffered = true, KBufferedValue = s.KHeld, K = (byte)(s.K == 3 ? 8 : 9) });
                break;
            case 8:
            case 9:
            {
                byte h = s.KHeld;
                byte next = s.K == 8 ? SweepDoneTo(s, second: false, barrier) : (byte)99;
                if (s.Closed)
                {
                    State d = DrainK(s);
                    yield return d.Slot == h
                        ? ($"K sees the close and takes handle {h} back out", GiveBack(d with { Slot = Busy, KBuffered = true, KBufferedValue = Empty, KHeld = 0 }, h) with { K = next })
                        : ($"K sees the close, but the close's sweep took handle {h}", d with { KHeld = 0, K = next });
                }
                else
                {
                    yield return ("K sees no close", s with { KHeld = 0, K = next });
                }

                break;
            }

            case 10:
                yield return ("K's sweep goes on", s with { K = SweepDoneTo(s, second: false, barrier) });
                break;
            case 5:
                // Interlocked.MemoryBarrierProcessWide: every processor's buffered stores reach memory.
                yield return ("K issues the process-wide barrier", DrainD(DrainK(Drain(s))) with { K = 4 });
                break;
        }
    }

    private static byte SweepDoneTo(State s, bool second, bool barrier) =>
        second ? (byte)99 : s.KSawBusy && barrier ? (byte)5 : (byte)99;

    private static IEnumerable<(string, State)> DisposeSteps(State s, bool barrier)
    {
        switch (s.D)
        {
            case 0:
                // The last holder lets go: an interlocked add (a full fence).
                yield return ("D closes the epoch", s with { Closed = true, D = 1 });
                break;
            case 1:
            case 3:
            {
                // D's own buffered store first, else memory.
                byte held = s.DBuffered ? Empty : s.Slot;
                bool second = s.D == 3;
                byte after = second ? (byte)99 : (byte)(held == Busy && barrier ? 2 : 99);
                if (held == Busy)
                {
                    yield return ("D's sweep finds the slot busy", s with { D = after, DSawBusy = true });
                }
                else if (held == Empty)
                {
                    yield return ("D's sweep finds the slot empty", s with { D = after });
                }
                else
                {
                    // The sweep holds the slot (a compare-exchange), empties it and lets it go (buffered), then gives the
                    // handle back.
                    yield return ($"D takes handle {held} out and gives it back", GiveBack(s with { Slot = Busy, DBuffered = true }, held) with { D = after });
                }

                break;
            }

            case 2:
                yield return ("D issues the process-wide barrier", DrainD(DrainK(Drain(s))) with { D = 3 });
                break;
        }
    }
}
