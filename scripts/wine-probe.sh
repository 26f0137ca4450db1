#!/usr/bin/env bash
# Where a new-key CBC message's time goes on CNG under Wine: publishes benchmarks/CachedAes.WineProbe self-contained
# for win-x64 (CachedAes's net10.0 build), creates a fresh Wine prefix reporting Windows 10, and runs the probe, which
# prints CSV (case, ns per message, bytes allocated per message): stock, CachedAes as selected (CBC over the ECB handle
# on Wine 8.0), CachedAes on CNG's own CBC, and the bare bcrypt.dll steps. On demand, not part of .ci/run; about
# 3 minutes on 2 cores. Wine's bcrypt.dll is not Windows's: this says how the CNG path behaves on Wine, not what
# Windows costs.
#
#   bash scripts/wine-probe.sh [MESSAGES]        (messages per round; default 200000)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/cachedaes-wine-probe"
rm -rf "$out"
mkdir -p "$out"

. scripts/lib/wine.sh
wine_app wine-probe benchmarks/CachedAes.WineProbe "$out" || exit 2
echo "wine-probe: $(wine --version 2>/dev/null), prefix as Windows 10"
wine "$out/app/CachedAes.WineProbe.exe" "$@" 2>&1 | tr -d '\r'
status=${PIPESTATUS[0]}
wineserver -k 2>/dev/null
exit "$status"
