#!/usr/bin/env bash
# A Data Protection key ring across CachedAes versions. Data Protection stores CachedAes's assembly-qualified type name,
# assembly version included, in every key UseCachedAes() makes, and the assembly version is <major>.0.0.0
# (CONTRIBUTING.md, "Versions and packages"). This builds tests/CachedAes.DataProtection.UpgradeCheck against CachedAes
# built as this release, as the next minor release and as the next major release (VersionPrefix set for each; each
# build in its own folder), then has one build write a key ring and payloads and another read them back:
#   this -> next minor, next minor -> this     (upgrade and rollback within a major version: must read)
#   this -> next major                         (upgrade to a new major version: must read)
#   next major -> this                         (rollback across a major version: must fail, as documented, because
#                                               .NET does not load an assembly older than the name asks for)
# Prints PASS/FAIL lines and "dataprotection-upgrade: N passed, N failed, N skipped"; exits non-zero on a failure.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app="$repo/tests/CachedAes.DataProtection.UpgradeCheck/CachedAes.DataProtection.UpgradeCheck.csproj"
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
for version in "$this" "$minor" "$major"; do
  out="$work/build-$version"
  if dotnet build "$app" -c Release -p:VersionPrefix="$version" -p:UseArtifactsOutput=true -p:ArtifactsPath="$out" >"$work/build-$version.log" 2>&1; then
    exe[$version]="$out/bin/CachedAes.DataProtection.UpgradeCheck/release/CachedAes.DataProtection.UpgradeCheck.dll"
    loaded=$(dotnet "${exe[$version]}" read /nonexistent 2>/dev/null | sed -n 's/^cachedaes-assembly: //p')
    pass "built against CachedAes $version ($loaded)"
  else
    tail -n 20 "$work/build-$version.log"
    fail "build against CachedAes $version"
    finish
  fi
done

# The assembly versions the policy gives: this release and the next minor share one; the next major has its own.
name_of() { dotnet "${exe[$1]}" read /nonexistent 2>/dev/null | sed -n 's/^cachedaes-assembly: //p'; }
this_name=$(name_of "$this") minor_name=$(name_of "$minor") major_name=$(name_of "$major")
if [[ "$this_name" == "$minor_name" && "$this_name" == *"Version=${this%%.*}.0.0.0,"* && "$major_name" == *"Version=${major%%.*}.0.0.0,"* ]]; then
  pass "assembly versions: $this and $minor are ${this%%.*}.0.0.0, $major is ${major%%.*}.0.0.0"
else
  fail "assembly versions do not follow <major>.0.0.0: '$this_name', '$minor_name', '$major_name'"
fi

# read_ring WRITER READER: the reader's log; returns the reader's exit code.
read_ring() {
  local ring="$work/ring-$1-to-$2"
  if ! dotnet "${exe[$1]}" write "$ring" >"$ring.write.log" 2>&1; then
    cat "$ring.write.log"
    echo "(the writer failed)" >"$ring.read.log"
    return 1
  fi
  dotnet "${exe[$2]}" read "$ring" >"$ring.read.log" 2>&1
}

for pair in "$this $minor" "$minor $this" "$this $major"; do
  read -r writer reader <<<"$pair"
  log="$work/ring-$writer-to-$reader.read.log"
  if read_ring "$writer" "$reader" && grep -qx 'upgrade-check: OK' "$log"; then
    pass "key ring written with CachedAes $writer, read with $reader: $(grep -c '^ok:' "$log") checks, $(sed -n 's/^key-records: .*\(Version=[^,]*\).*/the key names \1/p' "$log")"
  else
    grep -E '^(FAIL|key-records|cachedaes-assembly|upgrade-check|\(the writer)' "$log" | head -n 8
    fail "key ring written with CachedAes $writer, read with $reader"
  fi
done

# The documented limit: an earlier major version cannot load the later one's assembly name, so no payload unprotects.
log="$work/ring-$major-to-$this.read.log"
read_ring "$major" "$this"
if [[ $(grep -c '^FAIL: .*-byte payload: .*FileNotFoundException: Could not load file or assembly .CachedAes, Version='"${major%%.*}"'\.0\.0\.0' "$log") -eq 14 ]]; then
  pass "key ring written with CachedAes $major, read with $this: no payload unprotects, the key's assembly cannot be loaded (as documented)"
else
  grep -E '^(ok|FAIL|key-records|upgrade-check)' "$log" | head -n 8
  fail "key ring written with CachedAes $major, read with $this: expected each of the 14 unprotects to fail for the missing assembly version"
fi
finish
