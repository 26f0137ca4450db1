"""One run of scripts/benchmark-report.sh read back: BenchmarkDotNet's CSV exports (every summary column, Exceptions, Check
threw and Check wrong included), its brief JSON's host section, the breakdown's CSV and env.txt, cells as written."""
import csv
import glob
import json
import os

RUNTIMES = {"net10": ".NET 10", "net11": ".NET 11"}


def number(text):
    """A cell as BenchmarkDotNet writes it ('1,234.5', '0', 'NA', '-', '') as a float, or None."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def runtime_of(job):
    """The runtime of a job, from its id: Runtimes.cs and QuickRun.cs name them <job>-net10 and <job>-net11."""
    return "net11" if job.endswith("-net11") else "net10"


def read_rows(paths, parameter_names):
    """One dict per row of the exports. A joined export has a Type column; one of a single class is named after it."""
    rows = []
    for path in paths:
        only_class = os.path.basename(path)[: -len("-report.csv")].split(".")[-1]
        with open(path, newline="") as f:
            for cells in csv.DictReader(f):
                job, method = cells.get("Job", ""), cells["Method"]
                if "-cpu-" in job:
                    # A --cpu-intrinsics job (Runtimes.CpuIntrinsicsJobs): its Cached rows are the CPU intrinsics
                    # backend, kept as method CachedCpu; its other rows repeat the platform job's and are left out.
                    if method != "Cached":
                        continue
                    method = "CachedCpu"
                rows.append({
                    "type": cells.get("Type") or only_class, "method": method, "job": job, "runtime": runtime_of(job),
                    "params": {k: cells[k] for k in parameter_names if cells.get(k) not in (None, "", "?")},
                    "mean": number(cells.get("Mean [ns]")), "alloc": number(cells.get("Allocated [B]")),
                    "ratio": cells.get("Ratio", ""), "exceptions": cells.get("Exceptions", ""),
                    "threw": cells.get("Check threw", ""), "wrong": cells.get("Check wrong", ""),
                })
    return rows


def key(type_name, method, runtime, params):
    return type_name, method, runtime, tuple(sorted((k, str(v)) for k, v in params.items()))


class Run:
    """The rows of one run, looked up by class, method, runtime and parameters."""

    def __init__(self, work):
        # bdn/results (one process ran both runtimes) or bdn/net10/results and bdn/net11/results (the quick mode).
        found = sorted(glob.glob(os.path.join(work, "bdn", "**", "results", "*-report*.*"), recursive=True))
        briefs = [p for p in found if p.endswith("-report-brief.json")]
        self.host, names = {}, set()
        for path in briefs:
            data = json.load(open(path))
            self.host = self.host or data.get("HostEnvironmentInfo", {})
            for b in data.get("Benchmarks", []):
                names.update(p.split("=", 1)[0] for p in b.get("Parameters", "").split("&") if "=" in p)
        self.rows = read_rows([p for p in found if p.endswith("-report.csv")], sorted(names))
        self.index = {key(r["type"], r["method"], r["runtime"], r["params"]): r for r in self.rows}
        self.classes = {}
        for r in self.rows:
            self.classes.setdefault(r["type"], []).append(r)
        self.runtimes = [rt for rt in RUNTIMES if any(r["runtime"] == rt for r in self.rows)]
        self.env = read_env(os.path.join(work, "env.txt"))
        path = os.path.join(work, "breakdown.csv")
        self.breakdown = list(csv.DictReader(open(path))) if os.path.exists(path) else []

    def get(self, type_name, method, runtime, **params):
        return self.index.get(key(type_name, method, runtime, params))


def read_env(path):
    return dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line) if os.path.exists(path) else {}
