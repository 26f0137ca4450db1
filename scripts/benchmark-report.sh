#!/usr/bin/env bash
# The benchmark report: the layer breakdown, then the BenchmarkDotNet suite (every case on .NET 10 and .NET 11.0.0, the
# native floor as rows of the same run), then docs/benchmarks.md and docs/benchmarks.png made from BenchmarkDotNet's
# exports by scripts/benchmark_report.py. Commit both; the README shows the chart.
#
#   bash scripts/benchmark-report.sh [--quick | --full] [--no-breakdown] [--label TEXT] [-- BenchmarkDotNet args]
#
#   --quick (default)  the suite's quick mode (benchmarks/CachedAes.Benchmarks/README.md), plus the breakdown
#   --full             every benchmark with BenchmarkDotNet's default job (many hours on 2 cores); add
#                      `-- --job short` for the short job instead (about 2 hours)
#   --no-breakdown     skip the callgrind breakdown (the page then says it was not measured)
#   --label TEXT       a line at the top of the page and in the chart's title
#   -- ARGS            passed to the benchmark program, e.g. `-- --filter '*Steady*'`, `-- --no-net11`
#
# Outputs go to BENCHMARK_REPORT_DIR (default docs), the rest to artifacts/benchmark-report/ (BenchmarkDotNet's files
# under bdn/). Needs python3 and gnuplot (apt-get installs them as root). Exits with the suite's status.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
mode=--quick breakdown=1 label=
bdn_args=()
command_line="bash scripts/benchmark-report.sh${*:+ $(printf '%q ' "$@")}"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--full) mode=$1 ;;
    --no-breakdown) breakdown=0 ;;
    --label) label=$2; shift ;;
    --) shift; bdn_args=("$@"); break ;;
    *) echo "benchmark-report.sh: unknown option $1 (see the comment at the top of this script)" >&2; exit 2 ;;
  esac
  shift
done
out_dir=${BENCHMARK_REPORT_DIR:-docs} work=artifacts/benchmark-report
rm -rf "$work"
mkdir -p "$work" "$out_dir"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
. "$repo/scripts/lib/apt-install.sh"
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
apt_install benchmark-report.sh "${missing[@]}" || exit 2

load() { cut -d' ' -f1 /proc/loadavg; }
{
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command=${command_line% }"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "cores=$(nproc)"
  echo "memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || uname -s)"
  echo "kernel=$(uname -r)"
  echo "openssl=$(openssl version 2>/dev/null || echo unknown)"
  echo "load_before=$(load)"
} >"$work/env.txt"

if [ "$breakdown" = 1 ]; then
  echo "== 1/3 layer breakdown (callgrind)" >&2
  bash benchmarks/CachedAes.Breakdown/breakdown.sh --out "$work/breakdown.csv"
fi
echo "== 2/3 BenchmarkDotNet suite ($mode)" >&2
started=$SECONDS
set +e
dotnet run -c Release --project benchmarks/CachedAes.Benchmarks -- "$mode" --artifacts "$work/bdn" "${bdn_args[@]}" \
  2>&1 | tee "$work/benchmarks.log"
suite_status=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - started))
echo "load_after=$(load)" >>"$work/env.txt"
echo "suite_time=$((elapsed / 60)) min $((elapsed % 60)) s (build included)" >>"$work/env.txt"
[ "$suite_status" -eq 0 ] || echo "benchmark-report.sh: the suite exited with $suite_status (the short comparison above says why)" >&2

echo "== 3/3 report and chart" >&2
python3 scripts/benchmark_report.py --work "$work" --out "$out_dir/benchmarks.md" --chart "$out_dir/benchmarks.png" --label "$label"
mv -f "$out_dir/benchmarks.dat" "$out_dir/benchmarks.gp" "$work/" 2>/dev/null || true
exit "$suite_status"
