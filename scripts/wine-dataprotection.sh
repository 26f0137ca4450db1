#!/usr/bin/env bash
# Data Protection on Windows, stock and UseCachedAes() sharing one key ring, under Wine (on demand; not part of .ci/run):
#
#   bash scripts/wine-dataprotection.sh
#
# Publishes tests/lanes/CachedAes.DataProtection.WineCheck self-contained for win-x64 (.NET 10 and ASP.NET Core 10, whose
# win-x64 runtime packs restore from the package source), creates a fresh Wine prefix and runs it twice, as Windows 7
# and as Windows 10, with the Wine lane's settings (scripts/wine-lane.sh). For Data Protection's default configuration
# and for a managed configuration naming Aes, in a key ring made by stock and in one made by UseCachedAes(), the program
# reports which authenticated encryptor each application gets for the same key (default configuration: Data
# Protection's CNG encryptor in both, UseCachedAes() leaves it in place on Windows; managed configuration: the managed
# encryptor, over CachedAes with UseCachedAes()), and checks that the ring names no CachedAes, that CachedAes ran for
# UseCachedAes() exactly where it takes over and never for stock, and that payloads cross both ways. Ends with
# "wine-dataprotection: N passed, N failed, N skipped". Installs Debian's Wine when missing, as the Wine lane does.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

out="${CACHEDAES_WINE_DP_DIR:-${TMPDIR:-/tmp}/cachedaes-wine-dataprotection}"
rm -rf "$out"
mkdir -p "$out"
setup_failed() {
  echo "wine-dataprotection: $1"
  echo "wine-dataprotection: 0 passed, 1 failed, 0 skipped"
  exit 1
}

. scripts/lib/wine.sh
wine_install wine-dataprotection.sh "$out/apt.log" \
  || setup_failed "Wine is not installed, and installing wine, wine64 and libgnutls30 with apt-get failed"

# net10.0 only (CachedAesTargetFrameworks): the development machines' package source has no .NET 11 win-x64 runtime
# packs (see CONTRIBUTING.md).
dotnet publish tests/lanes/CachedAes.DataProtection.WineCheck -c Release -r win-x64 --self-contained \
  -p:CachedAesTargetFrameworks=net10.0 -o "$out/app" > "$out/publish.log" 2>&1 \
  || { tail -30 "$out/publish.log"; setup_failed "publishing tests/lanes/CachedAes.DataProtection.WineCheck for win-x64 failed"; }

wine_prefix "$out/prefix" "$out/wineboot.log" || setup_failed "creating the Wine prefix failed"

passed=0; failed=0
run() {
  local log="$out/$1.log"
  timeout 600 wine "$out/app/CachedAes.DataProtection.WineCheck.exe" > "$log.crlf" 2>&1
  local status=$?
  tr -d '\r' < "$log.crlf" > "$log"
  rm -f "$log.crlf"
  echo "---- $1"
  grep -av '^[0-9a-f]\{4\}:fixme:' "$log" || true
  if [ "$status" -eq 0 ] && grep -qx 'dataprotection-check: OK' "$log"; then
    passed=$((passed + 1))
  else
    echo "wine-dataprotection: the $1 run failed (exit status $status)"
    failed=$((failed + 1))
  fi
}

run win7
wine_windows_version win10 || { echo "wine-dataprotection: switching the prefix to Windows 10 failed"; failed=$((failed + 1)); }
run win10
wineserver -k 2>/dev/null || true
echo "wine-dataprotection: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
