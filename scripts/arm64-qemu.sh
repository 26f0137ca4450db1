#!/usr/bin/env bash
# The CPU intrinsics backend's Arm code on linux-arm64, under qemu-user emulation (Debian's qemu-user-static), on an
# x64 machine: publishes tests/lanes/CachedAes.Arm64Probe self-contained for linux-arm64 and for the host, runs
#   the host build with the platform backend and with CACHEDAES_USE_CPU_INTRINSICS=1 (AES-NI),
#   the arm64 build under qemu-aarch64-static with the platform backend (arm64 OpenSSL) and with the variable (Arm AES),
# and checks that the arm64 run with the variable selected CpuIntrinsics on Arm's instructions, that every run passes
# the NIST CAVP known answers, and that all four print the same checksum over the same messages.
#
#   bash scripts/arm64-qemu.sh
#
# Needs root for apt-get when something is missing: qemu-user-static, and the arm64 libraries the .NET runtime loads
# (libc6, libstdc++6, libssl3), installed with Debian's multiarch (this adds the arm64 architecture to dpkg; the host's
# libssl3 is upgraded to the same version as the arm64 one if they differ). qemu-user's default CPU for aarch64 has the
# AES instructions. Not run by .ci/run. Exit status: 0 all agree, 1 a mismatch, 2 could not run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/apt-install.sh"
out=$repo/artifacts/arm64-qemu

missing=()
command -v qemu-aarch64-static >/dev/null 2>&1 || missing+=(qemu-user-static)
if ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64; then
  echo "arm64-qemu: adding the arm64 architecture to dpkg (multiarch) for the arm64 runtime libraries" >&2
  dpkg --add-architecture arm64 && apt-get update -qq || { echo "arm64-qemu: could not add arm64 to dpkg" >&2; exit 2; }
fi
for package in libc6:arm64 libstdc++6:arm64 libssl3:arm64; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
apt_install arm64-qemu --log "$out.apt.log" "${missing[@]}" || exit 2

rm -rf "$out"
for rid in linux-arm64 linux-x64; do
  dotnet publish "$repo/tests/lanes/CachedAes.Arm64Probe" -c Release -r "$rid" --self-contained \
    -p:CachedAesTargetFrameworks=net10.0 -o "$out/$rid" >"$out.$rid.publish.log" 2>&1 \
    || { echo "arm64-qemu: publishing for $rid failed (see $out.$rid.publish.log)" >&2; exit 2; }
done

vectors=$repo/tests/vectors
status=0
run() { # label, command...
  local label=$1
  shift
  echo "=== $label"
  if ! "$@" "$vectors" | tee "$out/$label.log"; then
    status=1
  fi
}
run x64-platform env -u CACHEDAES_USE_CPU_INTRINSICS "$out/linux-x64/CachedAes.Arm64Probe"
run x64-intrinsics env CACHEDAES_USE_CPU_INTRINSICS=1 "$out/linux-x64/CachedAes.Arm64Probe"
run arm64-platform env -u CACHEDAES_USE_CPU_INTRINSICS qemu-aarch64-static "$out/linux-arm64/CachedAes.Arm64Probe"
run arm64-intrinsics env CACHEDAES_USE_CPU_INTRINSICS=1 qemu-aarch64-static "$out/linux-arm64/CachedAes.Arm64Probe"

grep -q '^Backend: CpuIntrinsics (System.Runtime.Intrinsics.Arm.Aes' "$out/arm64-intrinsics.log" \
  || { echo "arm64-qemu: the arm64 run did not select the CPU intrinsics backend on Arm's instructions" >&2; status=1; }
sums=$(cat "$out"/*.log | grep '^Checksum=' | sort -u | wc -l)
[ "$sums" -eq 1 ] || { echo "arm64-qemu: the four runs disagree:" >&2; grep -H '^Checksum=' "$out"/*.log >&2; status=1; }
[ $status -eq 0 ] && echo "arm64-qemu: all four runs passed the CAVP known answers and agree ($(grep -h '^Checksum=' "$out/arm64-intrinsics.log"))"
exit $status
