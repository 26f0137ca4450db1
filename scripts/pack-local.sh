#!/usr/bin/env bash
# Packs CachedAes and its two integration packages into a folder, with one version stamp, so that each integration
# package's dependency names the CachedAes packed with it (a local pack is 0.1.0-dev.<UTC stamp>; see CONTRIBUTING.md).
#
#   bash scripts/pack-local.sh [FOLDER]      (default: ~/cachedaes-feed)
#
# Then, in an application: dotnet nuget add source FOLDER --name cachedaes-local; dotnet add package CachedAes --prerelease
set -euo pipefail
cd "$(dirname "$0")/.."
feed=${1:-$HOME/cachedaes-feed}
mkdir -p "$feed"
stamp=$(date -u +%Y%m%dT%H%M%S)
for project in CachedAes CachedAes.IdentityModel CachedAes.DataProtection; do
  dotnet pack "src/$project" -c Release -o "$feed" -p:CachedAesDevStamp="$stamp" -nologo -v quiet
done
echo "pack-local: CachedAes, CachedAes.IdentityModel and CachedAes.DataProtection 0.1.0-dev.$stamp in $feed"
