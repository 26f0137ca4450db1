#!/usr/bin/env python3
"""Writes docs/benchmarks.md and its chart from one run of scripts/benchmark-report.sh.

Inputs (in the work folder the shell script fills):
  bdn/results/*-report-brief.json   BenchmarkDotNet's own JSON export (JsonExporter.Brief): the suite's results, every
                                    case on .NET 10 and on .NET 11 (jobs whose ids end in -net10 and -net11), the native
                                    floor included (the Floor and StockNativeSequence rows, measured in the same run);
                                    the quick mode (QuickRun.cs) writes one per runtime, under bdn/net10/results and
                                    bdn/net11/results
  benchmarks.log                    the suite's console output: the .NET 11 runtime's version, and the ExceptionCount
                                    lines of the shared-instance benchmarks
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
from collections import OrderedDict

CIPHER_OPS = ["EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc"]
WRAP_OPS = ["EncryptKeyWrapPadded", "DecryptKeyWrapPadded"]
KW_OPS = ["EncryptKeyWrap", "DecryptKeyWrap"]
RUNTIMES = ["net10", "net11"]
RUNTIME_NAMES = {"net10": ".NET 10", "net11": ".NET 11"}
CIPHER_TICS = [(16, "16"), (32, "32"), (64, "64"), (128, "128"), (1024, "1K"), (16384, "16K")]
WRAP_TICS = [(1, "1"), (8, "8"), (16, "16"), (32, "32"), (512, "512"), (4096, "4K")]
TRANSFORM_SHAPES = ["KeptCreateEncryptor", "KeptCreateEncryptorKeyIv", "KeptCreateDecryptor", "KeptCryptoStreamWrite",
                    "KeptCryptoStreamWriteDisposed", "KeptCryptoStreamRead", "KeptCryptoStreamReadDisposed",
                    "ReusedTransform", "NewInstance"]
TRANSFORM_TITLES = {
    "KeptCreateEncryptor": "kept instance: `CreateEncryptor()` + `TransformFinalBlock`",
    "KeptCreateEncryptorKeyIv": "kept instance: `CreateEncryptor(aes.Key, aes.IV)` + `TransformFinalBlock`",
    "KeptCreateDecryptor": "kept instance: `CreateDecryptor()` + `TransformFinalBlock`",
    "KeptCryptoStreamWrite": "kept instance: `CryptoStream` write mode over `CreateEncryptor()` (transform not disposed)",
    "KeptCryptoStreamWriteDisposed": "the same, transform disposed",
    "KeptCryptoStreamRead": "kept instance: `CryptoStream` read mode over `CreateDecryptor()` (transform not disposed)",
    "KeptCryptoStreamReadDisposed": "the same, transform disposed",
    "ReusedTransform": "one transform reused: `TransformFinalBlock`",
    "NewInstance": "new instance + key + IV + `CreateEncryptor()` + `TransformFinalBlock`",
}


# ---------------------------------------------------------------- reading

def read_csv(path):
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read_env(path):
    env = OrderedDict()
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                key, value = line.rstrip("\n").split("=", 1)
                env[key] = value
    return env


def runtime_of(job):
    """The runtime a job ran on, from its id (Runtimes.cs names them ...-net10 and ...-net11); older runs: net10."""
    return "net11" if job.endswith("-net11") else "net10"


def read_bdn_files(paths):
    benchmarks, host = [], {}
    for path in paths:
        data = json.load(open(path))
        host = host or data.get("HostEnvironmentInfo", {})
        for b in data.get("Benchmarks", []):
            params = dict(p.split("=", 1) for p in b.get("Parameters", "").split("&") if "=" in p)
            stats = b.get("Statistics") or {}
            memory = b.get("Memory") or {}
            job = re.sub(r"^[^:]*: ", "", b.get("DisplayInfo", "")).split("(")[0].strip()
            method = b["Method"]
            if "-cpu-" in job:
                # A job of --cpu-intrinsics (Runtimes.CpuIntrinsicsJobs): its Cached rows are the CPU intrinsics
                # backend, kept as method "CachedCpu"; its other rows repeat the platform job's work and are left out.
                if method != "Cached":
                    continue
                method = "CachedCpu"
            benchmarks.append({
                "type": b["Type"],
                "method": method,
                "params": params,
                "mean": stats.get("Mean"),
                "median": stats.get("Median"),
                "alloc": memory.get("BytesAllocatedPerOperation") if stats else None,
                "job": job,
                "runtime": runtime_of(job),
            })
    return benchmarks, host


def read_exception_counts(log_path):
    """The ExceptionCount lines (SharedBenchmarks.cs) of the suite's log, as dicts."""
    counts = []
    if not log_path or not os.path.exists(log_path):
        return counts
    seen = set()
    for line in open(log_path, errors="replace"):
        at = line.find("ExceptionCount: ")
        if at < 0:
            continue
        text = line[at + len("ExceptionCount: "):].strip()
        if text in seen:  # BenchmarkDotNet can echo a line twice (console and log)
            continue
        seen.add(text)
        fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
        if "params" in fields:
            fields["params"] = dict(p.split("=", 1) for p in fields["params"].split("&") if "=" in p)
        counts.append(fields)
    return counts


def read_runtime_versions(log_path):
    """The runtime versions BenchmarkDotNet printed for the benchmark processes (the .NET 11 one, mainly)."""
    versions = OrderedDict()
    if log_path and os.path.exists(log_path):
        for line in open(log_path, errors="replace"):
            m = re.match(r"^// Runtime=(\.NET [0-9][^ ]*) \(([^)]*)\)", line.strip())
            if m:
                versions[m.group(1)] = m.group(2)
    return versions


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


def alloc(value):
    return "n/a" if value is None else f"{int(value):,} B"


def times(value, digits=2):
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}×" if value < 10 else f"{value:.1f}×" if value < 100 else f"{value:.0f}×"


def divide(a, b):
    return None if a is None or not b else a / b


def table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def mean(b):
    return None if b is None else b["mean"]


def target_row(name, value, limit, fmt, at_least=False, source=""):
    if value is None or value == 0:
        return [name, "no result", source, "**no**"]
    met = value >= limit if at_least else value <= limit
    return [name, fmt.format(value), source, "yes" if met else "**no**"]


# ---------------------------------------------------------------- the report

class Report:
    def __init__(self, args):
        self.args = args
        self.benchmarks, self.host = read_bdn_files(
            sorted(glob.glob(os.path.join(args.work, "bdn", "results", "*-report-brief.json"))
                   + glob.glob(os.path.join(args.work, "bdn", "net1[01]", "results", "*-report-brief.json"))))
        log = os.path.join(args.work, "benchmarks.log")
        self.exceptions = read_exception_counts(log)
        self.runtime_versions = read_runtime_versions(log)
        self.breakdown = read_csv(os.path.join(args.work, "breakdown.csv"))
        self.env = read_env(os.path.join(args.work, "env.txt"))
        self.baseline = {}
        if args.baseline:
            for b in read_bdn_files([args.baseline])[0]:
                self.baseline[self.key(b)] = b
        self.index = {self.key(b): b for b in self.benchmarks}
        self.by_type = OrderedDict()
        for b in self.benchmarks:
            self.by_type.setdefault(b["type"], []).append(b)

    @staticmethod
    def key(b):
        return (b["type"], b["method"], tuple(sorted(b["params"].items())), b["runtime"])

    def get(self, type_name, method, runtime, **params):
        return self.index.get((type_name, method, tuple(sorted((k, str(v)) for k, v in params.items())), runtime))

    def value(self, type_name, method, runtime, **params):
        return mean(self.get(type_name, method, runtime, **params))

    def has_net11(self):
        return any(b["runtime"] == "net11" for b in self.benchmarks)

    def param_sets(self, type_name):
        """The parameter sets of a class, in a stable order (operations, shapes, then sizes)."""
        sets = OrderedDict()
        for b in self.by_type.get(type_name, []):
            sets.setdefault(tuple(sorted(b["params"].items())), dict(b["params"]))
        order = {name: i for i, name in enumerate(CIPHER_OPS + WRAP_OPS + KW_OPS + TRANSFORM_SHAPES)}

        def sort_key(params):
            first = [order.get(v, 99) for v in params.values() if v in order]
            numbers = [int(v) for v in params.values() if v.isdigit()]
            return (first, sorted(params.items()) if not first else [], numbers)
        return sorted(sets.values(), key=sort_key)

    def before(self, b):
        if b is None or not self.baseline:
            return None
        return mean(self.baseline.get(self.key(b)))

    # -- one generic table: methods x runtimes, then ratios

    def comparison_table(self, type_name, params_columns, reference=None, reference_title=None, stock="Stock",
                         cached="Cached", extra=None):
        """Rows: parameter sets. Columns: the parameters; stock and CachedAes on each runtime; the reference method
        (floor, stock's native sequence, OpenSSL's wrap cipher) on each runtime; speed-up (stock ÷ CachedAes, same
        runtime); CachedAes ÷ reference (same runtime); allocations; the baseline run's CachedAes if given."""
        runtimes = [r for r in RUNTIMES if any(b["runtime"] == r for b in self.by_type.get(type_name, []))]
        header = [title for _, title in params_columns]
        header += [f"Stock {RUNTIME_NAMES[r]}" for r in runtimes]
        header += [f"CachedAes {RUNTIME_NAMES[r]}" for r in runtimes]
        if reference:
            header += [f"{reference_title} {RUNTIME_NAMES[r]}" for r in runtimes]
        header += [f"Speed-up {RUNTIME_NAMES[r]}" for r in runtimes]
        if reference:
            header += [f"× {reference_title.split(' ')[0].lower()} {RUNTIME_NAMES[r]}" for r in runtimes]
        header += ["Allocated stock " + " / ".join(RUNTIME_NAMES[r][5:] for r in runtimes),
                   "Allocated CachedAes " + " / ".join(RUNTIME_NAMES[r][5:] for r in runtimes)]
        if self.baseline:
            header += ["CachedAes before (.NET 10)", "now ÷ before"]
        rows = []
        for params in self.param_sets(type_name):
            row = []
            for key, _ in params_columns:
                v = params.get(key, "")
                row.append(size(v) if key in ("Size", "Length", "CekLength") else v)
            s = {r: self.get(type_name, stock, r, **params) for r in runtimes}
            c = {r: self.get(type_name, cached, r, **params) for r in runtimes}
            f = {r: self.get(type_name, reference, r, **params) for r in runtimes} if reference else {}
            row += [cell(s[r]) for r in runtimes]
            row += [cell(c[r]) for r in runtimes]
            if reference:
                row += [cell(f[r]) for r in runtimes]
            row += [times(divide(mean(s[r]), mean(c[r]))) for r in runtimes]
            if reference:
                row += [times(divide(mean(c[r]), mean(f[r]))) for r in runtimes]
            row.append(allocs([s[r] for r in runtimes]))
            row.append(allocs([c[r] for r in runtimes]))
            if self.baseline:
                previous = self.before(c.get("net10"))
                row += [ns(previous), times(divide(mean(c.get("net10")), previous))]
            rows.append(row)
        return table(header, rows, ["l"] * len(params_columns) + ["r"] * (len(header) - len(params_columns)))

    def shared_table(self, type_name):
        items = self.by_type.get(type_name, [])
        methods = list(OrderedDict.fromkeys(b["method"] for b in items))
        runtimes = [r for r in RUNTIMES if any(b["runtime"] == r for b in items)]
        groups = OrderedDict()
        for b in items:
            groups.setdefault((b["params"].get("Operation"), int(b["params"].get("Threads", 0))), {})[
                (b["method"], b["runtime"])] = b
        header = ["Operation", "Threads"] + [f"{m} {RUNTIME_NAMES[r]}" for m in methods for r in runtimes]
        rows = []
        for (op, threads), found in groups.items():
            row = [op, threads]
            for m in methods:
                for r in runtimes:
                    b = found.get((m, r))
                    text = "**failed**" if b is not None and b["mean"] is None else cell(b) if b else "n/a"
                    thrown = self.thrown(type_name, m, r, Operation=op, Threads=threads)
                    if thrown:
                        text += f", **{thrown}**"
                    row.append(text)
            rows.append(row)
        text = table(header, rows, ["l", "r"] + ["r"] * (len(header) - 2))
        scaling = []
        for m in methods:
            for r in runtimes:
                for op in OrderedDict.fromkeys(k[0] for k in groups):
                    one, two = groups.get((op, 1), {}).get((m, r)), groups.get((op, 2), {}).get((m, r))
                    if mean(one) and mean(two):
                        scaling.append([m, RUNTIME_NAMES[r], op, f"{mean(one) / mean(two):.2f}×"])
        if scaling:
            text += ("\n\nThroughput with 2 threads ÷ throughput with 1 thread, the same instance shape "
                     "(1.0 = no gain, 2.0 = perfect scaling on 2 cores):\n\n"
                     + table(["Method", "Runtime", "Operation", "2 threads ÷ 1 thread"], scaling, ["l", "l", "l", "r"]))
        counts = [e for e in self.exceptions if e.get("type") == type_name]
        if counts:
            rows = []
            for e in counts:
                p = e.get("params", {})
                rows.append([e.get("method"), e.get("runtime"), p.get("Operation"), p.get("Threads"), e.get("phase"),
                             f"{int(e.get('calls', 0)):,}", f"{int(e.get('exceptions', 0)):,}",
                             e.get("wrong", "not checked"), e.get("first", "")])
            text += ("\n\nExceptions counted (every `ExceptionCount` line of the run's log; *check*: the setup's "
                     "20,000 calls per thread started together, every output compared with stock's; *benchmark*: every "
                     "call BenchmarkDotNet made of the method, warm-up included):\n\n"
                     + table(["Method", "Runtime", "Operation", "Threads", "Phase", "Calls", "Exceptions",
                              "Wrong bytes", "First exception"], rows, ["l", "l", "l", "r", "l", "r", "r", "r", "l"]))
        return text

    def thrown(self, type_name, method, runtime, **params):
        """'N of M calls threw' for a method on a runtime (the benchmark phase), or None when none threw."""
        version = "11." if runtime == "net11" else "10."
        for e in self.exceptions:
            p = e.get("params", {})
            if (e.get("type") == type_name and e.get("method") == method and e.get("phase") == "benchmark"
                    and e.get("runtime", "").startswith(version)
                    and all(p.get(k) == str(v) for k, v in params.items()) and int(e.get("exceptions", 0)) > 0):
                calls, count = int(e["calls"]), int(e["exceptions"])
                return f"{count:,} of {calls:,} calls threw ({count / calls:.0%})"
        return None

    def exception_total(self, method, runtime_prefix):
        counted = [e for e in self.exceptions if e.get("method") == method and e.get("runtime", "").startswith(runtime_prefix)]
        if not counted:
            return None, None
        return (sum(int(e.get("exceptions", 0)) + int(e.get("wrong", 0) or 0) for e in counted),
                sum(int(e.get("calls", 0)) for e in counted))

    # -- targets

    def targets(self):
        rows = []
        # Against stock .NET 11: CachedAes on .NET 11 (its net11.0 build, as a net11.0 app runs it).
        for op in CIPHER_OPS:
            s, c = self.value("EcbCbcSteady", "Stock", "net11", Operation=op, Size=16), \
                self.value("EcbCbcSteady", "Cached", "net11", Operation=op, Size=16)
            rows.append(target_row(f"Steady {op} 16 B ≥ 8× stock .NET 11", divide(s, c), 8, "{:.1f}×", True,
                                   f"EcbCbcSteady {ns(s)} ÷ {ns(c)}"))
        for op in CIPHER_OPS:
            s, c = self.value("EcbCbcSingle", "Stock", "net11", Operation=op, Size=16), \
                self.value("EcbCbcSingle", "Cached", "net11", Operation=op, Size=16)
            if s is None and c is None and self.get("EcbCbcSingle", "Stock", "net11", Operation=op, Size=16) is None:
                continue  # not in this run (the quick subset)
            rows.append(target_row(f"New instance + one call (Single) {op} 16 B ≥ 2× stock .NET 11", divide(s, c), 2,
                                   "{:.2f}×", True, f"EcbCbcSingle {ns(s)} ÷ {ns(c)}"))
        for type_name, op, key in [("KwpSteady", "EncryptKeyWrapPadded", "Length"), ("KwpSteady", "DecryptKeyWrapPadded", "Length"),
                                   ("Rfc3394Steady", "EncryptKeyWrap", "Length"), ("Rfc3394Steady", "DecryptKeyWrap", "Length")]:
            s, c = self.value(type_name, "Stock", "net11", Operation=op, **{key: 32}), \
                self.value(type_name, "Cached", "net11", Operation=op, **{key: 32})
            rows.append(target_row(f"{op} 32 B ≥ 4× stock .NET 11", divide(s, c), 4, "{:.1f}×", True,
                                   f"{type_name} {ns(s)} ÷ {ns(c)}"))
        for method in ("SharedCached", "LockedCached"):
            for runtime, prefix in (("net10", "10."), ("net11", "11.")):
                bad, calls = self.exception_total(method, prefix)
                if calls is not None:
                    rows.append([f"Shared instance, {method} on {RUNTIME_NAMES[runtime]}: 0 exceptions",
                                 f"{bad} of {calls:,} calls threw or were wrong", "EcbCbcShared log",
                                 "yes" if bad == 0 else "**no**"])
        bad, calls = self.exception_total("SharedStock", "11.")
        if calls is not None:
            rows.append(["(for comparison) stock .NET 11, one instance shared", f"{bad:,} of {calls:,} calls threw",
                         "EcbCbcShared log", "—"])
        # Transforms against stock on the same runtime.
        transform_targets = [("KeptCreateEncryptor", 0.15), ("ReusedTransform", 0.2), ("KeptCryptoStreamWrite", 0.35),
                             ("KeptCryptoStreamWriteDisposed", 0.35), ("KeptCryptoStreamRead", 0.35),
                             ("KeptCryptoStreamReadDisposed", 0.35), ("NewInstance", 0.45)]
        for runtime in RUNTIMES:
            for shape, limit in transform_targets:
                s, c = self.value("TransformShapes", "Stock", runtime, Shape=shape, Size=16), \
                    self.value("TransformShapes", "Cached", runtime, Shape=shape, Size=16)
                if s is None and c is None:
                    continue
                rows.append(target_row(f"Transforms, {RUNTIME_NAMES[runtime]}: {shape} 16 B ≤ {limit}× stock",
                                       divide(c, s), limit, "{:.2f}×", False, f"TransformShapes {ns(c)} ÷ {ns(s)}"))
            slower, heavier = [], []
            found = False
            for b in self.by_type.get("TransformShapes", []):
                if b["runtime"] != runtime or b["method"] != "Cached":
                    continue
                found = True
                s = self.get("TransformShapes", "Stock", runtime, **b["params"])
                label = f"{b['params'].get('Shape')} {size(b['params'].get('Size'))}"
                if mean(b) and mean(s) and mean(b) > mean(s):
                    slower.append(f"{label} ({ns(mean(b))} vs {ns(mean(s))})")
                if b["alloc"] is not None and s and s["alloc"] is not None and b["alloc"] > s["alloc"]:
                    heavier.append(f"{label} ({alloc(b['alloc'])} vs {alloc(s['alloc'])})")
            if found:
                rows.append([f"Transforms, {RUNTIME_NAMES[runtime]}: no shape slower than stock at any size",
                             "none" if not slower else "; ".join(slower), "TransformShapes", "yes" if not slower else "**no**"])
                rows.append([f"Transforms, {RUNTIME_NAMES[runtime]}: allocations no more than stock's",
                             "none more" if not heavier else "; ".join(heavier), "TransformShapes",
                             "yes" if not heavier else "**no**"])
        # A steady 16 B call against the native floor of the same run (.NET 10).
        for op, limit in [("EncryptEcb", 2.0), ("DecryptEcb", 2.0), ("EncryptCbc", 2.5), ("DecryptCbc", 2.5)]:
            c, f = self.value("EcbCbcSteady", "Cached", "net10", Operation=op, Size=16), \
                self.value("EcbCbcSteady", "Floor", "net10", Operation=op, Size=16)
            rows.append(target_row(f"Steady {op} 16 B ≤ {limit}× floor (.NET 10)", divide(c, f), limit, "{:.2f}×",
                                   source=f"EcbCbcSteady {ns(c)} ÷ {ns(f)}"))
        for op in CIPHER_OPS:
            c, f = self.value("EcbCbcSteady", "Cached", "net10", Operation=op, Size=16384), \
                self.value("EcbCbcSteady", "Floor", "net10", Operation=op, Size=16384)
            if c is not None or f is not None:
                rows.append(target_row(f"Steady {op} 16 KiB ≤ 1.1× floor (.NET 10)", divide(c, f), 1.1, "{:.2f}×",
                                       source=f"EcbCbcSteady {ns(c)} ÷ {ns(f)}"))
        for op in WRAP_OPS:
            c = self.value("KwpSteady", "Cached", "net10", Operation=op, Length=32)
            rows.append(target_row(f"{op} 32 B ≤ 1.0 µs (.NET 10)", c and c / 1000, 1.0, "{:.2f} µs",
                                   source="KwpSteady"))
        for op in CIPHER_OPS:
            s, c = self.get("EcbCbcSingle", "Stock", "net10", Operation=op, Size=16), \
                self.get("EcbCbcSingle", "Cached", "net10", Operation=op, Size=16)
            if s is None and c is None:
                continue
            rows.append(target_row(f"Single {op} 16 B ≤ 0.25× stock (.NET 10)", divide(mean(c), mean(s)), 0.25,
                                   "{:.2f}×", source=f"EcbCbcSingle {ns(mean(c))} ÷ {ns(mean(s))}"))
            if c and s and c["alloc"] is not None and s["alloc"] is not None:
                rows.append([f"Single {op} 16 B allocates no more than stock (.NET 10)",
                             f"{alloc(c['alloc'])} vs {alloc(s['alloc'])}", "EcbCbcSingle",
                             "yes" if c["alloc"] <= s["alloc"] else "**no**"])
        for runtime in RUNTIMES:
            for op in ("EncryptEcb", "EncryptCbc"):
                one = self.value("EcbCbcShared", "SharedCached", runtime, Operation=op, Threads=1)
                two = self.value("EcbCbcShared", "SharedCached", runtime, Operation=op, Threads=2)
                if one or two:
                    rows.append(target_row(f"Shared {op}, {RUNTIME_NAMES[runtime]}: 2 threads ≥ 1.8× one thread",
                                           divide(one, two), 1.8, "{:.2f}×", True, "EcbCbcShared SharedCached"))
        allocating = [f"{b['type']}.{b['method']} {RUNTIME_NAMES[b['runtime']]} ({params_text(b)})"
                      for b in self.benchmarks
                      if (b["type"].endswith("Steady") or b["type"].endswith("Shared")) and "Cached" in b["method"]
                      and b["alloc"]]
        rows.append(["CachedAes steady state (Steady, Shared) allocates 0 B per call, both runtimes",
                     "all 0 B" if not allocating else "; ".join(allocating), "", "yes" if not allocating else "**no**"])
        if self.baseline:
            slower = []
            for b in self.benchmarks:
                previous = self.before(b)
                if "Cached" in b["method"] and mean(b) and previous and mean(b) > previous * (1 + self.args.slower_margin):
                    slower.append(f"{b['type']}.{b['method']} ({params_text(b)}): {ns(previous)} → {ns(mean(b))}")
            rows.append([f"No CachedAes case slower than the baseline run (by more than {self.args.slower_margin:.0%})",
                         "none" if not slower else "; ".join(slower), "", "yes" if not slower else "**no**"])
        missing = [f"{b['type']}.{b['method']} {RUNTIME_NAMES[b['runtime']]} ({params_text(b)})"
                   for b in self.benchmarks if b["mean"] is None]
        if missing:
            rows.append(["Every case has a result", "no result: " + "; ".join(missing), "", "**no**"])
        return table(["Target", "Measured", "From", "Met"], rows, ["l", "r", "l", "l"])

    # -- breakdown

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
        series = [("Stock", "net10"), ("Stock", "net11"), ("Cached", "net10"), ("Cached", "net11"), ("Floor", "net10")]
        for op in CIPHER_OPS + WRAP_OPS:
            t, key = ("KwpSteady", "Length") if op in WRAP_OPS else ("EcbCbcSteady", "Size")
            points = OrderedDict()
            for b in self.by_type.get(t, []):
                if b["params"].get("Operation") == op:
                    points.setdefault(int(b["params"][key]), {})[(b["method"], b["runtime"])] = mean(b)
            if not points:
                continue
            lines = [f"# {op}: size " + " ".join(f"{m}-{r}" for m, r in series)]
            for n in sorted(points):
                vals = [points[n].get(s) for s in series]
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
        title = ("CachedAes vs stock Aes.Create() on .NET 10 and .NET 11 vs the native floor: steady one-shot, "
                 "ns per call (log scales)")
        if self.args.label:
            title += "\\n" + self.args.label
        gp = [
            f"set terminal pngcairo size {560 * columns},{400 * rows + 70} font 'sans,10'",
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
        styles = [
            ("stock .NET 10", "lw 2 pt 7 lc rgb '#d62728'"),
            ("stock .NET 11", "lw 2 pt 6 lc rgb '#ff7f0e'"),
            ("CachedAes .NET 10", "lw 2 pt 5 lc rgb '#1f77b4'"),
            ("CachedAes .NET 11", "lw 2 pt 4 dt 3 lc rgb '#17becf'"),
            ("floor (P/Invoke, .NET 10)", "lw 2 pt 9 dt 2 lc rgb '#2ca02c'"),
        ]
        for index, (op, lines) in enumerate(panels):
            tics = WRAP_TICS if op in WRAP_OPS else CIPHER_TICS
            sizes = [int(line.split()[0]) for line in lines[1:]]
            low, high = min(sizes + [tics[0][0]]), max(sizes + [tics[-1][0]])
            plots = []
            for column, (name, style) in enumerate(styles, start=2):
                prefix = f"'{os.path.basename(data)}'" if not plots else "''"
                plots.append(f"{prefix} index {index} using 1:{column} with linespoints {style} title '{name}'")
            gp += [
                "set xtics (" + ", ".join(f"'{label}' {value}" for value, label in tics) + ") nomirror",
                f"set xrange [{low / 1.6}:{high * 1.6}]",
                f"set title '{op}' font 'sans,11'",
                "plot " + ", ".join(plots),
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
        job = ", ".join(sorted({b["job"] for b in self.benchmarks if b["job"]})) or "n/a"
        net11 = self.runtime_versions.get(".NET 11.0.0")
        out = ["# CachedAes benchmark report\n",
               "<!-- Generated by scripts/benchmark-report.sh; do not edit by hand: run it again. -->\n",
               "This page is the benchmark report: one run of `scripts/benchmark-report.sh`, every case stock "
               "`Aes.Create()`\nagainst CachedAes with the native floor beside them, on .NET 10 and .NET 11. The measurements behind the "
               "design are in\n[design-notes.md](design-notes.md).\n"]
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
            [".NET", f"{host.get('RuntimeVersion', 'n/a')} (the host and the .NET 10 job); "
                     + (f".NET 11.0.0 ({net11}) for the .NET 11 job" if net11 else "no .NET 11 job")
                     + f"; {host.get('Architecture', '')}, SDK {host.get('DotNetCliVersion', '?')}"],
            ["OpenSSL", f"{env.get('openssl', 'n/a')} ({env.get('libcrypto', 'libcrypto.so.3')})"],
            ["BenchmarkDotNet", f"{host.get('BenchmarkDotNetVersion', 'n/a')}, jobs {job}"],
            ["Compared with", f"`{self.args.baseline}` ({self.env.get('baseline_note', 'an earlier run')})" if self.args.baseline else "no baseline run"],
            ["Load average (1 min)", f"{env.get('load_before', '?')} at the start, "
                                     f"{env.get('load_before_suite', '?')} when the suite started (after the breakdown), "
                                     f"{env.get('load_after', '?')} after it (on {env.get('cores', '?')} cores)"],
            ["Wall time of the suite", env.get("suite_time", "n/a")],
        ], ["l", "l"]))
        out.append("")
        out.append(
            "Times are BenchmarkDotNet means per call. Every case ran twice in this one run, as a job on .NET 10 and "
            "as the same job on .NET 11 (the same sources built for net11.0, so CachedAes there is its lib/net11.0 "
            "build); the two runs of a case are next to each other in the run's order. **Floor** is the same native "
            "work (AES-256, input already padded) measured as another row of the same case: the same libcrypto "
            "calls through the cheapest P/Invoke (`benchmarks/CachedAes.Benchmarks/NativeFloor.cs`), warmed up by "
            "BenchmarkDotNet like every row. **Speed-up** = stock ÷ CachedAes on the same runtime; **× floor** = "
            "CachedAes ÷ floor on the same runtime. Sizes are plaintext lengths (PKCS7 adds a block, so 16 B is a "
            "32 B operation). Allocations are bytes per call.\n")
        if chart:
            out.append(f"![ns per call against size, stock .NET 10 and .NET 11 vs CachedAes vs the native floor]"
                       f"({os.path.basename(chart)})\n")
        out.append("## Targets\n")
        out.append("Against stock .NET 11 (CachedAes on .NET 11), transforms (against stock on the same runtime), and "
                   "against the native floor (.NET 10, measured in this run). **From** names the class and the two "
                   "means divided.\n")
        out.append(self.targets() + "\n")
        p_cipher = [("Operation", "Operation"), ("Size", "Size")]
        p_wrap = [("Operation", "Operation"), ("Length", "Length")]
        sections = [
            ("EcbCbcSteady", "Steady: one kept instance, ECB and CBC",
             lambda t: self.comparison_table(t, p_cipher, "Floor", "Floor")),
            ("KwpSteady", "Steady: key wrap with padding (RFC 5649)",
             lambda t: self.comparison_table(t, p_wrap, "Floor", "Floor")),
            ("Rfc3394Steady", "Steady: key wrap without padding (RFC 3394)", self.rfc3394_table),
            ("EcbCbcSingle", "Single: new instance, set the key, one call, dispose",
             lambda t: self.comparison_table(t, p_cipher, "StockNativeSequence", "Native sequence")),
            ("KwpSingle", "Single: key wrap with padding", lambda t: self.comparison_table(t, p_wrap)),
            ("EcbCbcTwice", "Twice: new instance, set the key, two calls, dispose",
             lambda t: self.comparison_table(t, p_cipher)),
            ("EcbCbcShared", "Shared: one instance, 1 and 2 threads at once (16 B, throughput)", self.shared_table),
            ("TransformShapes", "Transforms: CreateEncryptor/CreateDecryptor, TransformFinalBlock, CryptoStream (CBC, PKCS7)",
             lambda t: self.comparison_table(t, [("Shape", "Shape"), ("Size", "Size")])),
            ("JweRoundTrip", "A real client: Microsoft.IdentityModel JWE, create + validate a token",
             lambda t: self.comparison_table(t, [("Enc", "Content encryption")])),
            ("IdentityModelKeyWrap", "A real client: Microsoft.IdentityModel key wrap alone (A256KW)",
             lambda t: self.comparison_table(t, [("Call", "Call"), ("Provider", "Provider"), ("CekLength", "Key")])),
            ("IdentityModelContentDecryption", "A real client: Microsoft.IdentityModel content decryption, valid and forged tags",
             lambda t: self.comparison_table(t, [("Tag", "Tag"), ("Enc", "Content encryption")])),
            ("DataProtectionRoundTrip", "A real client: ASP.NET Core Data Protection, Protect + Unprotect",
             lambda t: self.comparison_table(t, [("Size", "Size")])),
        ]
        notes = {
            "EcbCbcSingle": "**Native sequence** is stock's own native per-call work (new context, init with the "
                            "implicit-fetch cipher, key, padding off, update, final, free) through the same cheapest "
                            "P/Invoke: what any new-instance path that creates a native context per call costs at "
                            "least. CachedAes's first call re-keys a pooled context instead.\n",
            "EcbCbcShared": "Mean wall time per call with the calls split across the threads (lower is better; "
                            "(allocated per call)). Baseline: one stock instance shared without a lock. On .NET 11 stock "
                            "throws on overlapping calls: the benchmark counts those exceptions instead of failing, and "
                            "its time per call includes them (shown in bold). **failed**: the benchmark's own check "
                            "failed (a CachedAes call threw or returned wrong bytes).\n",
            "TransformShapes": "Each shape as real code writes it (see `TransformBenchmarks.cs`): "
                               + "; ".join(f"**{k}**: {v}" for k, v in TRANSFORM_TITLES.items()) + ".\n",
            "JweRoundTrip": "`JsonWebTokenHandler.CreateToken` (A256KW key wrap, HS256 signature) then "
                            "`ValidateTokenAsync`; CachedAes through `CachedAesCryptoProvider` "
                            "([docs/integrations.md](integrations.md#microsoftidentitymodel-jwe-cachedaesidentitymodel)). IdentityModel makes a key-wrap and a content provider per token.\n",
            "IdentityModelKeyWrap": "`KeyWrapProvider.WrapKey`/`UnwrapKey` from the factory: **PerToken** makes a provider "
                                    "per call and never releases it, as IdentityModel does per token; **Kept** reuses "
                                    "one provider (its AES instance and transform).\n",
            "IdentityModelContentDecryption": "Per token: a content key, `CreateAuthenticatedEncryptionProvider`, one "
                                              "`Decrypt` of 256 bytes and `Dispose`; **Forged** flips one bit of the tag, "
                                              "so both reject it with IDX10650 (thrown and caught inside the time).\n",
            "DataProtectionRoundTrip": "One Protect and one Unprotect of a payload (Size) with AES-256-CBC + "
                                       "HMACSHA256; Data Protection makes a new algorithm instance for each, so the gain "
                                       "is two first calls inside everything else the pair does.\n",
        }
        for type_name, title, render in sections:
            if type_name in self.by_type:
                out.append(f"## {title}\n")
                if type_name in notes:
                    out.append(notes[type_name])
                out.append(render(type_name) + "\n")
        known = {s[0] for s in sections}
        for type_name in self.by_type:
            if type_name not in known:
                out.append(f"## {type_name}\n")
                out.append(self.comparison_table(type_name, [(k, k) for k in self.by_type[type_name][0]["params"]]) + "\n")
        cpu_types = [t for t in self.by_type if any(b["method"] == "CachedCpu" for b in self.by_type[t])]
        if cpu_types:
            out.append("## The opt-in CPU intrinsics backend\n")
            out.append("Measured in the same run by the `--cpu-intrinsics` jobs (`CACHEDAES_USE_CPU_INTRINSICS=1` in the "
                       "benchmark process; each such process checks that CachedAes chose `CpuIntrinsics`). Here the "
                       "**CachedAes** columns are that backend; stock and the reference come from the platform jobs "
                       "of the same run, and the platform backend's own figures are in the sections above.\n")
            references = {"EcbCbcSteady": ("Floor", "Floor"), "KwpSteady": ("Floor", "Floor"),
                          "EcbCbcSingle": ("StockNativeSequence", "Native sequence"),
                          "PerMessage": ("BouncyCastle", "BouncyCastle")}
            for type_name in cpu_types:
                reference, title = references.get(type_name, (None, None))
                out.append(f"### {type_name}\n")
                out.append(self.comparison_table(type_name, [(k, k) for k in self.by_type[type_name][0]["params"]],
                                                 reference, title, cached="CachedCpu") + "\n")
        out.append("## Where a steady 16 B call goes\n")
        out.append("Instructions per call under `valgrind --tool=callgrind` (repeatable on a busy machine; the "
                   "difference of two call counts, median of four rounds) and native nanoseconds per call "
                   "(noisy), layer by layer from the native update alone (in C) to the public call "
                   "(`benchmarks/CachedAes.Breakdown`, .NET 10). **Δ** is what a layer adds to the one before it on "
                   "the path `native:floor` → `pinvoke` → `handle` → `lease` → `oneshot` → `public` (for "
                   "`pinvoke-sgt`: against `pinvoke`); the other rows are references. The layer list is "
                   "`benchmarks/CachedAes.Breakdown/Layers.cs`. Under valgrind the JIT sees a CPU without AVX-512 "
                   "and can inline differently from a native run.\n")
        out.append(self.breakdown_tables() + "\n")
        out.append("## How it was measured\n")
        out.append("\n".join([
            "- `bash scripts/benchmark-report.sh` runs the layer breakdown (`benchmarks/CachedAes.Breakdown/breakdown.sh`), "
            "then the BenchmarkDotNet suite (`benchmarks/CachedAes.Benchmarks`; its JSON export is what this page "
            "and the chart are made from), then this page (`scripts/benchmark_report.py`) and the chart (gnuplot).",
            "- **Two runtimes, one run.** The suite gives BenchmarkDotNet two jobs with the same settings: one on the "
            "host's .NET 10, and one whose toolchain (`Runtimes.cs`) builds the generated benchmark program for "
            "net11.0 against `benchmarks/CachedAes.Benchmarks.Net11` (the same sources, CachedAes's lib/net11.0) "
            "with the .NET 10 SDK and runs it with the .NET 11.0.0 runtime in `artifacts/dotnet11` (laid out from "
            "the NuGet runtime packs by `build/Dotnet11Runtime`). BenchmarkDotNet runs the cases grouped by class "
            "and parameters, so a case's .NET 10 and .NET 11 rows, and its floor, run one after another.",
            "- **The floor in the same conditions.** The Floor rows are benchmark methods of the same classes, run "
            "in the same kind of process, warmed up and measured by BenchmarkDotNet like the rows they divide "
            "(tiered compilation has finished before anything is timed). They make the libcrypto calls the work "
            "needs at least: a context keyed once, one `EVP_CipherUpdate` of the padded message (CBC: on a context "
            "that is never restarted, each message started at its IV by a 16-byte fix-up), RFC 5649/3394 one update "
            "per AES step, through `LibraryImport` with raw pointers and `[SuppressGCTransition]`; each checks its "
            "output against stock's first. The C program `benchmarks/native-floor/floor.c` (same work) stays for "
            "instruction counts under callgrind and CI's smoke test; its times come from another process at "
            "another moment, so they are not used here.",
            "- On a shared 2-core machine, compare ratios within one run rather than absolute times across runs.",
        ]) + "\n")
        with open(self.args.out, "w") as f:
            f.write("\n".join(out))
        return chart

    def rfc3394_table(self, type_name):
        runtimes = [r for r in RUNTIMES if any(b["runtime"] == r for b in self.by_type.get(type_name, []))]
        header = ["Operation", "Length", "Stock .NET 11"] + [f"CachedAes {RUNTIME_NAMES[r]}" for r in runtimes] + \
            [f"Floor {RUNTIME_NAMES[r]}" for r in runtimes] + \
            [f"OpenSSL AES-256-WRAP {RUNTIME_NAMES[r]}" for r in runtimes] + \
            ["Speed-up vs stock .NET 11 (CachedAes .NET 11)"] + [f"× floor {RUNTIME_NAMES[r]}" for r in runtimes] + \
            ["Allocated: stock .NET 11 → CachedAes"]
        rows = []
        for params in self.param_sets(type_name):
            s = self.get(type_name, "Stock", "net11", **params)
            c = {r: self.get(type_name, "Cached", r, **params) for r in runtimes}
            f = {r: self.get(type_name, "Floor", r, **params) for r in runtimes}
            o = {r: self.get(type_name, "OpenSslWrapCipher", r, **params) for r in runtimes}
            rows.append([params.get("Operation"), size(params.get("Length")), cell(s)]
                        + [cell(c[r]) for r in runtimes] + [cell(f[r]) for r in runtimes] + [cell(o[r]) for r in runtimes]
                        + [times(divide(mean(s), mean(c.get("net11"))))]
                        + [times(divide(mean(c[r]), mean(f[r]))) for r in runtimes]
                        + [f"{alloc(s and s['alloc'])} → " + " / ".join(alloc(c[r] and c[r]['alloc']) for r in runtimes)])
        return ("Stock RFC 3394 exists on .NET 11 only (`Aes.EncryptKeyWrap`); on .NET 11 CachedAes is called through "
                "`Aes`'s own members, which run CachedAes's cores. OpenSSL's own wrap cipher is shown for reference "
                "(it does not use AES-NI on OpenSSL 3.0).\n\n" + table(header, rows, ["l", "l"] + ["r"] * (len(header) - 2)))


def cell(b):
    if b is None:
        return "n/a"
    if b["mean"] is None:
        return "**no result**"
    return ns(b["mean"])


def allocs(found):
    """'64 / 0 B': the bytes allocated per call by each of the rows (one per runtime)."""
    values = ["n/a" if b is None or b["alloc"] is None else f"{int(b['alloc']):,}" for b in found]
    return " / ".join(values) + " B"


def params_text(b):
    return ", ".join(f"{k}={v}" for k, v in b["params"].items())


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
