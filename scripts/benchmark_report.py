#!/usr/bin/env python3
"""Writes docs/benchmarks.md and its chart from one run of scripts/benchmark-report.sh.

Inputs (in the work folder the shell script fills):
  bdn/results/*-report-brief.json   BenchmarkDotNet's own JSON export (JsonExporter.Brief): the suite's results
  floor.csv                         benchmarks/native-floor/floor.sh (native ns per call, per row)
  breakdown.csv                     benchmarks/CachedAes.Breakdown/breakdown.sh (optional)
  env.txt                           key=value lines: machine, OS, command, load averages, commit
Outputs: the markdown report, the chart's data file and gnuplot script next to it, and the PNG (gnuplot).

Only the Python standard library is used. Every table is built from the exported numbers; nothing is typed in.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import subprocess
import sys
from collections import OrderedDict, defaultdict

CIPHER_OPS = ["EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc"]
WRAP_OPS = ["EncryptKeyWrapPadded", "DecryptKeyWrapPadded"]
CIPHER_TICS = [(16, "16"), (32, "32"), (64, "64"), (128, "128"), (1024, "1K"), (16384, "16K")]
WRAP_TICS = [(1, "1"), (8, "8"), (16, "16"), (32, "32"), (512, "512"), (4096, "4K")]


# ---------------------------------------------------------------- reading

def read_csv(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read_comments(path):
    meta = {}
    if path and os.path.exists(path):
        for line in open(path):
            if line.startswith("# ") and "=" in line:
                key, value = line[2:].split("=", 1)
                meta[key.strip()] = value.strip()
    return meta


def read_env(path):
    env = OrderedDict()
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                key, value = line.rstrip("\n").split("=", 1)
                env[key] = value
    return env


def read_bdn(results_dir):
    """Every benchmark of every brief JSON export, as flat dicts; plus the host info of the first file."""
    return read_bdn_files(sorted(glob.glob(os.path.join(results_dir, "*-report-brief.json"))))


def read_bdn_files(paths):
    benchmarks, host = [], {}
    for path in paths:
        data = json.load(open(path))
        host = host or data.get("HostEnvironmentInfo", {})
        for b in data.get("Benchmarks", []):
            params = dict(p.split("=", 1) for p in b.get("Parameters", "").split("&") if "=" in p)
            stats = b.get("Statistics") or {}
            memory = b.get("Memory") or {}
            benchmarks.append({
                "type": b["Type"],
                "method": b["Method"],
                "params": params,
                "mean": stats.get("Mean"),
                "median": stats.get("Median"),
                "alloc": memory.get("BytesAllocatedPerOperation") if stats else None,
                "job": re.sub(r"^[^:]*: ", "", b.get("DisplayInfo", "")).split("(")[0].strip(),
            })
    return benchmarks, host


# ---------------------------------------------------------------- formatting

def ns(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value < 1_000:
        return f"{value:.1f} ns"
    if value < 1_000_000:
        return f"{value / 1_000:.2f} µs"
    return f"{value / 1_000_000:.2f} ms"


def size(value):
    n = int(value)
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def ratio(a, b, digits=2):
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.{digits}f}"


def alloc(value):
    return "n/a" if value is None else f"{int(value)} B"


def table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def size_param(params):
    for key in ("Size", "Length"):
        if key in params:
            return key, int(params[key])
    return None, None


# ---------------------------------------------------------------- the report

class Report:
    def __init__(self, args):
        self.args = args
        self.benchmarks, self.host = read_bdn(os.path.join(args.work, "bdn", "results"))
        self.floor = {(r["variant"], r["operation"], int(r["size"])): float(r["median_ns"])
                      for r in read_csv(os.path.join(args.work, "floor.csv"))}
        self.floor_meta = read_comments(os.path.join(args.work, "floor.csv"))
        self.breakdown = read_csv(os.path.join(args.work, "breakdown.csv"))
        self.env = read_env(os.path.join(args.work, "env.txt"))
        self.baseline = {}
        if args.baseline:
            # An earlier run's export (for example the docs/benchmarks.json committed with the previous report).
            for b in read_bdn_files([args.baseline])[0]:
                self.baseline[(b["type"], b["method"], tuple(sorted(b["params"].items())))] = b
        self.by_type = OrderedDict()
        for b in self.benchmarks:
            self.by_type.setdefault(b["type"], []).append(b)

    def find(self, type_name, method, **params):
        for b in self.by_type.get(type_name, []):
            if b["method"] == method and all(b["params"].get(k) == str(v) for k, v in params.items()):
                return b
        return None

    # -- pair tables (Stock vs Cached, any type with those two methods)

    def pairs(self, type_name):
        """(operation, size key, size, stock, cached) for every parameter set of a Stock/Cached class."""
        groups = OrderedDict()
        for b in self.by_type.get(type_name, []):
            key = tuple(sorted(b["params"].items()))
            groups.setdefault(key, {})[b["method"]] = b
        out = []
        for key, methods in groups.items():
            params = dict(key)
            size_key, n = size_param(params)
            out.append((params.get("Operation", ""), size_key, n, methods.get("Stock"), methods.get("Cached"), params))
        order = {op: i for i, op in enumerate(CIPHER_OPS + WRAP_OPS)}
        out.sort(key=lambda p: (order.get(p[0], 99), p[0], p[2] or 0))
        return out

    def before(self, b):
        """The same case's mean in the baseline run, or None."""
        if b is None or not self.baseline:
            return None
        return mean(self.baseline.get((b["type"], b["method"], tuple(sorted(b["params"].items())))))

    def before_columns(self, cached):
        if not self.baseline:
            return []
        previous = self.before(cached)
        return [ns(previous), ratio(mean(cached), previous)]

    def before_header(self):
        return ["CachedAes before", "now ÷ before"] if self.baseline else []

    def steady_table(self, type_name):
        rows = []
        for op, _, n, stock, cached, _ in self.pairs(type_name):
            floor = self.floor.get(("floor", op, n))
            s, c = mean(stock), mean(cached)
            rows.append([op, size(n), ns(s), ns(c), ns(floor), speedup(s, c), times_floor(c, floor),
                         alloc(stock and stock["alloc"]), alloc(cached and cached["alloc"])] + self.before_columns(cached))
        header = ["Operation", "Size", "Stock", "CachedAes", "Floor (C)", "Speed-up", "× floor",
                  "Alloc stock", "Alloc CachedAes"] + self.before_header()
        return table(header, rows, ["l"] + ["r"] * (len(header) - 1))

    def single_table(self, type_name, native=True):
        rows = []
        for op, _, n, stock, cached, _ in self.pairs(type_name):
            s, c = mean(stock), mean(cached)
            row = [op, size(n), ns(s), ns(c), ratio(c, s), speedup(s, c)]
            if native:
                row.append(ns(self.floor.get(("stock-sequence", op, n))))
            rows.append(row + [alloc(stock and stock["alloc"]), alloc(cached and cached["alloc"])] + self.before_columns(cached))
        header = ["Operation", "Size", "Stock", "CachedAes", "CachedAes ÷ stock", "Speed-up"]
        if native:
            header.append("Stock's native per-call sequence (C)")
        header += ["Alloc stock", "Alloc CachedAes"] + self.before_header()
        return table(header, rows, ["l"] + ["r"] * (len(header) - 1))

    def shared_table(self, type_name):
        items = self.by_type.get(type_name, [])
        methods = list(OrderedDict.fromkeys(b["method"] for b in items))
        groups = OrderedDict()
        for b in items:
            groups.setdefault((b["params"].get("Operation"), int(b["params"].get("Threads", 0))), {})[b["method"]] = b
        rows = []
        for (op, threads), by_method in groups.items():
            row = [op, threads]
            for m in methods:
                b = by_method.get(m)
                row.append("**failed**" if b is not None and b["mean"] is None else
                           f"{ns(mean(b))} ({alloc(b['alloc'])})" if b else "n/a")
            rows.append(row)
        text = table(["Operation", "Threads"] + methods, rows, ["l", "r"] + ["r"] * len(methods))
        scaling = []
        for m in methods:
            for op in OrderedDict.fromkeys(k[0] for k in groups):
                one, two = groups.get((op, 1), {}).get(m), groups.get((op, 2), {}).get(m)
                if mean(one) and mean(two):
                    scaling.append([m, op, f"{mean(one) / mean(two):.2f}×"])
        if scaling:
            text += ("\n\nThroughput with 2 threads ÷ throughput with 1 thread, the same instance shape "
                     "(1.0 = no gain, 2.0 = perfect scaling on 2 cores):\n\n"
                     + table(["Method", "Operation", "2 threads ÷ 1 thread"], scaling, ["l", "l", "r"]))
        return text

    def generic_table(self, type_name):
        rows = []
        for b in self.by_type.get(type_name, []):
            params = ", ".join(f"{k}={v}" for k, v in b["params"].items())
            rows.append([b["method"], params, ns(mean(b)), alloc(b["alloc"])])
        return table(["Method", "Parameters", "Mean", "Allocated"], rows, ["l", "l", "r", "r"])

    # -- targets

    def targets(self):
        rows = []

        def steady(op, n):
            t = "KwpSteady" if op in WRAP_OPS else "EcbCbcSteady"
            key = "Length" if op in WRAP_OPS else "Size"
            return mean(self.find(t, "Cached", Operation=op, **{key: n})), self.floor.get(("floor", op, n))

        for op, limit in [("EncryptEcb", 2.0), ("DecryptEcb", 2.0), ("EncryptCbc", 2.5), ("DecryptCbc", 2.5)]:
            c, f = steady(op, 16)
            rows.append(target_row(f"Steady {op} 16 B ≤ {limit}× floor", c and f and c / f, limit, "{:.2f}×"))
        for op in CIPHER_OPS:
            c, f = steady(op, 16384)
            rows.append(target_row(f"Steady {op} 16 KiB ≤ 1.1× floor", c and f and c / f, 1.1, "{:.2f}×"))
        c, _ = steady("EncryptKeyWrapPadded", 32)
        rows.append(target_row("Key wrap 32 B ≤ 1.0 µs", c and c / 1000, 1.0, "{:.2f} µs"))
        c, _ = steady("DecryptKeyWrapPadded", 32)
        rows.append(target_row("Key unwrap 32 B ≤ 1.0 µs (same budget)", c and c / 1000, 1.0, "{:.2f} µs"))
        for op in CIPHER_OPS:
            s = mean(self.find("EcbCbcSingle", "Stock", Operation=op, Size=16))
            c = self.find("EcbCbcSingle", "Cached", Operation=op, Size=16)
            rows.append(target_row(f"Single {op} 16 B ≤ 0.25× stock", mean(c) and s and mean(c) / s, 0.25, "{:.2f}×"))
            st = self.find("EcbCbcSingle", "Stock", Operation=op, Size=16)
            if c and st and c["alloc"] is not None and st["alloc"] is not None:
                rows.append([f"Single {op} 16 B allocates no more than stock", f"{c['alloc']} B vs {st['alloc']} B",
                             "yes" if c["alloc"] <= st["alloc"] else "**no**"])
        for op in ("EncryptEcb", "EncryptCbc"):
            one = self.find("EcbCbcShared", "SharedCached", Operation=op, Threads=1)
            two = self.find("EcbCbcShared", "SharedCached", Operation=op, Threads=2)
            if one or two:
                value = mean(one) / mean(two) if mean(one) and mean(two) else None
                rows.append(target_row(f"Shared {op}: 2 threads ≥ 1.8× one thread (one instance)", value, 1.8,
                                       "{:.2f}×", at_least=True))
        allocating = [f"{b['type']}.{b['method']} ({', '.join(f'{k}={v}' for k, v in b['params'].items())})"
                      for b in self.benchmarks
                      if (b["type"].endswith("Steady") or b["type"].endswith("Shared")) and "Cached" in b["method"]
                      and b["alloc"]]
        rows.append(["CachedAes steady state (Steady, Shared) allocates 0 B per call",
                     "all 0 B" if not allocating else "; ".join(allocating), "yes" if not allocating else "**no**"])
        if self.baseline:
            slower = []
            for b in self.benchmarks:
                previous = self.before(b)
                if "Cached" in b["method"] and mean(b) and previous and mean(b) > previous * (1 + self.args.slower_margin):
                    slower.append(f"{b['type']}.{b['method']} ({', '.join(f'{k}={v}' for k, v in b['params'].items())}): "
                                  f"{ns(previous)} → {ns(mean(b))}")
            rows.append([f"No CachedAes case slower than the baseline run (by more than {self.args.slower_margin:.0%})",
                         "none" if not slower else "; ".join(slower), "yes" if not slower else "**no**"])
        missing = [f"{b['type']}.{b['method']} ({', '.join(f'{k}={v}' for k, v in b['params'].items())})"
                   for b in self.benchmarks if b["mean"] is None]
        if missing:
            rows.append(["Every case has a result", "no result: " + "; ".join(missing), "**no**"])
        return table(["Target", "Measured", "Met"], rows, ["l", "r", "l"])

    # -- breakdown

    # The path a call takes, innermost first: Δ is each layer's difference from the one before it on this path.
    # The other rows are references: pinvoke-sgt (its Δ is against pinvoke: what skipping the GC transition
    # saves), the harness's own empty call, other native schemes, and stock.
    BREAKDOWN_PATH = ["native:floor", "pinvoke", "handle", "lease", "oneshot", "public"]
    BREAKDOWN_REFERENCE = {"pinvoke-sgt": "pinvoke"}

    def breakdown_tables(self):
        if not self.breakdown:
            return "_Not measured in this run (`--no-breakdown`)._"
        by_op = OrderedDict()
        descriptions = OrderedDict()
        for r in self.breakdown:
            by_op.setdefault(r["operation"], {})[r["layer"]] = r
            descriptions.setdefault(r["layer"], r["description"])
        path = [layer for layer in self.BREAKDOWN_PATH if layer in descriptions]
        layers = path[:2] + [l for l in self.BREAKDOWN_REFERENCE if l in descriptions] + path[2:] + \
            [l for l in descriptions if l not in path and l not in self.BREAKDOWN_REFERENCE]
        header = ["Layer"]
        for op in by_op:
            header += [f"{op} instr", "Δ", "ns"]

        def instructions(op, layer):
            r = by_op[op].get(layer)
            return float(r["instructions"]) if r and r["instructions"] else None

        rows = []
        for layer in layers:
            row = [f"`{layer}`"]
            for op in by_op:
                r = by_op[op].get(layer)
                instr = instructions(op, layer)
                before = None
                if layer in path and path.index(layer) > 0:
                    before = instructions(op, path[path.index(layer) - 1])
                elif layer in self.BREAKDOWN_REFERENCE:
                    before = instructions(op, self.BREAKDOWN_REFERENCE[layer])
                delta = "" if instr is None or before is None else f"{instr - before:+,.0f}"
                row += ["" if instr is None else f"{instr:,.0f}", delta,
                        "" if not r or not r["median_ns"] else f"{float(r['median_ns']):.1f}"]
            rows.append(row)
        text = table(header, rows, ["l"] + ["r"] * (len(header) - 1))
        text += "\n\n" + "\n".join(f"- `{layer}`: {descriptions[layer]}" for layer in layers)
        return text

    # -- chart

    def chart(self):
        """Writes the data and gnuplot script, runs gnuplot; returns the PNG path or None."""
        panels = []
        for op in CIPHER_OPS + WRAP_OPS:
            t, key = ("KwpSteady", "Length") if op in WRAP_OPS else ("EcbCbcSteady", "Size")
            points = {}
            for b in self.by_type.get(t, []):
                if b["params"].get("Operation") == op:
                    n = int(b["params"][key])
                    points.setdefault(n, {})[b["method"]] = mean(b)
            if not points:
                continue
            # The floor at every size it was measured, so its line shows the shape even where the suite ran few sizes.
            for (variant, floor_op, n) in self.floor:
                if variant == "floor" and floor_op == op:
                    points.setdefault(n, {})
            lines = [f"# {op}: size stock cached floor"]
            for n in sorted(points):
                vals = [points[n].get("Stock"), points[n].get("Cached"), self.floor.get(("floor", op, n))]
                lines.append(f"{n} " + " ".join("NaN" if v is None else f"{v:.3f}" for v in vals))
            panels.append((op, lines))
        if not panels:
            return None
        png = self.args.chart
        data = os.path.splitext(png)[0] + ".dat"
        script = os.path.splitext(png)[0] + ".gp"
        with open(data, "w") as f:
            f.write("\n\n\n".join("\n".join(lines) for _, lines in panels) + "\n")
        columns = 3 if len(panels) > 4 else 2
        rows = (len(panels) + columns - 1) // columns
        title = "CachedAes vs stock Aes.Create() vs the native floor: steady one-shot, ns per call (log scales)"
        if self.args.label:
            title += "\\n" + self.args.label
        gp = [
            f"set terminal pngcairo size {520 * columns},{380 * rows + 70} font 'sans,10'",
            f"set output '{os.path.basename(png)}'",
            "set datafile missing 'NaN'",
            "set logscale xy",
            "set format y '%.0s%c'",
            "set ytics nomirror",
            "set grid xtics ytics lc rgb '#dddddd'",
            "set key bottom right box opaque",
            "set xlabel 'plaintext size (bytes)'",
            "set ylabel 'ns per call'",
            f"set multiplot layout {rows},{columns} title \"{title}\" font 'sans,13'",
        ]
        for index, (op, _) in enumerate(panels):
            tics = WRAP_TICS if op in WRAP_OPS else CIPHER_TICS
            gp += [
                "set xtics (" + ", ".join(f"'{label}' {value}" for value, label in tics) + ") nomirror",
                f"set xrange [{tics[0][0] / 1.6}:{tics[-1][0] * 1.6}]",
                f"set title '{op}' font 'sans,11'",
                f"plot '{os.path.basename(data)}' index {index} using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'stock', "
                f"'' index {index} using 1:3 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'CachedAes', "
                f"'' index {index} using 1:4 with linespoints lw 2 pt 9 dt 2 lc rgb '#2ca02c' title 'floor (C)'",
            ]
        gp.append("unset multiplot")
        with open(script, "w") as f:
            f.write("\n".join(gp) + "\n")
        subprocess.run(["gnuplot", os.path.basename(script)], cwd=os.path.dirname(os.path.abspath(png)), check=True)
        return png

    # -- the document

    def write(self):
        env, host = self.env, self.host
        chart = self.chart()
        known = {"EcbCbcSteady", "KwpSteady", "EcbCbcSingle", "KwpSingle", "EcbCbcTwice", "EcbCbcShared",
                 "DataProtectionRoundTrip"}
        job = ", ".join(sorted({b["job"] for b in self.benchmarks if b["job"]})) or "n/a"
        out = []
        out.append("# CachedAes benchmark report\n")
        out.append("<!-- Generated by scripts/benchmark-report.sh; do not edit by hand: run it again. -->\n")
        if self.args.label:
            out.append(f"> **{self.args.label}**\n")
        out.append(table(["", ""], [
            ["Date", env.get("date", "n/a")],
            ["Command", f"`{env.get('command', 'n/a')}`"],
            ["Commit", env.get("commit", "n/a")],
            ["CPU", f"{env.get('cpu', host.get('ProcessorName', 'n/a'))}, {env.get('cores', '?')} cores "
                    f"({host.get('PhysicalCoreCount', '?')} physical, {host.get('LogicalCoreCount', '?')} logical)"],
            ["Memory", env.get("memory", "n/a")],
            ["OS", f"{env.get('os', host.get('OsVersion', 'n/a'))}, kernel {env.get('kernel', '?')}"],
            [".NET", f"{host.get('RuntimeVersion', 'n/a')}, {host.get('Architecture', '')}, SDK {host.get('DotNetCliVersion', '?')}"],
            ["OpenSSL", f"{self.floor_meta.get('openssl', env.get('openssl', 'n/a'))} ({env.get('libcrypto', 'libcrypto.so.3')})"],
            ["BenchmarkDotNet", f"{host.get('BenchmarkDotNetVersion', 'n/a')}, job {job}"],
            ["Compared with", f"`{self.args.baseline}` ({self.env.get('baseline_note', 'an earlier run')})" if self.args.baseline else "no baseline run"],
            ["Load average (1 min)", f"{env.get('load_before', '?')} before, {env.get('load_after', '?')} after "
                                     f"(on {env.get('cores', '?')} cores)"],
        ], ["l", "l"]))
        out.append("")
        out.append("Times are BenchmarkDotNet means per call; **Floor (C)** is the same work written directly in C "
                   "against the same libcrypto (median, `benchmarks/native-floor/floor.c`); **Speed-up** = stock ÷ "
                   "CachedAes; **× floor** = CachedAes ÷ floor. Sizes are plaintext lengths (PKCS7 adds a block, so "
                   "16 B is a 32 B operation). Allocations are bytes per call.\n")
        if chart:
            out.append(f"![ns per call against size, stock vs CachedAes vs the native floor]({os.path.basename(chart)})\n")
        out.append("## Targets (issues 8 and 9)\n")
        out.append(self.targets() + "\n")
        sections = [
            ("EcbCbcSteady", "Steady: one kept instance, ECB and CBC", self.steady_table),
            ("KwpSteady", "Steady: key wrap with padding (RFC 5649)", self.steady_table),
            ("EcbCbcSingle", "Single: new instance, set the key, one call, dispose", self.single_table),
            ("KwpSingle", "Single: key wrap with padding", lambda t: self.single_table(t, native=False)),
            ("EcbCbcTwice", "Twice: new instance, set the key, two calls, dispose", lambda t: self.single_table(t, native=False)),
            ("EcbCbcShared", "Shared: one instance, 1 and 2 threads at once (16 B, throughput)", self.shared_table),
            ("DataProtectionRoundTrip", "A real client: ASP.NET Core Data Protection, Protect + Unprotect",
             lambda t: self.single_table(t, native=False)),
        ]
        for type_name, title, render in sections:
            if type_name in self.by_type:
                out.append(f"## {title}\n")
                if type_name == "EcbCbcShared":
                    out.append("Mean wall time per call with the calls split across the threads (lower is better; "
                               "(allocated per call)). Baseline: one stock instance shared without a lock. "
                               "**failed**: the benchmark's own check failed (calls threw or returned wrong bytes); "
                               "the reason is in the BenchmarkDotNet log and the short comparison.\n")
                if type_name == "DataProtectionRoundTrip":
                    out.append("One Protect and one Unprotect of a payload (Size) with AES-256-CBC + HMACSHA256; Data "
                               "Protection makes a new algorithm instance for each, so the gain is two first calls "
                               "inside everything else the pair does (key derivation, HMAC, random numbers).\n")
                if type_name == "EcbCbcSingle":
                    out.append("The last native column is what stock's per-call work costs in C "
                               "(new context, init, update, final, free): a bound on what any new-instance "
                               "path that creates a native context can reach.\n")
                out.append(render(type_name) + "\n")
        for type_name in self.by_type:
            if type_name in known:
                continue
            has_pair = any(b["method"] == "Cached" for b in self.by_type[type_name]) and \
                any(b["method"] == "Stock" for b in self.by_type[type_name])
            out.append(f"## {type_name}\n")
            if has_pair and type_name.endswith("Steady"):
                out.append(self.steady_table(type_name) + "\n")
            elif has_pair:
                out.append(self.single_table(type_name, native=False) + "\n")
            else:
                out.append(self.generic_table(type_name) + "\n")
        out.append("## Where a steady 16 B call goes\n")
        out.append("Instructions per call under `valgrind --tool=callgrind` (repeatable on a busy machine; the "
                   "difference of two call counts, median of four rounds) and native nanoseconds per call "
                   "(noisy), layer by layer from the native update alone to the public call "
                   "(`benchmarks/CachedAes.Breakdown`). **Δ** is what a layer adds to the one before it on the "
                   "path `native:floor` → `pinvoke` → `handle` → `lease` → `oneshot` → `public` (for `pinvoke-sgt`: "
                   "against `pinvoke`); the other rows are references. The layer list is "
                   "`benchmarks/CachedAes.Breakdown/Layers.cs`. Under valgrind the JIT sees a CPU "
                   "without AVX-512 and can inline differently from a native run.\n")
        out.append(self.breakdown_tables() + "\n")
        out.append("## How it was measured\n")
        out.append("\n".join([
            "- `bash scripts/benchmark-report.sh` runs, one after another: the native floor "
            "(`benchmarks/native-floor/floor.sh`), the layer breakdown (`benchmarks/CachedAes.Breakdown/breakdown.sh`), "
            "and the BenchmarkDotNet suite (`benchmarks/CachedAes.Benchmarks`, its JSON export is what this page "
            "and the chart are made from), then this page (`scripts/benchmark_report.py`) and the chart (gnuplot).",
            "- The floor rows time the same AES-256 work per call in C: a reused keyed context with one "
            "`EVP_CipherUpdate` of the padded length (CBC: a context that is never reset, each message started at "
            "its IV by a first-block fix-up), RFC 5649 over one reused ECB context, and stock's per-call "
            "create/init/update/final/free sequence; each is checked against OpenSSL's own one-shot first.",
            "- On a shared 2-core machine, compare ratios within one run rather than absolute times across runs.",
        ]) + "\n")
        with open(self.args.out, "w") as f:
            f.write("\n".join(out))
        return chart


def mean(b):
    return None if b is None else b["mean"]


def speedup(stock, cached):
    return "n/a" if stock is None or not cached else f"{stock / cached:.2f}×"


def times_floor(cached, floor):
    return "n/a" if cached is None or not floor else f"{cached / floor:.2f}×"


def target_row(name, value, limit, fmt, at_least=False):
    if value is None or value == 0:
        return [name, "no result", "**no**"]
    met = value >= limit if at_least else value <= limit
    return [name, fmt.format(value), "yes" if met else "**no**"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True, help="the work folder filled by benchmark-report.sh")
    parser.add_argument("--out", required=True, help="the markdown file to write")
    parser.add_argument("--chart", required=True, help="the PNG to write (its .dat and .gp go next to it)")
    parser.add_argument("--label", default="", help="a line shown at the top of the page and in the chart title")
    parser.add_argument("--baseline", default="", help="an earlier run's BenchmarkDotNet brief JSON to compare with")
    parser.add_argument("--slower-margin", type=float, default=0.05,
                        help="how much slower than the baseline counts as slower (default 0.05 = 5%%)")
    args = parser.parse_args()
    report = Report(args)
    if not report.benchmarks:
        print("benchmark_report.py: no BenchmarkDotNet results found under "
              f"{os.path.join(args.work, 'bdn', 'results')}", file=sys.stderr)
        return 1
    chart = report.write()
    print(f"benchmark_report.py: wrote {args.out}" + (f" and {chart}" if chart else " (no chart: no Steady results)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
