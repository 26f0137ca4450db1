#!/usr/bin/env bash
# The per-message shapes on CNG under Wine, stock against CachedAes, the bare bcrypt.dll steps they are made of, and the
# JWE and Data Protection calls: publishes benchmarks/CachedAes.WineProbe self-contained for win-x64 (CachedAes's
# net10.0 build), creates a fresh Wine prefix reporting Windows 10, and runs the probe RUNS times
# (CACHEDAES_WINE_PROBE_RUNS, default 1). Each run starts one process per CASES argument, in order (shapes, clients,
# all, or the start of case names, such as 'NeverDisposed: stock'; default shapes), so that cases given apart share no
# heap and no collector work. Each process prints CSV (case, fastest round and median round in ns per message, bytes
# allocated per message, collections of each generation per 1,000 messages, the whole process's processor time per
# message in the median round; README.md in the probe's folder lists the cases). With more than one run a summary
# follows: for each CachedAes case, each run's ratio to stock's case of the same shape (fastest rounds, and processor
# time) and their medians. On demand,
# not part of .ci/run; about 2 minutes for the publish and 1-2 minutes a run on 2 cores. Wine's bcrypt.dll is not
# Windows's: this says how the CNG path behaves on Wine, not what Windows costs.
#
#   bash scripts/wine-probe.sh [MESSAGES [CASES ...]]     (messages per round of 15; default 50000)
#   CACHEDAES_WINE_PROBE_RUNS=5 bash scripts/wine-probe.sh 50000 'NewInstance: ' 'NeverDisposed: stock' 'NeverDisposed: CachedAes'
set -uo pipefail
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/cachedaes-wine-probe"
runs="${CACHEDAES_WINE_PROBE_RUNS:-1}"
rm -rf "$out"
mkdir -p "$out"

. scripts/lib/wine.sh
wine_app wine-probe benchmarks/CachedAes.WineProbe "$out" || exit 2
echo "wine-probe: $(wine --version 2>/dev/null), prefix as Windows 10, $runs run(s)"
messages=${1:-50000}
[ $# -gt 0 ] && shift
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(shapes)
status=0
for run in $(seq 1 "$runs"); do
  for which in "${cases[@]}"; do
    echo "---- run $run: $which"
    wine "$out/app/CachedAes.WineProbe.exe" "$messages" "$which" 2>&1 | tr -d '\r' | tee -a "$out/run-$run.csv"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  done
done
wineserver -k 2>/dev/null

if [ "$runs" -gt 1 ]; then
  python3 - "$out" "$runs" <<'PY'
import csv, statistics, sys
folder, runs = sys.argv[1], int(sys.argv[2])
tables, cpu = [], [{} for _ in range(runs)]
for run in range(1, runs + 1):
    rows = {}
    for line in open(f"{folder}/run-{run}.csv"):
        parts = line.strip().rsplit(",", 7)
        if len(parts) == 8 and parts[1].isdigit():
            rows[parts[0]] = int(parts[1])
            cpu[run - 1][parts[0]] = int(parts[7])
    tables.append(rows)
print(f"---- summary of {runs} runs: ns per message (fastest round) in each run; ratio to stock's case of the same shape")
for name in tables[0]:
    figures = [t.get(name) for t in tables]
    line = f"{name}: " + ", ".join(str(f) for f in figures)
    shape = name.split(": ")[0]
    stock = f"{shape}: stock"
    if name != stock and stock in tables[0] and None not in figures:
        ratios = [t[name] / t[stock] for t in tables]
        line += " | ratio " + ", ".join(f"{r:.2f}" for r in ratios) + f" | median {statistics.median(ratios):.2f}"
        cpu_ratios = [c[name] / c[stock] for c in cpu]
        line += " | processor time ratio " + ", ".join(f"{r:.2f}" for r in cpu_ratios) + f" | median {statistics.median(cpu_ratios):.2f}"
    print(line)
PY
fi
exit "$status"
