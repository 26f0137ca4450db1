#!/usr/bin/env bash
# The CNG backend's speed under Wine, against stock .NET on the same Wine: publishes benchmarks/CachedAes.Benchmarks
# self-contained for win-x64 (CachedAes's net10.0 build), creates a fresh Wine prefix reporting Windows 10, and runs
# BenchmarkDotNet in process (--inprocess: no child processes under Wine) with the short job over the given filters
# (default: the per-message shapes and the steady 16 B calls, stock and CachedAes; the floor rows, CNG here, and the
# BouncyCastle rows are not the point here). On demand, not part of .ci/run; about 5 minutes on 2 cores.
#
#   bash scripts/wine-bench.sh ['FILTER' ...]        (CACHEDAES_WINE_BENCH_JOB=medium for a longer job; default short)
#
# BenchmarkDotNet 0.14 used to stall under Wine when it exported its summary: its WMI query (is this a virtual machine?)
# fails there, and the process then crashed on its next exception. The program now keeps that query out under Wine
# (BenchmarkSetup.KeepWmiOutUnderWine; scripts/wine-main-job.sh runs the whole main job to its table), but this script
# still reads each case's result from BenchmarkDotNet's own per-case lines ("Mean = ..." and "// GC: ..."), prints a
# table, and stops the process once the export starts. Wine's bcrypt.dll is not Windows's: these numbers say how the
# CNG path behaves on Wine 8 (whose CBC makes CachedAes chain CBC over its ECB handle), not what Windows costs.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${CACHEDAES_WINE_BENCH_DIR:-${TMPDIR:-/tmp}/cachedaes-wine-bench}"
rm -rf "$out"
mkdir -p "$out"
filters=("$@")
[[ ${#filters[@]} -gt 0 ]] || filters=('*PerMessage.Stock*' '*PerMessage.Cached*' '*EcbCbcSteady.Stock(Size: 16,*' '*EcbCbcSteady.Cached(Size: 16,*')

. scripts/lib/wine.sh
wine_app wine-bench benchmarks/CachedAes.Benchmarks "$out" || exit 2
echo "wine-bench: $(wine --version 2>/dev/null), prefix as Windows 10; job ${CACHEDAES_WINE_BENCH_JOB:-short}; filters: ${filters[*]}"

log="$out/bench.log"
wine "$out/app/CachedAes.Benchmarks.exe" --inprocess --job "${CACHEDAES_WINE_BENCH_JOB:-short}" --filter "${filters[@]}" --artifacts 'Z:\tmp\cachedaes-wine-bench-artifacts' >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 1800); do
  if grep -q '^// \* Export \*' "$log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 1
done
kill "$pid" 2>/dev/null
wineserver -k 2>/dev/null
head -n 1 "$log"

python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read().replace("\r", "")
rows, case, allocated = [], None, None
for line in text.split("\n"):
    m = re.match(r"// Benchmark: (\S+): .*\[(.*)\]", line)
    if m:
        case, allocated = (m.group(1), m.group(2)), None
        continue
    m = re.match(r"// GC:\s+\d+ \d+ \d+ (\d+) (\d+)", line)
    if m and case:
        allocated = int(m.group(1)) / max(1, int(m.group(2)))
        continue
    m = re.match(r"Mean = ([\d.,]+) (ns|us|ms), StdErr = [\d.,]+ \w+ \(([\d.]+)%\)", line)
    if m and case:
        scale = {"ns": 1, "us": 1e3, "ms": 1e6}[m.group(2)]
        rows.append((case[1], case[0], float(m.group(1).replace(",", "")) * scale, m.group(3), allocated))
        case = None
if not rows:
    sys.exit("wine-bench: no results in the log")
stock = {p: mean for p, name, mean, _, _ in rows if name.endswith(".Stock")}
print("| Case | Method | Mean | StdErr | Allocated | Ratio to stock |")
print("|---|---|---:|---:|---:|---:|")
for p, name, mean, err, alloc in rows:
    ratio = f"{mean / stock[p]:.2f}" if p in stock else ""
    print(f"| {p} | {name} | {mean:,.1f} ns | {err}% | {alloc:.0f} B | {ratio} |")
PY
