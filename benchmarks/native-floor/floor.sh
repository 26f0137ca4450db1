#!/usr/bin/env bash
# Builds and runs the native floor (floor.c): the same work as each benchmark row, in C, against the libcrypto
# that CachedAes loads (libcrypto.so.3, linked by soname).
#
#   bash benchmarks/native-floor/floor.sh [--out FILE] [-- floor options]   build, then time every row (~30 s)
#   bash benchmarks/native-floor/floor.sh --smoke                           build, self-check, ~1 s of timing
#   bash benchmarks/native-floor/floor.sh --build-only                      build only
#   bash benchmarks/native-floor/floor.sh --callgrind [--out FILE]          instructions per call of the 16 B
#        (and 32 B key wrap) rows under valgrind --tool=callgrind: each row runs twice, with N1 and N2 calls,
#        and the difference of the two instruction totals divided by N2 - N1 is the cost of one call
#
# Output is CSV (see the top of floor.c); --out writes it to FILE instead of standard output.
# Needs a C compiler and OpenSSL's headers (Debian: gcc, libc6-dev, libssl-dev; --callgrind also valgrind).
# When one is missing and this runs as root, it is installed with apt-get (and the script says so).
# Environment: FLOOR_BUILD_DIR (default: artifacts/native-floor in the repository), CC (default: cc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build_dir=${FLOOR_BUILD_DIR:-$repo/artifacts/native-floor}
binary="$build_dir/floor"
cc=${CC:-cc}

mode=run
out=
passthrough=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --build-only) mode=build ;;
    --callgrind) mode=callgrind ;;
    --out) out=$2; shift ;;
    --) shift; passthrough=("$@"); break ;;
    *) echo "floor.sh: unknown option $1 (see the comment at the top of this script)" >&2; exit 2 ;;
  esac
  shift
done

# apt-get install for whatever is missing, saying so; fails with the reason when that is not possible.
. "$repo/scripts/lib/apt-install.sh"
packages=()
command -v "$cc" >/dev/null || packages+=(gcc libc6-dev)
[ -f /usr/include/openssl/evp.h ] || packages+=(libssl-dev)
if [ "$mode" = callgrind ] && ! command -v valgrind >/dev/null; then packages+=(valgrind); fi
apt_install floor.sh "${packages[@]}" || exit 2

mkdir -p "$build_dir"
# Link by soname: the file the dynamic loader picks for "libcrypto.so.3" is the one .NET's NativeLibrary.TryLoad
# loads for CachedAes too (same search path), whether or not the dev package's libcrypto.so symlink exists.
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -o "$binary" "$here/floor.c" -l:libcrypto.so.3
linked=$(ldd "$binary" | awk '/libcrypto/ { print $3 }')
echo "floor.sh: built $binary against ${linked:-an unresolved libcrypto}" >&2

write() { if [ -n "$out" ]; then mkdir -p "$(dirname "$out")"; cat >"$out"; echo "floor.sh: wrote $out" >&2; else cat; fi; }

case "$mode" in
  build) ;;
  run) "$binary" "${passthrough[@]}" | write ;;
  smoke)
    # Self-check plus every row timed briefly: about one second. Exits non-zero if the self-check fails.
    "$binary" --rep-ms 1 --reps 3 --warmup-ms 0.2 "${passthrough[@]}" | write ;;
  callgrind)
    n1=${FLOOR_CALLGRIND_N1:-2000}
    n2=${FLOOR_CALLGRIND_N2:-4000}
    rows=(
      floor,EncryptEcb,16, floor,DecryptEcb,16, floor,EncryptCbc,16, floor,DecryptCbc,16,
      cbc-restart,EncryptCbc,16, cbc-restart,DecryptCbc,16,
      stock-sequence,EncryptEcb,16, stock-sequence,DecryptEcb,16, stock-sequence,EncryptCbc,16,
      stock-sequence,DecryptCbc,16,
      rekey,EncryptEcb,16, rekey,DecryptEcb,16, rekey,EncryptCbc,16, rekey,DecryptCbc,16,
      floor,EncryptKeyWrapPadded,32, floor,DecryptKeyWrapPadded,32,
    )
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    total() { # instruction total of one run of a row with N calls
      valgrind --tool=callgrind --callgrind-out-file="$work/out" --log-file="$work/log" \
        "$binary" --no-check --filter "$1" --iterations "$2" --reps 1 --warmup-ms 0 >/dev/null
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/log" | tail -n 1
    }
    {
      echo "# openssl=$("$binary" --filter none --no-check | sed -n 's/^# openssl=//p')"
      echo "# callgrind: instructions per call = (total(N2) - total(N1)) / (N2 - N1), N1=$n1, N2=$n2"
      echo "variant,operation,size,instructions_per_call"
      for row in "${rows[@]}"; do
        a=$(total "$row" "$n1")
        b=$(total "$row" "$n2")
        echo "$row$(( (b - a) / (n2 - n1) ))"
      done
    } | write ;;
esac
