#!/usr/bin/env bash
# The README's main job as a Windows user runs it, under Wine: the benchmarks' default quick mode (no arguments) of a
# self-contained win-x64 publish of benchmarks/CachedAes.Benchmarks (CachedAes's net10.0 build: the package source has
# no win-x64 .NET 11 runtime pack), in a fresh Wine prefix reporting Windows 10. There libcrypto.so.3 cannot be loaded:
# the floor rows must run on CNG (Wine's bcrypt.dll) or be left out as "not on this OS", and the run must end with its
# side-by-side table and exit code 0. A self-contained copy has no dotnet to build the .NET 11 half with, so the table
# has the .NET 10 columns only (the run says so). On demand, not part of .ci/run; about 3 minutes on 2 cores once Wine
# is installed (it installs Debian's wine with apt-get when missing): the publish 1-1.5 minutes, the run about 70 s.
#
#   bash scripts/wine-main-job.sh [ARGUMENT ...]    (arguments go to the program, e.g. --filter '*PerMessage*')
#
# Prints the run's own last lines (the table and what was left out) and a closing
# "wine-main-job: N passed, N failed, N skipped" line; exits non-zero when a check failed. Wine's bcrypt.dll is not
# Windows's: the numbers say how the CNG path behaves on Wine 8, not what Windows costs.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out="$repo/artifacts/wine-main-job"
rm -rf "$out"
mkdir -p "$out/run"

passed=0
failed=0
check() { if [ "$1" = 0 ]; then echo "PASS: $2"; passed=$((passed + 1)); else echo "FAIL: $2"; failed=$((failed + 1)); fi; }
finish() { echo "wine-main-job: $passed passed, $failed failed, 0 skipped"; [ "$failed" -eq 0 ]; exit $?; }

. scripts/lib/wine.sh
wine_install wine-main-job.sh "$out/apt.log" || { echo "wine-main-job: could not install Wine"; check 1 "Wine installed"; finish; }

# Inside the repository's artifacts/ folder, as a build of a clone would be: the program looks for the repository
# (found) and then for a dotnet to build the .NET 11 half with (none under Wine), and goes on with .NET 10 alone.
start=$SECONDS
if dotnet publish benchmarks/CachedAes.Benchmarks -c Release -r win-x64 --self-contained -p:CachedAesTargetFrameworks=net10.0 \
  -o "$out/app" >"$out/publish.log" 2>&1; then
  check 0 "published benchmarks/CachedAes.Benchmarks for win-x64 ($((SECONDS - start)) s)"
else
  tail -n 30 "$out/publish.log"
  check 1 "publish for win-x64 (log: $out/publish.log)"
  finish
fi

# The prefix outside the repository: its dosdevices/z: is a link to /, which a walk of the repository would follow.
prefix_root=$(mktemp -d "${TMPDIR:-/tmp}/cachedaes-wine-main-job.XXXXXX")
prefix="$prefix_root/prefix"
trap 'wineserver -k 2>/dev/null; rm -rf "$prefix_root"' EXIT
if ! { wine_prefix "$prefix" "$out/wineboot.log" && wine_windows_version win10; }; then
  check 1 "a Wine prefix reporting Windows 10"
  finish
fi
echo "wine-main-job: $(wine --version 2>/dev/null), prefix as Windows 10"

# The main job: no arguments (or the caller's), its artifacts in the run folder.
log="$out/main-job.log"
start=$SECONDS
(cd "$out/run" && timeout 1800 wine "$out/app/CachedAes.Benchmarks.exe" "$@" >"$log" 2>&1)
status=$?
elapsed=$((SECONDS - start))
wineserver -k 2>/dev/null
tr -d '\r' <"$log" >"$log.txt"

sed -n '/^\/\/ \* Quick comparison/,$p' "$log.txt"
grep -E '^// (Native floor|No \.NET 11 half|Not on this OS)' "$log.txt" | sort -u

check "$status" "the main job exited with $status after $elapsed s (0 expected; log: $log.txt)"
rows=$(sed -n '/^\/\/ \* Quick comparison/,$p' "$log.txt" | grep -c '^| [A-Za-z]')
[ "$rows" -gt 0 ]
check $? "the side-by-side table has $rows rows"
if grep -q '^// Native floor: CNG' "$log.txt"; then
  floors=$(sed -n '/^\/\/ \* Quick comparison/,$p' "$log.txt" | grep -cE '^\| [A-Za-z]+ .*\| (Floor|LeastNativeWork|SubclassFloor) \|')
  [ "$floors" -gt 0 ]
  check $? "the floor rows ran on CNG: $floors rows"
else
  grep -q '^// Not on this OS: ' "$log.txt"
  check $? "no CNG floor here, and the run says which rows it left out"
fi
! grep -qE '^(NO RESULT|ALLOCATES):' "$log.txt"
check $? "every case has a result, and no CachedAes steady-state case allocated"
finish
