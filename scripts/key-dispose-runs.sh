#!/usr/bin/env bash
# Issue 41's acceptance runs of the setters-racing-Dispose program (tests/lanes/CachedAes.Stress, mode key-dispose):
# RUNS runs of SECONDS each, every second run with two CPU-bound processes beside it, under plain glibc or (debug) the
# debug allocator with MALLOC_CHECK_=3. A run over 60 s more than asked is a hang; any other non-zero exit, a heap
# error message or an output unlike stock's is a failure.
#
#   bash scripts/key-dispose-runs.sh [RUNS] [SECONDS] [plain|debug]     # 100 15 plain by default
#
# Ends with "key-dispose-runs: N passed, N failed, N skipped (H hangs)".
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
runs=${1:-100}; seconds=${2:-15}; allocator=${3:-plain}
out=artifacts/key-dispose-runs
mkdir -p "$out"
dotnet build tests/lanes/CachedAes.Stress -c Release > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; echo "key-dispose-runs: 0 passed, 1 failed, 0 skipped (0 hangs)"; exit 1; }
app=tests/lanes/CachedAes.Stress/bin/Release/net10.0/CachedAes.Stress.dll
env=(MALLOC_PERTURB_=165)
if [ "$allocator" = debug ]; then
  malloc_debug=$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -n 1)
  [ -n "$malloc_debug" ] || { echo "key-dispose-runs: 0 passed, 0 failed, 1 skipped (0 hangs)"; exit 0; }
  env+=(LD_PRELOAD="$malloc_debug" MALLOC_CHECK_=3)
fi
passed=0; failed=0; hangs=0
for i in $(seq 1 "$runs"); do
  hogs=()
  if [ $((i % 2)) -eq 0 ]; then
    for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
  fi
  log="$out/run-$allocator-$i.log"
  start=$SECONDS
  env "${env[@]}" timeout $((seconds + 60)) dotnet "$app" key-dispose "$seconds" > "$log" 2>&1
  status=$?
  for h in "${hogs[@]}"; do kill "$h" 2>/dev/null; wait "$h" 2>/dev/null; done
  line=$(grep '^key-dispose:' "$log")
  if [ "$status" -eq 0 ] && grep -qx 'stress: OK' "$log" && ! grep -qiE 'malloc|corrupt|double free|free\(\)' "$log"; then
    passed=$((passed + 1))
    echo "run $i ($allocator, ${#hogs[@]} hogs, $((SECONDS - start)) s): $line"
  else
    failed=$((failed + 1))
    if [ "$status" -eq 124 ] || [ "$status" -eq 3 ]; then hangs=$((hangs + 1)); fi
    echo "FAIL run $i ($allocator, ${#hogs[@]} hogs, exit $status, $((SECONDS - start)) s; $log)"
    tail -n 5 "$log"
  fi
done
echo "key-dispose-runs: $passed passed, $failed failed, 0 skipped ($hangs hangs)"
[ "$failed" -eq 0 ]
