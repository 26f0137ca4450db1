using System;
using System.Collections.Generic;
using System.Linq;

namespace CachedCryptography.Tests.Ownership;

/// <summary>
/// A small explicit-state model checker: from an initial state, every interleaving of the model's steps, each state
/// checked against the model's invariants, and every reachable state checked to have a way to finish (so that a call
/// that can wait or retry forever, or a deadlock, is a violation too). States are value types compared by value; the
/// result carries the shortest-found trace to the first violation.
/// </summary>
internal static class ModelChecker
{
    /// <summary>What a check found: the states explored, and the first violation with the steps that lead to it.</summary>
    internal sealed record Result(int States, string? Violation, IReadOnlyList<string> Trace)
    {
        public override string ToString() =>
            Violation is null ? $"{States} states, no violation" : $"{Violation} after {States} states, trace:\n  {string.Join("\n  ", Trace)}";
    }

    /// <summary>
    /// Explores every state reachable from <paramref name="initial"/> by <paramref name="steps"/> (each a label and the
    /// state after it), breadth first. A state for which <paramref name="invariant"/> returns a text violates; a state
    /// with no step that is not <paramref name="isFinal"/> is a deadlock; a state from which no final state can be
    /// reached waits forever.
    /// </summary>
    public static Result Explore<TState>(
        TState initial,
        Func<TState, IEnumerable<(string Label, TState Next)>> steps,
        Func<TState, string?> invariant,
        Func<TState, bool> isFinal,
        int maxStates = 2_000_000)
        where TState : struct, IEquatable<TState>
    {
        var index = new Dictionary<TState, int> { [initial] = 0 };
        var states = new List<TState> { initial };
        var parent = new List<(int From, string Label)> { (-1, "start") };
        var successors = new List<List<int>>();
        for (int i = 0; i < states.Count; i++)
        {
            TState state = states[i];
            if (invariant(state) is { } broken)
            {
                return new Result(states.Count, broken, Trace(parent, i));
            }

            var next = new List<int>();
            foreach ((string label, TState after) in steps(state))
            {
                if (!index.TryGetValue(after, out int j))
                {
                    if (states.Count >= maxStates)
                    {
                        return new Result(states.Count, $"more than {maxStates} states: the model is too large to check", []);
                    }

                    j = states.Count;
                    index[after] = j;
                    states.Add(after);
                    parent.Add((i, label));
                }

                next.Add(j);
            }

            if (next.Count == 0 && !isFinal(state))
            {
                return new Result(states.Count, "deadlock: no step is possible and the model has not finished", Trace(parent, i));
            }

            successors.Add(next);
        }

        // Every state must be able to reach a final one: walk back from the final states.
        var predecessors = new List<int>[states.Count];
        for (int i = 0; i < states.Count; i++)
        {
            foreach (int j in successors[i])
            {
                (predecessors[j] ??= []).Add(i);
            }
        }

        var canFinish = new bool[states.Count];
        var queue = new Queue<int>(Enumerable.Range(0, states.Count).Where(i => isFinal(states[i])));
        foreach (int i in queue)
        {
            canFinish[i] = true;
        }

        while (queue.Count > 0)
        {
            foreach (int p in predecessors[queue.Dequeue()] ?? [])
            {
                if (!canFinish[p])
                {
                    canFinish[p] = true;
                    queue.Enqueue(p);
                }
            }
        }

        int stuck = Array.IndexOf(canFinish, false);
        return stuck < 0
            ? new Result(states.Count, null, [])
            : new Result(states.Count, "waits forever: no way to finish from this state (a call retries or waits for good)", Trace(parent, stuck));
    }

    private static List<string> Trace(List<(int From, string Label)> parent, int state)
    {
        var trace = new List<string>();
        for (int i = state; i >= 0; i = parent[i].From)
        {
            trace.Add(parent[i].Label);
        }

        trace.Reverse();
        return trace;
    }
}
