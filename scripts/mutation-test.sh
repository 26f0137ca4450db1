#!/usr/bin/env bash
# Mutation testing of CachedAes's security-critical core with Stryker.NET (the local tool in
# .config/dotnet-tools.json): padding, one-shot buffer logic, key wrap (RFC 5649 and 3394), handle
# ownership and key-change invalidation, and the CPU intrinsics backend's key schedule, block loops and
# handle. Every mutant Stryker makes in those files must be killed by a
# test, or be listed in docs/mutation.md with the reason it is equivalent or out of scope.
#
#   bash scripts/mutation-test.sh              # the core files below
#   bash scripts/mutation-test.sh --ci         # padding and key wrap only (the scope .ci/run runs)
#   MUTATION_CONCURRENCY=1 bash scripts/mutation-test.sh   # one test runner (default 2, one per core)
#
# Exits non-zero when the mutation score falls under the threshold (Stryker's --break-at), or when
# Stryker itself fails. The HTML and JSON reports go to artifacts/mutation/<scope>/reports/.
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------------------------------------------
# The files to mutate, relative to src/CachedAes/: padding, the one-shot buffer logic, key wrap, and handle ownership
# and key lifetime (the key epoch: its key memory and retirement, its handle slots and leases, what a transform holding
# a reference may do, its stock instance); and the CPU intrinsics backend: its key schedule, its block loops (the eight-,
# four- and one-block paths), its two instruction sets' round and key-schedule steps, and its handle (round-key memory).
# Those files use pointers: a mutant there may read or write past a buffer, and so may crash the test host rather than
# fail a test.
CORE_FILES=(Operations/SymmetricPadding.cs Operations/OneShot.cs Operations/KeyWrap.cs
  Ownership/KeyEpoch.cs Ownership/KeyEpoch.Handles.cs Ownership/KeyEpoch.Stock.cs Ownership/KeyMemory.cs
  Ownership/PerProcessorStacks.cs Ownership/InstanceKey.cs Ownership/HandleLease.cs Ownership/HandleSlots.cs Ownership/Reclaimer.cs
  Backends/Intrinsics/AesSchedule.cs Backends/Intrinsics/AesBlocks.cs Backends/Intrinsics/IntrinsicsCipher.cs
  Backends/Intrinsics/X86AesInstructions.cs Backends/Intrinsics/ArmAesInstructions.cs)
# The smaller scope the CI lane runs (--ci): padding and key wrap.
CI_FILES=(Operations/SymmetricPadding.cs Operations/KeyWrap.cs)
# ---------------------------------------------------------------------------------------------------

# The tests each mutant runs (Stryker runs only the tests that cover it). Left out: the OpenSSL RFC 3394
# differential (40 s a run; the RFC 3394 core is covered by the RFC vectors and the runtime and core
# tests), the selection tests (child processes; backend selection is not in the core), the timed
# eight-thread soak, and the rows for four of the backends: the core sits above the backend seam, and the
# rows kept (the platform's own, and CNG with Wine 8.0's CBC routed over ECB) take every path the core
# takes. Each left-out row is the same test over another native layer or the stock fallback. The CPU
# intrinsics backend's row is kept too (its own files are mutated), with its direct tests (Intrinsics/);
# its selection tests, which start child processes, are left out like the other selection tests.
TEST_FILTER='FullyQualifiedName!~Rfc3394OpenSslDifferentialTests&FullyQualifiedName!~SelectionProcessTests&FullyQualifiedName!~IntrinsicsSelectionTests&FullyQualifiedName!~Eight_threads_on_one_instance&DisplayName!~SimulatedCngProviders&DisplayName!~SimulatedCngPseudoHandles&DisplayName!~SimulatedCommonCrypto&DisplayName!~StockFallback'

# Mutation score (killed + timeout, of all mutants tested) under which the run fails. Set from the measured
# runs listed in docs/mutation.md (core 89.11 %, padding and key wrap 94.03 %), less a margin for mutants that
# time out on one run and survive on the next on a busy machine. docs/mutation.md explains every survivor.
BREAK_AT_CORE=87
BREAK_AT_CI=90

scope=core
files=("${CORE_FILES[@]}")
break_at=$BREAK_AT_CORE
if [ "${1:-}" = "--ci" ]; then
  scope=ci
  files=("${CI_FILES[@]}")
  break_at=$BREAK_AT_CI
elif [ $# -gt 0 ]; then
  echo "usage: bash scripts/mutation-test.sh [--ci]" >&2
  exit 2
fi

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
output=$PWD/artifacts/mutation/$scope
rm -rf "$output"
mkdir -p "$output"

# A progress bar on a terminal, one character per mutant in a log.
progress=Dots
if [ -t 1 ]; then
  progress=Progress
fi

# Stryker's settings, as a config file (some have no command-line option). Debug.Assert calls are compiled out of the
# Release build Stryker tests, so their mutants could never be killed (docs/mutation.md).
mutate_json=$(printf '"%s",' "${files[@]}")
cat >"$output/stryker-config.json" <<JSON
{
  "stryker-config": {
    "project": "CachedAes.csproj",
    "configuration": "Release",
    "target-framework": "net10.0",
    "mutate": [${mutate_json%,}],
    "test-case-filter": "$TEST_FILTER",
    "coverage-analysis": "perTest",
    "ignore-methods": ["Debug.Assert"],
    "concurrency": ${MUTATION_CONCURRENCY:-2},
    "thresholds": { "high": 95, "low": $break_at, "break": $break_at },
    "reporters": ["$progress", "ClearText", "Html", "Json"],
    "disable-bail": false
  }
}
JSON

dotnet tool restore >/dev/null
echo "mutation-test: scope $scope: ${files[*]} (break at $break_at %)"
start=$SECONDS
status=0
(cd tests/CachedAes.Tests && dotnet stryker --config-file "$output/stryker-config.json" --output "$output" --skip-version-check) || status=$?
echo "mutation-test: scope $scope finished in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s, exit $status"
exit $status
