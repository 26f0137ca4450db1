#!/usr/bin/env bash
# NuGet's audit can never fail a restore of this repository (docs/dependencies.md): NU1901-NU1904 (a package in the
# graph has a known low, moderate, high or critical advisory) stay warnings. The development machines' package source
# has no vulnerability data, so this check brings its own: a NuGet audit source served on 127.0.0.1 by python3's
# http.server, with made-up advisories (their links go to example.invalid) that cover every version of four packages
# the repository restores, one per severity. A copy of the working tree (so this checkout's obj/ folders are left
# alone) is restored with that source added:
#   1. CachedAes.sln must restore, with each of NU1901, NU1902, NU1903 and NU1904 printed as a warning;
#   2. the control: src/CachedAes.DataProtection with WarningsNotAsErrors emptied must fail with error NU1903, which
#      shows that the advisories reach the restore and that without the setting they would stop it.
# About a minute once the packages are in the NuGet cache; run by .ci/run. Prints PASS/FAIL lines and a closing
# "audit-check: N passed, N failed, 0 skipped" line; exits non-zero when a check failed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cachedaes-audit.XXXXXX")
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
check() { if [ "$1" = 0 ]; then echo "PASS: $2"; passed=$((passed + 1)); else echo "FAIL: $2"; failed=$((failed + 1)); fi; }
finish() { echo "audit-check: $passed passed, $failed failed, 0 skipped"; [ "$failed" -eq 0 ]; exit $?; }

# The audit source: a service index naming a VulnerabilityInfo resource, its index, and one page of advisories.
mkdir -p "$work/feed/vulnerability" "$work/repo"
timeout 900 python3 - "$work/feed" <<'PY' &
import functools, http.server, os, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=sys.argv[1])
with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
    with open(sys.argv[1] + "/port.tmp", "w") as f:
        f.write(str(httpd.server_address[1]))
    os.rename(sys.argv[1] + "/port.tmp", sys.argv[1] + "/port")
    httpd.serve_forever()
PY
server=$!
for _ in $(seq 1 100); do [ -f "$work/feed/port" ] && break; sleep 0.1; done
if [ ! -f "$work/feed/port" ]; then
  check 1 "an audit source on 127.0.0.1 (python3's http.server did not start)"
  finish
fi
base="http://127.0.0.1:$(cat "$work/feed/port")"
cat >"$work/feed/index.json" <<EOF
{"version": "3.0.0", "resources": [{"@id": "$base/vulnerability/index.json", "@type": "VulnerabilityInfo/6.7.0"}]}
EOF
cat >"$work/feed/vulnerability/index.json" <<EOF
[{"@name": "all", "@id": "$base/vulnerability/all.json", "@updated": "2026-01-01T00:00:00Z", "comment": "made up by scripts/audit-check.sh"}]
EOF
# Severity 0-3: low, moderate, high, critical (NU1901-NU1904). Every version of each package.
cat >"$work/feed/vulnerability/all.json" <<'EOF'
{
  "microsoft.identitymodel.tokens": [{"url": "https://example.invalid/made-up-low", "severity": 0, "versions": "[0.0.1, )"}],
  "benchmarkdotnet": [{"url": "https://example.invalid/made-up-moderate", "severity": 1, "versions": "[0.0.1, )"}],
  "microsoft.aspnetcore.dataprotection": [{"url": "https://example.invalid/made-up-high", "severity": 2, "versions": "[0.0.1, )"}],
  "xunit": [{"url": "https://example.invalid/made-up-critical", "severity": 3, "versions": "[0.0.1, )"}]
}
EOF

# The repository's NuGet configuration with the audit source added (HTTP is allowed for it alone: it is on 127.0.0.1).
python3 - "$repo/nuget.config" "$work/nuget.config" "$base/index.json" <<'PY'
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
audit = ET.SubElement(tree.getroot(), "auditSources")
ET.SubElement(audit, "clear")
ET.SubElement(audit, "add", key="made-up-advisories", value=sys.argv[3], allowInsecureConnections="true")
tree.write(sys.argv[2], encoding="utf-8", xml_declaration=True)
PY

# The working tree as it is (tracked and untracked files, not what .gitignore ignores), without build output.
(cd "$repo" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/repo"
cp "$work/nuget.config" "$work/repo/nuget.config"
export NUGET_HTTP_CACHE_PATH="$work/http-cache" DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

log="$work/restore.log"
(cd "$work/repo" && dotnet restore CachedAes.sln) >"$log" 2>&1
status=$?
[ "$status" -ne 0 ] && grep -E 'error' "$log" | sort -u | head -n 20
check "$status" "CachedAes.sln restores with advisories of every severity in the graph (exit $status)"
for code in NU1901 NU1902 NU1903 NU1904; do
  grep -qE ": warning $code: " "$log"
  check $? "$code is printed as a warning: $(grep -E ": warning $code: " "$log" | head -n 1 | sed -E 's/^.*: warning //' | cut -c1-110)"
done
! grep -qE ': error NU190[1-4]' "$log"
check $? "no NU1901-NU1904 error"

control="$work/control.log"
(cd "$work/repo" && dotnet restore src/CachedAes.DataProtection -p:WarningsNotAsErrors=) >"$control" 2>&1
status=$?
[ "$status" -ne 0 ] && grep -qE ': error NU1903: ' "$control"
check $? "control: with WarningsNotAsErrors emptied the same advisory fails the restore (exit $status, error NU1903)"
finish
