using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using CachedCryptography.Benchmarks;

namespace CachedCryptography.Breakdown;

/// <summary>
/// Where one steady 16 B call's cost goes, layer by layer (the layers are listed in <see cref="Layers"/>).
/// <list type="bullet">
/// <item><c>--time</c> (default): nanoseconds per call for every operation and layer (median of 7 loops of ~20 ms),
/// as CSV <c>operation,layer,median_ns</c>.</item>
/// <item><c>--callgrind N1 N2</c>: for use under <c>valgrind --tool=callgrind</c> with the marker helper
/// (<c>CACHEDAES_CGMARK</c>, see breakdown.sh): after warm-up, each operation and layer runs N1 calls and then N2
/// calls, each between a counter reset and a named dump, so instructions per call = (dump N2 - dump N1) / (N2 - N1).</item>
/// <item><c>--list</c>: the layers as CSV <c>layer,description</c>.</item>
/// <item><c>--ops EncryptEcb,EncryptCbc</c> / <c>--layers pinvoke,public</c>: a subset.</item>
/// </list>
/// Every call is checked once against stock's bytes before anything is measured.
/// </summary>
internal static class Program
{
    // The timed (JIT) run: the tiered JIT promotes a hot method in several steps (tier 0, instrumented, optimized
    // with profile data), each after a pause and a background compile. (The callgrind run is a native AOT build,
    // already optimized; see breakdown.sh.)
    private static readonly int WarmUpRounds =
        int.TryParse(Environment.GetEnvironmentVariable("BREAKDOWN_WARMUP_ROUNDS"), CultureInfo.InvariantCulture, out int rounds) ? rounds : 30;

    private const int MeasuredRounds = 5;

    private static int Main(string[] args)
    {
        List<string> rest = [.. args];
        if (rest.Remove("--list"))
        {
            Console.WriteLine("layer,description");
            foreach (Layer layer in Layers.All)
            {
                Console.WriteLine($"{layer.Name},\"{layer.Description.Replace("\"", "\"\"", StringComparison.Ordinal)}\"");
            }

            return 0;
        }

        CipherOperation[] operations = Enum.GetValues<CipherOperation>();
        IReadOnlyList<Layer> layers = Layers.All;
        int n1 = 0;
        int n2 = 0;
        for (int i = 0; i < rest.Count; i++)
        {
            switch (rest[i])
            {
                case "--ops":
                    operations = [.. rest[++i].Split(',').Select(Enum.Parse<CipherOperation>)];
                    break;
                case "--layers":
                    HashSet<string> names = [.. rest[++i].Split(',')];
                    layers = [.. Layers.All.Where(l => names.Contains(l.Name))];
                    break;
                case "--callgrind":
                    n1 = int.Parse(rest[++i], CultureInfo.InvariantCulture);
                    n2 = int.Parse(rest[++i], CultureInfo.InvariantCulture);
                    break;
                case "--time":
                    break;
                default:
                    Console.Error.WriteLine($"Unknown argument {rest[i]} (see Program.cs).");
                    return 2;
            }
        }

        List<(CipherOperation Operation, Layer Layer, Action Call)> calls = [];
        List<Fixture> fixtures = [];
        foreach (CipherOperation operation in operations)
        {
            // One fixture per layer, so that no layer shares a handle or buffer state with another.
            foreach (Layer layer in layers)
            {
                Fixture fixture = new(operation);
                fixtures.Add(fixture);
                Action call = layer.Create(fixture);
                call();
                if (layer.Name != "harness" && !fixture.OutputIsCorrect(layer.Name))
                {
                    Console.Error.WriteLine($"{operation} {layer.Name}: wrong output; nothing measured.");
                    return 3;
                }

                calls.Add((operation, layer, call));
            }
        }

        WarmUp(calls.Select(c => c.Call).ToArray());

        if (n2 > n1 && n1 > 0)
        {
            if (!Callgrind.Enabled)
            {
                Console.Error.WriteLine("--callgrind needs CACHEDAES_CGMARK (run it through breakdown.sh).");
                return 2;
            }

            // Several rounds: breakdown.sh takes the median of the later ones and reports their spread (a check
            // that nothing, such as a late JIT tier-up, was still changing).
            for (int round = 1; round <= MeasuredRounds; round++)
            {
                foreach ((CipherOperation operation, Layer layer, Action call) in calls)
                {
                    foreach (int n in (int[])[n1, n2])
                    {
                        Callgrind.Zero();
                        Loop(call, n);
                        Callgrind.Dump($"{round}/{operation}/{layer.Name}/{n}");
                    }
                }
            }

            Console.WriteLine($"dumped {calls.Count * 2 * MeasuredRounds} segments");
        }
        else
        {
            Console.WriteLine("operation,layer,median_ns");
            foreach ((CipherOperation operation, Layer layer, Action call) in calls)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{operation},{layer.Name},{MedianNanoseconds(call):0.0}"));
            }
        }

        foreach (Fixture fixture in fixtures)
        {
            fixture.Dispose();
        }

        return 0;
    }

    // Several rounds with pauses, so the tiered JIT (which waits for a quiet 100 ms before counting calls) has
    // promoted every method on the path to optimized code before anything is measured.
    private static void WarmUp(Action[] calls)
    {
        for (int round = 0; round < WarmUpRounds; round++)
        {
            foreach (Action call in calls)
            {
                Loop(call, 500);
            }

            Thread.Sleep(100);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Loop(Action call, int n)
    {
        for (int i = 0; i < n; i++)
        {
            call();
        }
    }

    private static double MedianNanoseconds(Action call)
    {
        // Calibrate to ~20 ms per loop, then take the median of 7 loops.
        int n = 1_000;
        long target = Stopwatch.Frequency / 50;
        long elapsed = Time(call, n);
        if (elapsed > 0)
        {
            n = (int)Math.Clamp(n * target / elapsed, 100, 50_000_000);
        }

        double[] perCall = new double[7];
        for (int i = 0; i < perCall.Length; i++)
        {
            perCall[i] = Time(call, n) * 1e9 / Stopwatch.Frequency / n;
        }

        Array.Sort(perCall);
        return perCall[perCall.Length / 2];
    }

    private static long Time(Action call, int n)
    {
        long start = Stopwatch.GetTimestamp();
        Loop(call, n);
        return Stopwatch.GetTimestamp() - start;
    }
}
