#!/usr/bin/env bash
# The Wine lane: the Windows (CNG) backend over a real bcrypt.dll on Linux.
#
#   bash scripts/wine-lane.sh
#
# Installs Debian's Wine if missing (apt-get; Debian 12 has Wine 8.0), publishes tests/lanes/CachedAes.WineTests as a
# self-contained win-x64 app, creates a fresh Wine prefix, and runs the app twice: as Wine reports itself by default
# (Windows 7: CNG on opened AES providers) and after switching the prefix to Windows 10 (CNG on the algorithm
# pseudo-handles). Each run prints "wine: N passed, N failed, N skipped"; this script ends with their sum,
# "wine-lane: N passed, N failed, N skipped", and exits non-zero on any failure, including a run that printed no
# counts (a crash or a timeout) or a setup step that failed. Nothing is skipped silently.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# Outside the repository: a Wine prefix's dosdevices/z: links to /, and tools that walk the repository (BenchmarkDotNet
# looks for its project file that way) would walk the whole machine through it.
out="${CACHEDAES_WINE_DIR:-${TMPDIR:-/tmp}/cachedaes-wine-lane}"
rm -rf "$out"
mkdir -p "$out"

lane_start=$SECONDS
phase_start=$SECONDS
phase() { echo "wine-lane: $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
setup_failed() {
  echo "wine-lane: $1"
  echo "wine-lane: 0 passed, 1 failed, 0 skipped"
  exit 1
}

# 1. Wine.
. scripts/lib/wine.sh
wine_install wine-lane.sh "$out/apt.log" \
  || setup_failed "Wine is not installed, and installing wine, wine64 and libgnutls30 with apt-get failed"
echo "wine-lane: $(wine --version 2>/dev/null)"
phase "installing Wine"

# 2. The test app, self-contained for win-x64 (the runtime and host packs restore from the package source). It runs
# CachedAes's net10.0 build on .NET 10: CachedAesTargetFrameworks=net10.0 keeps the library's net11.0 build out of
# this restore, which would otherwise want .NET 11's win-x64 runtime packs (the development machines'
# package source has linux-x64 ones only; see CONTRIBUTING.md).
dotnet publish tests/lanes/CachedAes.WineTests -c Release -r win-x64 --self-contained -p:CachedAesTargetFrameworks=net10.0 \
  -o "$out/app" > "$out/publish.log" 2>&1 \
  || { tail -30 "$out/publish.log"; setup_failed "publishing tests/lanes/CachedAes.WineTests for win-x64 failed"; }
phase "publishing the win-x64 test app"

# 3. A fresh prefix (scripts/lib/wine.sh: mscoree stays enabled, .NET's W^X mapping off, no display).
wine_prefix "$out/prefix" "$out/wineboot.log" || setup_failed "creating the Wine prefix failed"
phase "creating the Wine prefix"

passed=0; failed=0; skipped=0
run() { # run <name> <--expect value>
  local log="$out/$1.log"
  timeout 900 wine "$out/app/CachedAes.WineTests.exe" --expect "$2" > "$log.crlf" 2>&1
  local status=$?
  tr -d '\r' < "$log.crlf" > "$log" # a Windows console program ends its lines with CR LF
  rm -f "$log.crlf"
  grep -av '^[0-9a-f]\{4\}:fixme:' "$log" || true
  local line
  line=$(grep -aE '^wine: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "wine-lane: the $1 run printed no counts (exit status $status): counted as a failure"
    failed=$((failed + 1))
    return
  fi
  read -r p f s < <(echo "$line" | sed -E 's/^wine: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "wine-lane: the $1 run exited with $status but reported no failure: counted as a failure"
    failed=$((failed + 1))
  fi
}

# 4. Wine 8.0 reports Windows 7 unless told otherwise: CNG must come up on opened AES providers.
run win7 providers
phase "the Windows 7 run (opened providers)"

# 5. The same prefix reporting Windows 10: CNG must come up on the algorithm pseudo-handles.
wine_windows_version win10 || { echo "wine-lane: switching the prefix to Windows 10 failed"; failed=$((failed + 1)); }
run win10 pseudo-handles
phase "the Windows 10 run (pseudo-handles)"

wineserver -k 2>/dev/null || true
echo "wine-lane: $((SECONDS - lane_start)) s in all"
echo "wine-lane: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
