#!/usr/bin/env bash
# A Data Protection key ring across CachedAes versions and shared with an application without CachedAes. UseCachedAes()
# writes nothing naming CachedAes into the key ring (docs/integrations.md), so every pairing below must read every payload.
# This builds tests/lanes/CachedAes.DataProtection.UpgradeCheck against CachedAes built as this release, as the next minor and
# as the next major release (VersionPrefix set for each, so each has its own assembly version; each build in its own
# folder), and once without CachedAes at all (-p:CachedAesStockOnly=true: stock Data Protection, the package removed).
# Then builds write key rings and payloads and other builds read them:
#   this <-> next minor, this <-> next major                (upgrades and rollbacks, within and across major versions)
#   stock-only first, then this; this first, then stock-only (a shared ring, either application first), each with two
#                                                           key rotations, one by each side, every payload read by both
#   the key ring the first UseCachedAes() wrote (tests/CachedAes.DataProtection.Tests/LegacyKeyRing, its key names
#   CachedAes 0.0.0.0): this and the next major read it; stock-only cannot (the lock-in those keys carry); after the
#   documented move (the key's algorithm rewritten to Aes) stock-only and this read every payload.
# Builds with CachedAes also check that CachedAes ran for every payload UseCachedAes() protected or unprotected.
# Prints PASS/FAIL lines and "dataprotection-upgrade: N passed, N failed, N skipped"; exits non-zero on a failure.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app="$repo/tests/lanes/CachedAes.DataProtection.UpgradeCheck/CachedAes.DataProtection.UpgradeCheck.csproj"
legacy="$repo/tests/CachedAes.DataProtection.Tests/LegacyKeyRing"
work=$(mktemp -d "${TMPDIR:-/tmp}/cachedaes-dp-upgrade.XXXXXX")
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
  echo "dataprotection-upgrade: $passed passed, $failed failed, 0 skipped"
  if [[ $failed -eq 0 ]]; then rm -rf "$work"; else echo "dataprotection-upgrade: work kept in $work"; fi
  [[ $failed -eq 0 ]]
  exit
}

this=$(dotnet msbuild "$repo/src/CachedAes/CachedAes.csproj" -nologo -getProperty:VersionPrefix 2>/dev/null | tr -d '[:space:]')
[[ "$this" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { fail "could not read VersionPrefix ('$this')"; finish; }
minor="${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1)).0"
major="$((BASH_REMATCH[1] + 1)).0.0"

# Each build has its own artifacts folder, so none touches the repository's bin/ and obj/ or another build's output.
declare -A exe
for build in "$this" "$minor" "$major" stock-only; do
  out="$work/build-$build"
  if [[ "$build" == stock-only ]]; then props=(-p:CachedAesStockOnly=true); else props=(-p:VersionPrefix="$build"); fi
  if dotnet build "$app" -c Release "${props[@]}" -p:UseArtifactsOutput=true -p:ArtifactsPath="$out" >"$work/build-$build.log" 2>&1; then
    exe[$build]="$out/bin/CachedAes.DataProtection.UpgradeCheck/release/CachedAes.DataProtection.UpgradeCheck.dll"
    pass "built $build ($(dotnet "${exe[$build]}" read /nonexistent 2>/dev/null | sed -n 's/^cachedaes-assembly: //p'))"
  else
    tail -n 20 "$work/build-$build.log"
    fail "build $build"
    finish
  fi
done
if ls "$work/build-stock-only/bin/CachedAes.DataProtection.UpgradeCheck/release/" | grep -qi '^cachedaes\.dll$'; then
  fail "the stock-only build carries CachedAes.dll"
fi

# step RING BUILD write|read [rotate]: runs one build on a ring; the log is RING.N.log. Returns 0 on "upgrade-check: OK".
step() {
  local ring=$1 build=$2 n
  shift 2
  n=$(ls "$ring".*.log 2>/dev/null | wc -l)
  local log="$ring.$n.log"
  dotnet "${exe[$build]}" "$1" "$ring" "${@:2}" >"$log" 2>&1
  local rc=$?
  last_log=$log
  [[ $rc -eq 0 ]] && grep -qx 'upgrade-check: OK' "$log"
}
show() { grep -E '^(FAIL|key:|cachedaes-assembly|upgrade-check)' "$last_log" | head -n 12; }

# sequence NAME BUILD:ACTION...: one ring, the steps in order; one PASS or FAIL for the whole sequence.
sequence() {
  local name=$1 ring="$work/ring-${1// /-}" s build action
  shift
  for s in "$@"; do
    IFS=: read -r build action <<<"$s"
    if ! step "$ring" "$build" ${action//+/ }; then
      show
      fail "$name: $build $action"
      return
    fi
  done
  pass "$name: $(grep -c '^ok:' "$ring".*.log | awk -F: '{n += $2} END {print n}') checks, $(ls "$ring"/key-*.xml | wc -l) keys, none naming CachedAes"
}

sequence "this to next minor and back" "$this:write" "$minor:read" "$minor:write+rotate" "$this:read"
sequence "this to next major and back" "$this:write" "$major:read" "$major:write+rotate" "$this:read"
sequence "stock-only first, then this" "stock-only:write" "$this:read" "$this:write+rotate" "stock-only:read" "stock-only:write+rotate" "$this:read" "stock-only:read"
sequence "this first, then stock-only" "$this:write" "stock-only:read" "stock-only:write+rotate" "$this:read" "$this:write+rotate" "stock-only:read" "$this:read"

# The key ring of the first UseCachedAes(): its key names CachedAes, Version=0.0.0.0.
legacy_ring() { rm -rf "$work/$1" && mkdir -p "$work/$1" && cp "$legacy"/* "$work/$1/"; }
for build in "$this" "$major"; do
  legacy_ring "legacy-$build"
  if step "$work/legacy-$build" "$build" read; then
    pass "the first UseCachedAes()'s key ring, read by $build: $(grep -c '^ok:' "$last_log") checks, CachedAes ran for each"
  else
    show
    fail "the first UseCachedAes()'s key ring, read by $build"
  fi
done
legacy_ring legacy-stock-only
step "$work/legacy-stock-only" stock-only read
if [[ $(grep -c '^FAIL: stock configuration: .*-byte payload of .*FileNotFoundException: Could not load file or assembly .CachedAes, Version=0\.0\.0\.0' "$last_log") -eq 7 ]]; then
  pass "the first UseCachedAes()'s key ring, read by stock-only: no payload unprotects, the key names an assembly that is not there (as documented)"
else
  show
  fail "the first UseCachedAes()'s key ring, read by stock-only: expected each of the 7 unprotects to fail for the missing CachedAes assembly"
fi
legacy_ring legacy-moved
sed -i 's/algorithm="CachedCryptography\.CachedAes, CachedAes, Version=[^"]*"/algorithm="Aes"/' "$work"/legacy-moved/key-*.xml
if ! grep -q CachedAes "$work"/legacy-moved/key-*.xml && step "$work/legacy-moved" stock-only read && step "$work/legacy-moved" "$this" read; then
  pass "the first UseCachedAes()'s key ring with its key's algorithm rewritten to Aes: stock-only and $this read every payload"
else
  show
  fail "the first UseCachedAes()'s key ring with its key's algorithm rewritten to Aes"
fi
finish
