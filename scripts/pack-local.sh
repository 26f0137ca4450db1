#!/usr/bin/env bash
# Packs CachedAes and its integration packages into a folder, with one version stamp, so that each integration
# package's dependency names the CachedAes packed with it (a local pack is 0.1.0-dev.<UTC stamp>; see CONTRIBUTING.md).
#
#   bash scripts/pack-local.sh [FOLDER]      (default: ~/cachedaes-feed)
#
# Then, in an application's folder, README.md's Install lines: the folder as a source in the app's own nuget.config
# (dotnet nuget add source FOLDER --name cachedaes-local --configfile nuget.config) and dotnet add package <id> --prerelease
# for each package it uses. Each run packs a new version; dotnet add package <id> --prerelease again takes it.
set -euo pipefail
cd "$(dirname "$0")/.."
feed=${1:-$HOME/cachedaes-feed}
mkdir -p "$feed"
stamp=$(date -u +%Y%m%dT%H%M%S)
for project in CachedAes CachedAes.IdentityModel CachedAes.DataProtection CachedAes.JoseJwt; do
  dotnet pack "src/$project" -c Release -o "$feed" -p:CachedAesDevStamp="$stamp" -nologo -v quiet
done
echo "pack-local: CachedAes, CachedAes.IdentityModel, CachedAes.DataProtection and CachedAes.JoseJwt 0.1.0-dev.$stamp in $feed"
echo "pack-local: in your app: dotnet nuget add source $feed --name cachedaes-local --configfile nuget.config (once), then dotnet add package <id> --prerelease (see README.md, Install)"
