#!/usr/bin/env bash
# Installs the .NET 11.0.0 runtime (Microsoft.NETCore.App and Microsoft.AspNetCore.App) from the configured NuGet
# package source, into a dotnet root of its own, for running things on .NET 11 with only the .NET 10 SDK installed.
#
#   bash scripts/install-dotnet11-runtime.sh [ROOT]      (default ROOT: artifacts/dotnet11 in this repository)
#
# It builds build/Dotnet11Runtime, which restores Microsoft.NETCore.App.Runtime.<rid> and
# Microsoft.AspNetCore.App.Runtime.<rid> 11.0.0 like any package and lays them out as ROOT/shared/..., ROOT/host/fxr/...,
# with a copy of the SDK's own dotnet muxer as ROOT/dotnet; see that project for the layout. Nothing is downloaded
# from anywhere else. Running it again only checks the files. `dotnet test` does the same for the tests' net11.0 runs
# (tests/BothRuntimes.props), so the tests do not need this script; the package consumer test and the benchmarks do.
#
# Then: ROOT/dotnet app.dll runs a net11.0 app on 11.0.0; DOTNET_ROLL_FORWARD=LatestMajor ROOT/dotnet app.dll runs a
# net10.0 app on 11.0.0; an apphost finds the runtime with DOTNET_ROOT=ROOT. ROOT may also be an existing dotnet root
# (a copy of the SDK's, say) to hold 10.0 and 11.0 side by side.
#
# Prints `ROOT/dotnet --list-runtimes` and, as its last line, ROOT's absolute path; exits non-zero on failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${1:-$repo/artifacts/dotnet11}
mkdir -p "$root"
root=$(cd "$root" && pwd)

export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet build "$repo/build/Dotnet11Runtime/Dotnet11Runtime.csproj" -c Release -nologo -v:minimal \
  -p:CachedAesDotnet11Root="$root/" >&2
"$root/dotnet" --list-runtimes >&2
"$root/dotnet" --list-runtimes | grep -q '^Microsoft\.NETCore\.App 11\.0\.0 ' \
  || { echo "install-dotnet11-runtime: $root/dotnet does not list Microsoft.NETCore.App 11.0.0" >&2; exit 1; }
echo "$root"
