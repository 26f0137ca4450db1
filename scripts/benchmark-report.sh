#!/usr/bin/env bash
# One command for the benchmark report: runs the layer breakdown and the BenchmarkDotNet suite (every case on .NET 10
# and on .NET 11.0.0, with the native floor measured as rows of the same run), then writes docs/benchmarks.md and the
# chart docs/benchmarks.png (made with gnuplot from BenchmarkDotNet's JSON export). Commit both; the README shows the
# chart.
#
#   bash scripts/benchmark-report.sh [--quick | --full] [--no-breakdown] [--label TEXT] [--baseline FILE]
#                                    [-- BenchmarkDotNet args]
#
#   --quick (default)  the suite's quick mode (benchmarks/CachedAes.Benchmarks/README.md), plus the breakdown (~5 min)
#   --full             every benchmark with BenchmarkDotNet's default job (many hours on 2 cores); add
#                      `-- --job short` for every benchmark with the short job instead (about 1.5 hours)
#   --no-breakdown     skip the callgrind breakdown (the report then says it was not measured)
#   --label TEXT       a line at the top of the report and in the chart title (e.g. "trial run on a busy machine")
#   --baseline FILE    an earlier run's results (docs/benchmarks.json, which every run writes next to the report):
#                      adds "CachedAes before" columns and the target "no CachedAes case slower than before"
#   -- ARGS            passed to the benchmark program, e.g. `-- --filter '*Steady*'`, `-- --no-net11`
#
# Environment: BENCHMARK_REPORT_DIR (default docs) for the outputs (benchmarks.md, .png, and .json: the fields of the
# BenchmarkDotNet export the page was made from that a later --baseline reads); the intermediate files go to
# artifacts/benchmark-report/ (BenchmarkDotNet's own results and log under bdn/).
# Tools: the .NET SDK (the suite lays out the .NET 11 runtime itself, from NuGet), python3, gnuplot, and for the
# breakdown a C compiler with OpenSSL's headers and valgrind. Missing Debian packages (python3, gnuplot-nox; gcc,
# libc6-dev, libssl-dev, valgrind) are installed with apt-get when running as root.
# The load average before and after the suite goes into the report: run it on a quiet machine.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
mode=--quick
breakdown=1
label=
baseline=
bdn_args=()
command_line="bash scripts/benchmark-report.sh${*:+ $(printf '%q ' "$@")}"
command_line=${command_line% }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--full) mode=$1 ;;
    --no-breakdown) breakdown=0 ;;
    --label) label=$2; shift ;;
    --baseline) baseline=$2; shift ;;
    --) shift; bdn_args=("$@"); break ;;
    *) echo "benchmark-report.sh: unknown option $1 (see the comment at the top of this script)" >&2; exit 2 ;;
  esac
  shift
done

out_dir=${BENCHMARK_REPORT_DIR:-docs}
work=artifacts/benchmark-report
rm -rf "$work"
mkdir -p "$work" "$out_dir"
baseline_args=()
if [ -n "$baseline" ]; then
  # Copied first: the default place for a baseline is this run's own output, docs/benchmarks.json.
  cp "$baseline" "$work/baseline.json"
  baseline_args=(--baseline "$work/baseline.json")
fi
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

. "$repo/scripts/lib/apt-install.sh"
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
apt_install benchmark-report.sh "${missing[@]}" || exit 2

load() { cut -d' ' -f1 /proc/loadavg; }
{
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command=$command_line"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "cores=$(nproc)"
  echo "memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || uname -s)"
  echo "kernel=$(uname -r)"
  echo "libcrypto=$(ldconfig -p 2>/dev/null | awk '/libcrypto\.so\.3 / { print $NF; exit }')"
  echo "openssl=$(python3 -c 'import ctypes; c = ctypes.CDLL("libcrypto.so.3"); c.OpenSSL_version.restype = ctypes.c_char_p; print(c.OpenSSL_version(0).decode())' 2>/dev/null || echo unknown)"
  echo "load_before=$(load)"
  if [ -n "$baseline" ]; then echo "baseline_note=$baseline, copied at the start of this run"; fi
} >"$work/env.txt"

if [ "$breakdown" = 1 ]; then
  echo "== 1/3 layer breakdown (callgrind)" >&2
  bash benchmarks/CachedAes.Breakdown/breakdown.sh --out "$work/breakdown.csv"
else
  echo "== 1/3 layer breakdown: skipped (--no-breakdown)" >&2
fi

echo "== 2/3 BenchmarkDotNet suite ($mode), .NET 10 and .NET 11, with the native floor" >&2
echo "load_before_suite=$(load)" >>"$work/env.txt"
started=$(date +%s)
set +e
dotnet run -c Release --project benchmarks/CachedAes.Benchmarks -- "$mode" --artifacts "$work/bdn" "${bdn_args[@]}" \
  2>&1 | tee "$work/benchmarks.log"
suite_status=${PIPESTATUS[0]}
set -e
echo "load_after=$(load)" >>"$work/env.txt"
elapsed=$(( $(date +%s) - started ))
echo "suite_time=$((elapsed / 60)) min $((elapsed % 60)) s (build included)" >>"$work/env.txt"
if [ "$suite_status" -ne 0 ]; then
  echo "benchmark-report.sh: the suite exited with $suite_status (a benchmark failed its check or had no result;" \
    "the report marks those rows and the short comparison above says why)" >&2
fi

echo "== 3/3 report and chart" >&2
python3 scripts/benchmark_report.py --work "$work" --out "$out_dir/benchmarks.md" --chart "$out_dir/benchmarks.png" \
  --label "$label" "${baseline_args[@]}"
# The BenchmarkDotNet export the page was made from, for a later --baseline: the quick mode measures each runtime in a
# process of its own (QuickRun.cs), each with its own export, so the rows of both go into one file. Only what
# scripts/benchmark_report.py reads is kept (the host, and each case's names, parameters, job, mean, median, standard
# error, count and allocation): the full export, every measurement of every case, stays in the work folder.
export_json=$(ls -t "$work"/bdn/results/*-report-brief.json 2>/dev/null | head -n 1 || true)
if [ -n "$export_json" ]; then
  exports=("$export_json")
else
  exports=()
  for f in "$work"/bdn/net1[01]/results/*-report-brief.json; do
    [ -f "$f" ] && exports+=("$f")
  done
fi
if [ "${#exports[@]}" -gt 0 ]; then
  python3 - "$out_dir/benchmarks.json" "${exports[@]}" <<'PY'
import json, sys
merged = None
for path in sys.argv[2:]:
    data = json.load(open(path))
    if merged is None:
        merged = {"Title": data.get("Title"), "HostEnvironmentInfo": data.get("HostEnvironmentInfo", {}), "Benchmarks": []}
    merged["Benchmarks"] += data.get("Benchmarks", [])
kept_statistics = ("N", "Mean", "Median", "StandardError")
for i, b in enumerate(merged["Benchmarks"]):
    stats = b.get("Statistics") or {}
    memory = b.get("Memory") or {}
    merged["Benchmarks"][i] = {
        "DisplayInfo": b.get("DisplayInfo"), "Type": b.get("Type"), "Method": b.get("Method"),
        "Parameters": b.get("Parameters", ""),
        "Statistics": {k: stats[k] for k in kept_statistics if k in stats} or None,
        "Memory": {"BytesAllocatedPerOperation": memory["BytesAllocatedPerOperation"]}
        if "BytesAllocatedPerOperation" in memory else None,
    }
# One case per line, so that a diff between two runs shows which cases changed.
with open(sys.argv[1], "w") as out:
    out.write('{"Title": %s,\n "HostEnvironmentInfo": %s,\n "Benchmarks": [\n' % (
        json.dumps(merged["Title"]), json.dumps(merged["HostEnvironmentInfo"])))
    out.write(",\n".join("  " + json.dumps(b) for b in merged["Benchmarks"]))
    out.write("\n ]}\n")
PY
fi
# The chart's data and gnuplot script stay with the intermediate files.
mv -f "$out_dir/benchmarks.dat" "$out_dir/benchmarks.gp" "$work/" 2>/dev/null || true
echo "benchmark-report.sh: wrote $out_dir/benchmarks.md, .png and .json" >&2
exit "$suite_status"
