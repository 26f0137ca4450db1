#!/usr/bin/env bash
# The lifecycle races as plain programs (tests/lanes/CachedAes.Stress, mode "lifecycle"), each under both of glibc's heap
# checkers: plain glibc (its tcache checks abort on "unaligned tcache chunk" when a freed small block is written, as a
# key rewrite into released key memory did) and the debug allocator (MALLOC_CHECK_=3 from libc_malloc_debug.so, which
# checks other things and misses that one). Freed memory is filled with garbage (MALLOC_PERTURB_) under both.
#
#   bash scripts/lifecycle-stress.sh [SECONDS]     # SECONDS per program and allocator; 30 by default (.ci/run: 20)
#
# The programs, each on one shared instance over OpenSSL with two threads per operation and forced yields, every output
# compared with stock and every native handle counted back: two key setters; key setters racing Dispose with the
# instance replaced; CreateEncryptor(), CreateEncryptor(key, iv) and transform calls racing key changes and Dispose.
# Then issue 41's programs on the public surface (UserRaces.cs): setters racing Dispose with a new instance each round,
# a transform disposed mid-call with the key changed after, a key array rewritten while it is set, and instances dropped
# after two modes on four threads (resident set growth under 150 MB, no native context left). Every program runs with
# the ownership audit on (CACHEDAES_AUDIT_OWNERSHIP=1: src/CachedAes/Ownership/OwnershipAudit.cs), which ends the process
# at the first key memory or handle with two holders.
# Ends with "lifecycle-stress: N passed, N failed, N skipped"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
seconds=${1:-30}

out=artifacts/lifecycle-stress
rm -rf "$out"
mkdir -p "$out"

dotnet build tests/lanes/CachedAes.Stress -c Release > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; echo "lifecycle-stress: 0 passed, 1 failed, 0 skipped"; exit 1; }
app=tests/lanes/CachedAes.Stress/bin/Release/net10.0/CachedAes.Stress.dll
malloc_debug=$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -n 1)

passed=0; failed=0; skipped=0
run() { # run <name> <allocator: plain|debug> <operations>
  local name=$1 allocator=$2 ops=$3
  local log="$out/$name-$allocator.log"
  local -a env=(MALLOC_PERTURB_=165 CACHEDAES_AUDIT_OWNERSHIP=1)
  if [ "$allocator" = debug ]; then
    if [ -z "$malloc_debug" ]; then
      echo "SKIP $name ($allocator): no libc_malloc_debug.so.0 (glibc before 2.34)"
      skipped=$((skipped + 1))
      return
    fi
    env+=(LD_PRELOAD="$malloc_debug" MALLOC_CHECK_=3)
  fi
  local start=$SECONDS
  # shellcheck disable=SC2086 # $ops is the program's mode and arguments, split on purpose
  env "${env[@]}" timeout $((seconds + 120)) dotnet "$app" $ops > "$log" 2>&1
  local status=$?
  if [ "$status" -eq 0 ] && grep -qx 'stress: OK' "$log"; then
    echo "PASS $name ($allocator glibc, $((SECONDS - start)) s): $(grep -E '^(lifecycle|key-dispose|transform-dispose|key-buffer|dropped-load)[: ]' "$log")"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($allocator glibc, exit status $status; $log)"
    tail -n 5 "$log"
    failed=$((failed + 1))
  fi
}

for allocator in plain debug; do
  run two-setters "$allocator" "lifecycle $seconds SetKey,SetKey"
  run setters-and-dispose "$allocator" "lifecycle $seconds SetKey,Dispose"
  run transforms-key-changes-and-dispose "$allocator" "lifecycle $seconds CreateTransform,CreateTransformWithKey,TransformCall,SetKey,Dispose"
  run key-dispose "$allocator" "key-dispose $seconds"
  run transform-dispose "$allocator" "transform-dispose $seconds"
  run key-buffer "$allocator" "key-buffer $seconds"
  run dropped-load "$allocator" "dropped-load $seconds 4 150"
done

echo "lifecycle-stress: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
