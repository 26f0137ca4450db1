#!/usr/bin/env bash
# The memory-error detector: the finalization stress, the drop-a-transform shapes and the lifecycle races
# (tests/lanes/CachedAes.Stress) under valgrind's memcheck, with the collector running constantly, over the OpenSSL backend.
#
#   bash scripts/memcheck.sh
#
# A native context used after it was freed, or freed twice, is reported by memcheck at the very access, even when the
# process goes on and exits normally (which is how such a bug hides: the freed memory still holds what it held). Each
# run must print "stress: OK" and leave no memory error that involves libcrypto, a block managed code allocated (the
# key memory, round keys and buffers CachedAes allocates itself) or the allocator's free (scripts/memcheck_errors.py
# says why the rest of memcheck's reports on a .NET process are not verdicts). Memcheck runs one thread at a time; its
# fair scheduler hands the processor from thread to thread in turn, which the lifecycle races need to interleave (with
# the default scheduler a 20-second run of two key setters on the code before the fix of 2026-11-26 showed nothing,
# with the fair one a 60-second run showed 8 invalid writes into freed key memory). Installs
# valgrind with apt-get if it is missing. Ends with "memcheck: N passed, N failed, N skipped"; exits non-zero on any
# failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

out=artifacts/memcheck
rm -rf "$out"
mkdir -p "$out"

. scripts/lib/apt-install.sh
if ! command -v valgrind >/dev/null 2>&1; then
  apt_install memcheck.sh --sudo --log "$out/apt.log" valgrind \
    || { echo "memcheck: valgrind is missing and could not be installed"; echo "memcheck: 0 passed, 1 failed, 0 skipped"; exit 1; }
fi

dotnet build tests/lanes/CachedAes.Stress -c Release > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; echo "memcheck: 0 passed, 1 failed, 0 skipped"; exit 1; }
app=tests/lanes/CachedAes.Stress/bin/Release/net10.0/CachedAes.Stress.dll

passed=0; failed=0
check() { # check <name> <program arguments...>
  local name=$1
  shift
  local start=$SECONDS
  # A 64 KiB gen-0 budget: collections, and so finalizers, run all the time. Freed blocks stay poisoned for up to
  # 200 MB of later frees, so a late use of one is still seen. The runtime's W^X double mapping of code is off: memcheck
  # does not see code patched through the writable alias and would run stale code (a jump to address 0).
  DOTNET_GCgen0size=10000 DOTNET_EnableWriteXorExecute=0 timeout 900 valgrind --tool=memcheck --fair-sched=yes --undef-value-errors=no --leak-check=no \
    --freelist-vol=200000000 --num-callers=40 --xml=yes --xml-file="$out/$name.xml" \
    dotnet "$app" "$@" > "$out/$name.log" 2>&1
  local status=$?
  if [ "$status" -eq 0 ] && grep -qx 'stress: OK' "$out/$name.log" \
    && python3 scripts/memcheck_errors.py "$out/$name.xml" > "$out/$name.errors" 2>&1; then
    echo "PASS memcheck $name ($((SECONDS - start)) s): $(grep '^stress ' "$out/$name.log")"
    passed=$((passed + 1))
  else
    echo "FAIL memcheck $name (exit status $status; $out/$name.log, $out/$name.xml)"
    tail -n 5 "$out/$name.log"
    tail -n 40 "$out/$name.errors" 2>/dev/null
    failed=$((failed + 1))
  fi
}

check stress stress 600
check other-key other-key 50000
check after-key-change after-key-change 50000
check after-dispose after-dispose 50000
check never-disposed never-disposed 50000
check lifecycle-two-setters lifecycle 60 SetKey,SetKey
check lifecycle-setters-and-dispose lifecycle 60 SetKey,Dispose
check lifecycle-all lifecycle 60 all

echo "memcheck: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
