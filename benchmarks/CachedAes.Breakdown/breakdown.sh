#!/usr/bin/env bash
# The measured breakdown of one steady 16 B call (EncryptEcb, DecryptEcb, EncryptCbc, DecryptCbc), layer by layer:
# the native update alone (the C floor), then each managed layer listed in Layers.cs.
#
#   bash benchmarks/CachedAes.Breakdown/breakdown.sh [--out FILE] [--no-callgrind]
#
# 1. Instructions per call under valgrind --tool=callgrind (repeatable on a busy machine): the harness zeroes the
#    counters, runs N1 calls, dumps; the same with N2; instructions per call = (N2 dump - N1 dump) / (N2 - N1).
#    Five rounds after a warm-up; the median of rounds 2-5 is reported with their spread. Only the measuring thread
#    is counted (--separate-threads=yes). The native rows come from the C floor under callgrind (floor.sh
#    --callgrind), the same way.
#    The harness counted is a native AOT build of itself (the same source, library and stock code, compiled ahead of
#    time with full optimization). Under valgrind the JIT does not install optimized code: every Tier1 compilation
#    of the harness and library methods is redone with MinOpts (DOTNET_JitDisasm lists each twice, "optimized code"
#    then "compiling with minopt", and DOTNET_JitDisasmSummary gives Tier1 code the size of Tier0 code, for example
#    CachedAes.Encrypt 367 bytes under valgrind against 2,115 bytes natively), so a JIT run under callgrind counts
#    unoptimized code. AOT code has no dynamic PGO, so it is a close, not an exact, image of what the JIT runs.
# 2. Nanoseconds per call without valgrind, on the JIT (median of 7 loops of ~20 ms; noisy on a shared machine).
#
# Output CSV: operation,layer,instructions,spread_pct,median_ns,description
# Needs: the .NET SDK with the native AOT packs (restored from the package source), valgrind, objcopy and a C
# compiler with valgrind's headers (installed with apt-get when missing and running as root). Takes 3-8 minutes on 2
# busy cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
work_dir=${BREAKDOWN_BUILD_DIR:-$repo/artifacts/breakdown}
out=
callgrind=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --no-callgrind) callgrind=0 ;;
    *) echo "breakdown.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

. "$repo/scripts/lib/apt-install.sh"
missing=()
command -v cc >/dev/null || missing+=(gcc libc6-dev)
if [ "$callgrind" = 1 ]; then
  command -v valgrind >/dev/null && [ -f /usr/include/valgrind/callgrind.h ] || missing+=(valgrind)
  command -v objcopy >/dev/null || missing+=(binutils)
fi
apt_install breakdown.sh "${missing[@]}" || exit 2

mkdir -p "$work_dir"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
echo "breakdown.sh: building the harness" >&2
dotnet build "$here/CachedAes.Breakdown.csproj" -c Release -o "$work_dir/bin" -v quiet -nologo >&2
harness=("dotnet" "$work_dir/bin/CachedAes.Breakdown.dll")

"${harness[@]}" --list >"$work_dir/layers.csv"
echo "breakdown.sh: timing every layer natively" >&2
"${harness[@]}" --time >"$work_dir/time.csv"
FLOOR_BUILD_DIR="$work_dir" bash "$repo/benchmarks/native-floor/floor.sh" --build-only
"$work_dir/floor" --no-check --filter ',16,' >"$work_dir/floor-time.csv"

if [ "$callgrind" = 1 ]; then
  cc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$work_dir/libcgmark.so" "$here/cgmark.c"
  case "$(uname -m)" in
    x86_64) rid=linux-x64 ;;
    aarch64) rid=linux-arm64 ;;
    *) echo "breakdown.sh: no native AOT runtime identifier for $(uname -m)" >&2; exit 2 ;;
  esac
  echo "breakdown.sh: publishing the harness with native AOT ($rid) for callgrind" >&2
  rm -rf "$work_dir/aot"
  dotnet publish "$here/CachedAes.Breakdown.csproj" -c Release -r "$rid" -p:BreakdownAot=true -p:StripSymbols=false \
    -o "$work_dir/aot" -v quiet -nologo >&2
  # The symbol table names the functions for callgrind_annotate; the DWARF 5 that the AOT compiler writes is dropped,
  # because valgrind 3.19 stops reading the binary at it ("Possibly corrupted debuginfo file").
  objcopy --strip-debug "$work_dir/aot/CachedAes.Breakdown" "$work_dir/aot/breakdown-harness"
  dumps="$work_dir/callgrind"
  rm -rf "$dumps"
  mkdir -p "$dumps"
  echo "breakdown.sh: counting instructions under callgrind (a few minutes)" >&2
  # GCgen0size: a 512 MiB allocation budget (hexadecimal, as the runtime reads it; the AOT runtime ignores a value
  # written with 0x), so that no collection falls inside a measured segment of the per-message rows, which allocate
  # (with collections, their rounds spread by up to 37 %; without, by under 1 %).
  (cd "$dumps" && DOTNET_GCgen0size=20000000 CACHEDAES_CGMARK="$work_dir/libcgmark.so" \
    valgrind --tool=callgrind --separate-threads=yes --log-file="$dumps/valgrind.log" \
    "$work_dir/aot/breakdown-harness" --callgrind 2000 6000 >"$dumps/harness.log")
  FLOOR_BUILD_DIR="$work_dir" bash "$repo/benchmarks/native-floor/floor.sh" --callgrind --out "$work_dir/floor-callgrind.csv"
fi

python3 - "$work_dir" "$callgrind" <<'PY' | if [ -n "$out" ]; then mkdir -p "$(dirname "$out")"; cat >"$out"; echo "breakdown.sh: wrote $out" >&2; else cat; fi
import csv, glob, os, re, statistics, sys

work, with_callgrind = sys.argv[1], sys.argv[2] == "1"

def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))

descriptions = {r["layer"]: r["description"] for r in rows(f"{work}/layers.csv")}
ns = {(r["operation"], r["layer"]): float(r["median_ns"]) for r in rows(f"{work}/time.csv")}
floor_ns = {(r["variant"], r["operation"]): float(r["median_ns"]) for r in rows(f"{work}/floor-time.csv")}

instructions, spread = {}, {}
if with_callgrind:
    segments = {}
    for path in glob.glob(f"{work}/callgrind/callgrind.out.*"):
        text = open(path, errors="replace").read()
        name = re.search(r"^desc: Trigger: Client Request: (\d+)/(\w+)/([\w-]+)/(\d+)$", text, re.M)
        total = re.search(r"^totals: (\d+)$", text, re.M)
        if name and total:
            rnd, op, layer, n = name.groups()
            segments.setdefault((op, layer), {}).setdefault(int(rnd), {})[int(n)] = int(total.group(1))
    for key, rounds in segments.items():
        per_call = []
        for rnd, by_n in sorted(rounds.items()):
            if rnd >= 2 and len(by_n) == 2:
                (n1, t1), (n2, t2) = sorted(by_n.items())
                per_call.append((t2 - t1) / (n2 - n1))
        if per_call:
            median = statistics.median(per_call)
            instructions[key] = median
            spread[key] = 100 * (max(per_call) - min(per_call)) / median if median else 0
    for r in rows(f"{work}/floor-callgrind.csv"):
        instructions[(r["operation"], "native:" + r["variant"])] = float(r["instructions_per_call"])

native_layers = [
    ("native:floor", "floor", "the native work alone, in C: one EVP_CipherUpdate of 32 B on a reused keyed context (CBC: never-reset scheme with the first-block fix-up)"),
    ("native:cbc-restart", "cbc-restart", "C: CBC restarted at the IV with EVP_CipherInit_ex, then one update (the conventional way)"),
    ("native:stock-sequence", "stock-sequence", "C: what stock does natively per call (new context, init, update, final, free)"),
    ("native:rekey", "rekey", "C: a new key before every message on a reused context (EVP_CipherInit_ex with the key and, for CBC, the IV), then one update: the native work of the newkey row"),
]
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["operation", "layer", "instructions", "spread_pct", "median_ns", "description"])
for op in ["EncryptEcb", "DecryptEcb", "EncryptCbc", "DecryptCbc"]:
    for layer, variant, text in native_layers:
        if (variant, op) not in floor_ns:
            continue
        i = instructions.get((op, layer))
        out.writerow([op, layer, "" if i is None else f"{i:.0f}", "", f"{floor_ns[(variant, op)]:.1f}", text])
    for layer, text in descriptions.items():
        i = instructions.get((op, layer))
        s = spread.get((op, layer))
        t = ns.get((op, layer))
        out.writerow([op, layer, "" if i is None else f"{i:.0f}", "" if s is None else f"{s:.1f}",
                      "" if t is None else f"{t:.1f}", text])
PY
