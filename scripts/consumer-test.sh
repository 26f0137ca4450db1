#!/usr/bin/env bash
# Consumer test for the CachedAes NuGet packages: CachedAes and its integration packages CachedAes.IdentityModel,
# CachedAes.DataProtection and CachedAes.JoseJwt.
#
#  1. Packs src/CachedAes, src/CachedAes.IdentityModel, src/CachedAes.DataProtection and src/CachedAes.JoseJwt (Release, one version) into a
#     fresh local folder and checks each .nupkg and .snupkg (files, license expression, readme, repository commit,
#     release notes, dependencies).
#  2. Restores tests/lanes/consumers/PackageConsumerCheck, which references the package by id and version only,
#     with CachedAes mapped to that folder alone and a private NuGet packages folder (so no
#     cached copy of the same version can stand in), then runs it and checks its output.
#  3. Publishes the sample trimmed and self-contained, with zero warnings, and runs that binary.
#  4. Publishes the sample with native AOT, with zero warnings, and runs the native binary. When
#     this machine cannot (missing native AOT packs or no C toolchain) the step is reported as
#     SKIP with the reason, or as FAIL when CACHEDAES_REQUIRE_AOT=1.
#  5. The integration packages as README.md says to install and use them. In a fresh folder, a new worker app
#     (`dotnet new worker`) runs README.md's Install lines as written (only the package folder, ~/cachedaes-feed there, is
#     this run's), and gets README.md's three one-liners, with their `using` lines, extracted into a generated C# file (class ReadmeLines) beside
#     tests/lanes/consumers/IntegrationConsumerCheck/Program.cs; it must restore and build without a warning. That app exchanges jose-jwt
#     tokens with stock jose-jwt settings in both directions, and shares a
#     Data Protection key ring with tests/lanes/consumers/StockDataProtectionCheck, a stock app without CachedAes: the stock app makes
#     the ring, the CachedAes app reads it (on CachedAes from the first payload) and writes, each rotates the key once,
#     each reads everything the other wrote; and the same with the CachedAes app first. No key may name CachedAes. The
#     net11.0 run builds tests/lanes/consumers/IntegrationConsumerCheck itself (packages by id and version) with the same
#     generated file, and the stock app reads its ring. (Not published trimmed or native AOT: IdentityModel and Data
#     Protection themselves are not trimming-safe; nor is jose-jwt's reflection-based JSON mapper.)
#  Steps 2-4 run twice (and step 5 in its two forms): the sample as a net10.0 app (it gets lib/net10.0, runs on .NET 10) and as a
#  net11.0 app (lib/net11.0; its framework-dependent build runs on the .NET 11.0.0 runtime that
#  scripts/install-dotnet11-runtime.sh lays out from the package source, the self-contained ones carry
#  11.0.0 themselves). With only the .NET 10 SDK, the net11.0 builds use build/Net11WithSdk10.props,
#  as any outside net11.0 project would need to on that SDK.
#
# Prints PASS/FAIL/SKIP lines and a closing "consumer-test: N passed, N failed, N skipped" line;
# exits non-zero when anything failed.
#
# Environment (all optional):
#   CACHEDAES_CONSUMER_WORK      work folder (default: a new temporary folder, removed on success)
#   CACHEDAES_CONSUMER_PACKAGES  private NuGet packages folder (default: artifacts/consumer-test/packages;
#                                its CachedAes entry is deleted before every run)
#   CACHEDAES_EXPECTED_BACKEND   backend the sample must report (default from the OS: OpenSsl on
#                                Linux, CommonCrypto on macOS, Cng on Windows; "any" accepts any)
#   CACHEDAES_REQUIRE_AOT=1      treat a native AOT step that cannot run here as a failure
#   CACHEDAES_SKIP_PUBLISH=1     skip steps 3 and 4 (quick local check)
#   CACHEDAES_CONSUMER_TFMS      the sample's target frameworks (default "net10.0 net11.0")
#   CACHEDAES_RELEASE=1          pack the release version (VersionPrefix) instead of the default
#                                prerelease <VersionPrefix>-dev.<UTC timestamp>
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
project="$repo/src/CachedAes/CachedAes.csproj"
integration_ids=(CachedAes.IdentityModel CachedAes.DataProtection CachedAes.JoseJwt)
sample_dir="$repo/tests/lanes/consumers/PackageConsumerCheck"
sample="$sample_dir/PackageConsumerCheck.csproj"
sample_bin=PackageConsumerCheck
integration_dir="$repo/tests/lanes/consumers/IntegrationConsumerCheck"
integration_sample="$integration_dir/IntegrationConsumerCheck.csproj"
stock_dp_sample="$repo/tests/lanes/consumers/StockDataProtectionCheck/StockDataProtectionCheck.csproj"

work_is_temp=0
if [[ -n "${CACHEDAES_CONSUMER_WORK:-}" ]]; then
  work="$CACHEDAES_CONSUMER_WORK"
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/cachedaes-consumer.XXXXXX")
  work_is_temp=1
fi
work=$(cd "$work" && pwd)
feed="$work/feed"
logs="$work/logs"
packages="${CACHEDAES_CONSUMER_PACKAGES:-$repo/artifacts/consumer-test/packages}"
mkdir -p "$feed" "$logs" "$packages"
packages=$(cd "$packages" && pwd)

export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

passed=0
failed=0
skipped=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
skip() { echo "SKIP: $*"; skipped=$((skipped + 1)); }

finish() {
  echo "consumer-test: $passed passed, $failed failed, $skipped skipped"
  if [[ $failed -ne 0 ]]; then
    echo "consumer-test: logs kept in $logs"
    exit 1
  fi
  if [[ $work_is_temp -eq 1 ]]; then rm -rf "$work"; fi
  exit 0
}

show_tail() {
  echo "---- last lines of $1 ----"
  tail -n 40 "$1"
  echo "----"
}

# run LOGNAME COMMAND...: runs a command with its output in $logs/LOGNAME.log; on failure shows
# the log's tail (unless RUN_QUIET=1) and returns the command's exit code.
run() {
  local name=$1
  shift
  local rc=0
  echo "+ $*" >"$logs/$name.log"
  "$@" >>"$logs/$name.log" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] && return 0
  echo "(exit code $rc)" >>"$logs/$name.log"
  [[ "${RUN_QUIET:-0}" == 1 ]] || show_tail "$logs/$name.log"
  return $rc
}

# Lists a zip archive's entries / prints one entry (python3 is on every machine this runs on).
zip_list() { python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1"; }
zip_cat() { python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode("utf-8-sig"))' "$1" "$2"; }
# NuGet's package hash: base64 of the SHA-512 of the .nupkg.
nupkg_hash() { python3 -c 'import sys, hashlib, base64; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$1"; }

# Warnings that a build or publish printed (MSBuild's "file(line): warning CODE: text" form), except NuGet's audit
# warnings NU1901-NU1904 (a package in the graph has a known advisory): those say nothing about the package under test
# and may appear any day on nuget.org, so they are shown as ADVISORY lines on standard error and not counted; the consumer
# checks keep them warnings too (WarningsNotAsErrors in their project files). docs/dependencies.md says what to do about one.
warnings_in() {
  grep -E ': warning NU190[1-4]:' "$1" | sort -u | sed 's/^/ADVISORY (a warning, not a failure): /' >&2
  grep -E ': warning [A-Z]+[0-9]+' "$1" | grep -vE ': warning NU190[1-4]:' | sort -u
}

# ---------------------------------------------------------------- 1. pack
# The version is fixed before packing: a release pack, or a prerelease with this run's UTC stamp.
if [[ "${CACHEDAES_RELEASE:-0}" == 1 ]]; then
  version_args=(-p:CachedAesRelease=true)
else
  version_args=(-p:CachedAesDevStamp="$(date -u +%Y%m%dT%H%M%S)")
fi
version=$(dotnet msbuild "$project" -nologo -getProperty:PackageVersion "${version_args[@]}" 2>/dev/null | tr -d '[:space:]')
if [[ -z "$version" ]]; then
  fail "could not read PackageVersion from $project"
  finish
fi
echo "consumer-test: CachedAes $version, work folder $work"

if run pack dotnet pack "$project" -c Release -o "$feed" "${version_args[@]}"; then
  pass "dotnet pack (Release) into $feed"
else
  fail "dotnet pack failed"
  finish
fi

nupkg="$feed/CachedAes.$version.nupkg"
snupkg="$feed/CachedAes.$version.snupkg"
[[ -f "$nupkg" ]] || { fail "missing $nupkg"; finish; }
[[ -f "$snupkg" ]] || { fail "missing $snupkg"; finish; }
pkg_warnings=$(warnings_in "$logs/pack.log")
if [[ -n "$pkg_warnings" ]]; then
  fail "dotnet pack printed warnings:"
  echo "$pkg_warnings"
fi

problems=()
entries=$(zip_list "$nupkg")
for entry in PACKAGE.md CachedAes.nuspec lib/net10.0/CachedAes.dll lib/net10.0/CachedAes.xml lib/net11.0/CachedAes.dll lib/net11.0/CachedAes.xml; do
  grep -qxF "$entry" <<<"$entries" || problems+=("nupkg lacks $entry")
done
other_libs=$(grep '^lib/' <<<"$entries" | grep -vE '^lib/net1[01]\.0/CachedAes\.(dll|xml)$' || true)
[[ -z "$other_libs" ]] || problems+=("nupkg has other lib/ entries: $(paste -sd' ' - <<<"$other_libs")")
grep -q '\.pdb$' <<<"$entries" && problems+=("nupkg contains a .pdb (symbols belong in the .snupkg)")
for pdb in lib/net10.0/CachedAes.pdb lib/net11.0/CachedAes.pdb; do
  grep -qxF "$pdb" <<<"$(zip_list "$snupkg")" || problems+=("snupkg lacks $pdb")
done

nuspec=$(zip_cat "$nupkg" CachedAes.nuspec)
nuspec_has() { grep -qF -- "$1" <<<"$nuspec" || problems+=("nuspec lacks $1"); }
nuspec_has "<id>CachedAes</id>"
nuspec_has "<version>$version</version>"
nuspec_has '<license type="expression">MIT</license>'
nuspec_has '<readme>PACKAGE.md</readme>'
nuspec_has '<repository type="git" url="https://github.com/cachedaes/CachedAes"'
nuspec_has '<releaseNotes>'
nuspec_has '<group targetFramework="net10.0" />'
nuspec_has '<group targetFramework="net11.0" />'
if git -C "$repo" rev-parse --verify -q HEAD >/dev/null; then
  nuspec_has "commit=\"$(git -C "$repo" rev-parse HEAD)\""
fi
if [[ ${#problems[@]} -eq 0 ]]; then
  pass "package contents: PACKAGE.md, lib/net10.0 and lib/net11.0 CachedAes.{dll,xml} and nothing else under lib/, both dependency groups, MIT expression, repository commit, release notes; .snupkg holds both pdbs"
else
  for p in "${problems[@]}"; do fail "$p"; done
fi

# The integration packages, packed with the same version (their dependency on CachedAes names it exactly).
for id in "${integration_ids[@]}"; do
  if run "pack-$id" dotnet pack "$repo/src/$id/$id.csproj" -c Release -o "$feed" "${version_args[@]}"; then
    pass "dotnet pack $id (Release) into $feed"
  else
    fail "dotnet pack $id failed"
    continue
  fi
  inupkg="$feed/$id.$version.nupkg"
  isnupkg="$feed/$id.$version.snupkg"
  ipkg_warnings=$(warnings_in "$logs/pack-$id.log")
  [[ -z "$ipkg_warnings" ]] || { fail "dotnet pack $id printed warnings:"; echo "$ipkg_warnings"; }
  iproblems=()
  if [[ -f "$inupkg" && -f "$isnupkg" ]]; then
    ientries=$(zip_list "$inupkg")
    for entry in PACKAGE.md "$id.nuspec" "lib/net10.0/$id.dll" "lib/net10.0/$id.xml" "lib/net11.0/$id.dll" "lib/net11.0/$id.xml"; do
      grep -qxF "$entry" <<<"$ientries" || iproblems+=("$id nupkg lacks $entry")
    done
    iother=$(grep '^lib/' <<<"$ientries" | grep -vE "^lib/net1[01]\.0/${id//./\\.}\.(dll|xml)\$" || true)
    [[ -z "$iother" ]] || iproblems+=("$id nupkg has other lib/ entries: $(paste -sd' ' - <<<"$iother")")
    for pdb in "lib/net10.0/$id.pdb" "lib/net11.0/$id.pdb"; do
      grep -qxF "$pdb" <<<"$(zip_list "$isnupkg")" || iproblems+=("$id snupkg lacks $pdb")
    done
    inuspec=$(zip_cat "$inupkg" "$id.nuspec")
    for want in "<id>$id</id>" "<version>$version</version>" '<license type="expression">MIT</license>' '<readme>PACKAGE.md</readme>' \
      '<repository type="git" url="https://github.com/cachedaes/CachedAes"' '<releaseNotes>' \
      "<dependency id=\"CachedAes\" version=\"$version\"" '<group targetFramework="net10.0">' '<group targetFramework="net11.0">'; do
      grep -qF -- "$want" <<<"$inuspec" || iproblems+=("$id nuspec lacks $want")
    done
    if git -C "$repo" rev-parse --verify -q HEAD >/dev/null; then
      grep -qF "commit=\"$(git -C "$repo" rev-parse HEAD)\"" <<<"$inuspec" || iproblems+=("$id nuspec lacks the repository commit")
    fi
    case "$id" in
      CachedAes.IdentityModel) grep -qF '<dependency id="Microsoft.IdentityModel.Tokens" version="[8.0.1, 9.0.0)"' <<<"$inuspec" || iproblems+=("$id nuspec lacks the Microsoft.IdentityModel.Tokens [8.0.1, 9.0.0) dependency") ;;
      CachedAes.JoseJwt) grep -qF '<dependency id="jose-jwt" version="[5.3.0, 6.0.0)"' <<<"$inuspec" || iproblems+=("$id nuspec lacks the jose-jwt [5.3.0, 6.0.0) dependency") ;;
      CachedAes.DataProtection)
        # 10.0.12 for net10.0: 10.0.0-10.0.6 have a known advisory (docs/dependencies.md); 11.0.0 for net11.0.
        for dp in 10.0.12 11.0.0; do
          grep -qF "<dependency id=\"Microsoft.AspNetCore.DataProtection\" version=\"$dp\"" <<<"$inuspec" \
            || iproblems+=("$id nuspec lacks the Microsoft.AspNetCore.DataProtection $dp dependency")
        done ;;
    esac
    # Release notes of its own (its CHANGELOG.md's section), not CachedAes's.
    grep -qF "src/$id/CHANGELOG.md" <<<"$inuspec" || iproblems+=("$id release notes do not come from src/$id/CHANGELOG.md")
    grep -qF 'RFC 5649' <<<"$inuspec" && iproblems+=("$id release notes carry CachedAes's own notes")
    # Its install lines work while every version is a prerelease.
    if zip_cat "$inupkg" PACKAGE.md | grep -E 'dotnet add package CachedAes' | grep -qv -- '--prerelease'; then
      iproblems+=("$id PACKAGE.md has a 'dotnet add package CachedAes...' line without --prerelease")
    fi
    readme_links=$(zip_cat "$inupkg" PACKAGE.md | grep -oE '\]\([^)]*\)' | grep -v '](https://' || true)
    [[ -z "$readme_links" ]] || iproblems+=("$id PACKAGE.md has relative or non-https links: $(paste -sd' ' - <<<"$readme_links")")
  else
    iproblems+=("missing $inupkg or $isnupkg")
  fi
  if [[ ${#iproblems[@]} -eq 0 ]]; then
    pass "$id package contents: PACKAGE.md (absolute links, --prerelease), lib/net10.0 and lib/net11.0 $id.{dll,xml}, dependency on CachedAes $version, MIT expression, repository commit, its own release notes; .snupkg holds both pdbs"
  else
    for p in "${iproblems[@]}"; do fail "$p"; done
  fi
done

# The documentation files hold the public surface only (build/PublicXmlDocs): no member of an internal namespace or type.
doc_problems=$(for f in "$feed"/*."$version".nupkg; do
  for entry in $(zip_list "$f" | grep -E '^lib/.*\.xml$'); do
    zip_cat "$f" "$entry" | grep -oE 'member name="[^"]*"' \
      | grep -E 'CachedCryptography\.(Ownership|Operations|Seam|Interop|Selection|Intrinsics|Backends)\.|CachedAesAuthenticatedEncryptorFactory|CachedCryptography\.IdentityModel\.Algorithms|#ctor\(System\.Func' \
      | sed "s|^|$(basename "$f") $entry: |" | head -n 3
  done
done)
if [[ -z "$doc_problems" ]]; then
  pass "documentation files of the packages: no internal member"
else
  fail "documentation files document internal members:"
  echo "$doc_problems"
fi

# The package page's readme: every link and image must be absolute (a relative link breaks on the
# package page), and it must not talk about this repository's development environment.
readme_problems=$(zip_cat "$nupkg" PACKAGE.md | python3 -c '
import re, sys
text = sys.stdin.read()
targets = re.findall(r"\]\(\s*<?([^)\s>]+)", text) + re.findall(r"\b(?:href|src)\s*=\s*\"([^\"]*)\"", text)
targets += re.findall(r"^\s*\[[^\]]+\]:\s*(\S+)", text, re.M)
for t in targets:
    if not t.startswith("https://"):
        print("relative or non-https link: " + t)
for line in text.splitlines():
    if "dotnet add package CachedAes" in line and "--prerelease" not in line:
        print("an install line without --prerelease: " + line.strip())
for phrase in ("shared/", "development machine", "package source here", "this machine"):
    if phrase in text:
        print("mentions the development environment: " + phrase)
if not targets:
    print("no links at all (expected at least the repository link)")
')
if [[ -z "$readme_problems" ]]; then
  pass "PACKAGE.md in the package: only absolute https links, nothing about the development environment"
else
  while IFS= read -r p; do fail "PACKAGE.md: $p"; done <<<"$readme_problems"
fi

# ---------------------------------------------------------------- 2. restore and run the sample
case "$(uname -s)" in
  Linux) default_backend=OpenSsl ;;
  Darwin) default_backend=CommonCrypto ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT) default_backend=Cng ;;
  *) default_backend=any ;;
esac
expected_backend="${CACHEDAES_EXPECTED_BACKEND:-$default_backend}"

# check_output NAME LOGFILE: the sample's output must end in success and name the expected backend.
check_output() {
  local name=$1 log=$2 backend
  if ! grep -qx 'consumer-check: OK' "$log"; then
    fail "$name: no 'consumer-check: OK' line"
    grep -E '^(MISMATCH|consumer-check|backend)' "$log" | head -n 20
    return 1
  fi
  backend=$(sed -n 's/^backend: //p' "$log" | head -n 1)
  if [[ "$expected_backend" != any && "$backend" != "$expected_backend" ]]; then
    fail "$name: backend is '$backend', expected '$expected_backend'"
    return 1
  fi
  # The runtime it ran on and the package's lib/ folder it got must be the target framework's.
  local runtime library major=${tfm%%.*}
  major=${major#net}
  runtime=$(sed -n 's/^runtime: //p' "$log" | head -n 1)
  library=$(sed -n 's/^library: //p' "$log" | head -n 1)
  if [[ "$runtime" != "$major".* || "$library" != ".NETCoreApp,Version=v$major.0" ]]; then
    fail "$name: ran on .NET '$runtime' with CachedAes built for '$library' (expected .NET $major.x and lib/$tfm)"
    return 1
  fi
  # A bug report pasted from Describe() names the package version it came from.
  if ! grep -qF "describe: CachedAes $version+" "$log" && ! grep -qF "describe: CachedAes $version on " "$log"; then
    fail "$name: CachedAesDiagnostics.Describe() does not start with the package version ($version): $(grep -E '^describe:' "$log")"
    return 1
  fi
  pass "$name: consumer-check: OK, backend $backend, .NET $runtime, lib/$tfm, Describe() names $version, $(grep -E '^checks:' "$log")"
}

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) rid=linux-x64 ;;
  Linux-aarch64) rid=linux-arm64 ;;
  Darwin-x86_64) rid=osx-x64 ;;
  Darwin-arm64) rid=osx-arm64 ;;
  *) rid= ;;
esac

export CACHEDAES_LOCAL_FEED="$feed" NUGET_PACKAGES="$packages"

# The .NET 11 runtime for the net11.0 sample's framework-dependent run, from the package source only.
dotnet11_root=
install_dotnet11() {
  [[ -n "$dotnet11_root" ]] && return 0
  if run install-dotnet11 bash "$repo/scripts/install-dotnet11-runtime.sh" "$work/dotnet11"; then
    dotnet11_root="$work/dotnet11"
    pass ".NET 11.0.0 runtime laid out from the package source ($dotnet11_root)"
  else
    fail ".NET 11.0.0 runtime could not be laid out (scripts/install-dotnet11-runtime.sh)"
    return 1
  fi
}

# consume TFM: steps 2-4 for the sample built as a TFM app.
consume() {
  local tfm=$1 tag=$1
  local tfm_args=(-p:CachedAesConsumerTargetFramework="$tfm")
  if [[ "$tfm" == net11.0 ]]; then
    # The .NET 10 SDK needs to be taught net11.0 (only while no SDK 11 builds this; see the props file).
    tfm_args+=(-p:AfterMicrosoftNetSdkProps="$repo/build/Net11WithSdk10.props")
  fi

  # A stale CachedAes of the same version must never be used: clear it from the private folder,
  # and clear the sample's own build output.
  rm -rf "$packages/cachedaes" "$sample_dir/bin" "$sample_dir/obj"

  # 2. Build and run, framework-dependent: net10.0 on the SDK's runtime (dotnet run), net11.0 on 11.0.0.
  if [[ "$tfm" == net10.0 ]]; then
    if run "sample-run-$tag" dotnet run --project "$sample" -c Release "${tfm_args[@]}" -p:CachedAesVersion="$version"; then
      check_output "$tfm sample (dotnet run)" "$logs/sample-run-$tag.log"
    else
      fail "$tfm sample (dotnet run) failed (build error or a mismatch: see above)"
    fi
  else
    if run "sample-build-$tag" dotnet build "$sample" -c Release "${tfm_args[@]}" -p:CachedAesVersion="$version" -o "$work/build-$tag"; then
      if install_dotnet11 && run "sample-run-$tag" "$dotnet11_root/dotnet" "$work/build-$tag/$sample_bin.dll"; then
        check_output "$tfm sample (built, run by $dotnet11_root/dotnet)" "$logs/sample-run-$tag.log"
      else
        fail "$tfm sample run on .NET 11.0.0 failed (see above)"
      fi
    else
      fail "$tfm sample build failed"
    fi
  fi
  local build_log="$logs/sample-run-$tag.log" run_warnings
  [[ "$tfm" == net10.0 ]] || build_log="$logs/sample-build-$tag.log"
  run_warnings=$(warnings_in "$build_log")
  [[ -z "$run_warnings" ]] || { fail "$tfm sample build printed warnings:"; echo "$run_warnings"; }

  # The package the sample restored must be the one just packed, from the local folder.
  # (NuGet's packages folder uses lower-case ids and versions: "-dev.20261123T001500" -> "-dev.20261123t001500".)
  local lc_version=${version,,}
  local meta="$packages/cachedaes/$lc_version/.nupkg.metadata"
  if [[ -f "$meta" ]]; then
    local restored_source restored_hash
    restored_source=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["source"])' "$meta")
    restored_hash=$(cat "$packages/cachedaes/$lc_version/cachedaes.$lc_version.nupkg.sha512")
    if [[ "${restored_source%/}" == "$feed" && "$restored_hash" == "$(nupkg_hash "$nupkg")" ]]; then
      pass "$tfm sample restored CachedAes $version from the local folder only (same SHA-512 as the packed file)"
    else
      fail "$tfm sample restored CachedAes from '$restored_source' (expected '$feed') or with another hash"
    fi
  else
    fail "CachedAes $version was not restored into the private packages folder $packages ($tfm)"
  fi

  if [[ "${CACHEDAES_SKIP_PUBLISH:-0}" == 1 ]]; then
    skip "$tfm trimmed and native AOT publish (CACHEDAES_SKIP_PUBLISH=1)"
    return 0
  fi
  if [[ -z "$rid" ]]; then
    skip "$tfm trimmed and native AOT publish: no runtime identifier for $(uname -s)-$(uname -m) in this script"
    return 0
  fi

  # 3. Trimmed self-contained publish (it carries its own runtime: 11.0.0 from the runtime pack for net11.0).
  local trimmed="$work/trimmed-$tag"
  if run "publish-trimmed-$tag" dotnet publish "$sample" -c Release -r "$rid" --self-contained \
    -p:PublishTrimmed=true "${tfm_args[@]}" -p:CachedAesVersion="$version" -o "$trimmed"; then
    local trim_warnings
    trim_warnings=$(warnings_in "$logs/publish-trimmed-$tag.log")
    if [[ -z "$trim_warnings" ]]; then
      pass "$tfm trimmed publish ($rid): zero warnings"
    else
      fail "$tfm trimmed publish ($rid) printed warnings:"
      echo "$trim_warnings"
    fi
    if run "trimmed-run-$tag" "$trimmed/$sample_bin"; then
      check_output "$tfm trimmed binary" "$logs/trimmed-run-$tag.log"
    else
      fail "$tfm trimmed binary exited non-zero"
    fi
  else
    fail "$tfm trimmed publish ($rid) failed"
  fi

  # 4. Native AOT publish.
  local aot="$work/aot-$tag" missing
  if RUN_QUIET=1 run "publish-aot-$tag" dotnet publish "$sample" -c Release -r "$rid" -p:PublishAot=true \
    "${tfm_args[@]}" -p:CachedAesVersion="$version" -o "$aot"; then
    local aot_warnings
    aot_warnings=$(warnings_in "$logs/publish-aot-$tag.log")
    if [[ -z "$aot_warnings" ]]; then
      pass "$tfm native AOT publish ($rid): zero warnings"
    else
      fail "$tfm native AOT publish ($rid) printed warnings:"
      echo "$aot_warnings"
    fi
    if run "aot-run-$tag" "$aot/$sample_bin"; then
      check_output "$tfm native AOT binary" "$logs/aot-run-$tag.log"
    else
      fail "$tfm native AOT binary exited non-zero"
    fi
  elif grep -qF 'Native AOT for net11.0 needs the .NET 11 SDK' "$logs/publish-aot-$tag.log"; then
    # build/Net11WithSdk10.props stops it: under the .NET 10 SDK the ILCompiler 11.0.0 packs restore but do not
    # compile natively. Not a missing pack or toolchain, so a skip even with CACHEDAES_REQUIRE_AOT=1.
    skip "$tfm native AOT publish ($rid): needs the .NET 11 SDK (the ILCompiler 11.0.0 packs restore, but their publish targets do not run under .NET SDK $(dotnet --version); see build/Net11WithSdk10.props)"
  elif missing=$(grep -oE 'Unable to find package [A-Za-z0-9_.-]+' "$logs/publish-aot-$tag.log" | sed -e 's/Unable to find package //' -e 's/\.$//' | sort -u) \
    && [[ -n "$missing" ]] \
    && ! grep -qviE '^(Microsoft\.NETCore\.App\.Runtime\.NativeAOT\..+|runtime\..+\.Microsoft\.DotNet\.ILCompiler|Microsoft\.DotNet\.ILCompiler)$' <<<"$missing"; then
    # Only the native AOT compiler/runtime packs are missing: this machine's package source lacks them.
    aot_unavailable "$tfm: the package source lacks $(paste -sd, - <<<"$missing") (wanted by .NET SDK $(dotnet --version)); native AOT needs them from a package source"
  elif grep -qE 'Platform linker .* not found' "$logs/publish-aot-$tag.log"; then
    aot_unavailable "$tfm: no C toolchain: neither clang nor gcc is on PATH (install clang or gcc, and zlib1g-dev)"
  else
    show_tail "$logs/publish-aot-$tag.log"
    fail "$tfm native AOT publish ($rid) failed"
  fi
}

# ---------------------------------------------------------------- 5. README's Install lines and one-liners
# README.md's Install block and one-liners, extracted once: $work/readme-install.txt (the commands of the first sh block
# of "## Install") and the C# file ReadmeLines in $work (the csharp blocks holding "UseCachedAes();": their using lines at the top,
# their statements in ReadmeLines.DataProtection(IServiceCollection services), ReadmeLines.IdentityModel() and
# ReadmeLines.JoseJwt()). Besides
# README's lines the file has only what an ASP.NET Core app has implicitly: Microsoft.Extensions.DependencyInjection.
extract_readme() {
  python3 - "$repo/README.md" "$work/readme-install.txt" "$work/ReadmeLines.cs" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
install = re.search(r"^## Install\n(.*?)(?=^## )", text, re.S | re.M)
block = re.search(r"```sh\n(.*?)```", install.group(1), re.S) if install else None
if not block:
    sys.exit("README.md: no sh block under '## Install'")
commands = [l.strip() for l in block.group(1).splitlines() if l.strip() and not l.strip().startswith("#")]
open(sys.argv[2], "w").write("\n".join(commands) + "\n")
blocks = [b for b in re.findall(r"```csharp\n(.*?)```", text, re.S) if "UseCachedAes();" in b]
dp = [b for b in blocks if "AddDataProtection()" in b]
im = [b for b in blocks if "CryptoProviderFactory" in b]
jj = [b for b in blocks if "JWT.DefaultSettings" in b]
if len(dp) != 1 or len(im) != 1 or len(jj) != 1:
    sys.exit(f"README.md: expected one Data Protection, one IdentityModel and one jose-jwt one-liner block, found {len(dp)}, {len(im)} and {len(jj)}")
directive = re.compile(r"^using [A-Za-z_][A-Za-z0-9_.]*;")
def split(b):
    lines = [l.rstrip() for l in b.splitlines() if l.strip()]
    return [l for l in lines if directive.match(l)], [l for l in lines if not directive.match(l)]
(dpu, dps), (imu, ims), (jju, jjs) = split(dp[0]), split(im[0]), split(jj[0])
usings = []
for u in dpu + imu + jju + ["using Microsoft.Extensions.DependencyInjection;   // implicit in ASP.NET Core and worker apps"]:
    if u.split("//")[0].strip() not in [x.split("//")[0].strip() for x in usings]:
        usings.append(u)
body = lambda lines: "\n".join("        " + l for l in lines)
open(sys.argv[3], "w").write(
    "// Generated by scripts/consumer-test.sh from README.md's one-liners, as written there.\n"
    + "\n".join(usings) + "\n\n"
    + "internal static class ReadmeLines\n{\n"
    + "    public static void DataProtection(IServiceCollection services)\n    {\n" + body(dps) + "\n    }\n\n"
    + "    public static void IdentityModel()\n    {\n" + body(ims) + "\n    }\n\n"
    + "    public static void JoseJwt()\n    {\n" + body(jjs) + "\n    }\n}\n")
PY
}

# The packages the app restored must be the ones just packed, from the local folder.
check_restored() {
  local what=$1 lc_version=${version,,} id lc_id meta problems=()
  for id in CachedAes "${integration_ids[@]}"; do
    lc_id=${id,,}
    meta="$packages/$lc_id/$lc_version/.nupkg.metadata"
    if [[ ! -f "$meta" ]]; then
      problems+=("$id $version was not restored into $packages")
    elif [[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["source"].rstrip("/"))' "$meta")" != "$feed" \
      || "$(cat "$packages/$lc_id/$lc_version/$lc_id.$lc_version.nupkg.sha512")" != "$(nupkg_hash "$feed/$id.$version.nupkg")" ]]; then
      problems+=("$id was restored from elsewhere or with another hash than the packed file")
    fi
  done
  if [[ ${#problems[@]} -eq 0 ]]; then
    pass "$what restored CachedAes, CachedAes.IdentityModel, CachedAes.DataProtection and CachedAes.JoseJwt $version from the local folder only (same SHA-512 as packed)"
  else
    for p in "${problems[@]}"; do fail "$what: $p"; done
  fi
}

# ring_step NAME LOG COMMAND...: one side's turn on a shared ring; it must end with its OK line.
ring_step() {
  local name=$1 log=$2
  shift 2
  if run "$log" "$@" && grep -qxE '(integration|stock)-check: OK' "$logs/$log.log"; then
    return 0
  fi
  grep -E '^(MISMATCH|FAIL|integration-check|stock-check)' "$logs/$log.log" | head -n 10
  fail "$name"
  return 1
}

# The stock app (no CachedAes), built once.
stock_dll=
build_stock_app() {
  [[ -n "$stock_dll" ]] && return 0
  rm -rf "$repo/tests/lanes/consumers/StockDataProtectionCheck/bin" "$repo/tests/lanes/consumers/StockDataProtectionCheck/obj"
  if run stock-build dotnet build "$stock_dp_sample" -c Release -o "$work/stock-app"; then
    local w
    w=$(warnings_in "$logs/stock-build.log")
    [[ -z "$w" ]] || { fail "tests/lanes/consumers/StockDataProtectionCheck build printed warnings:"; echo "$w"; }
    stock_dll="$work/stock-app/StockDataProtectionCheck.dll"
  else
    fail "tests/lanes/consumers/StockDataProtectionCheck build failed"
    return 1
  fi
}

# consume_readme: README's Install lines in a fresh worker app (net10.0), README's one-liners, and the shared ring.
consume_readme() {
  local app="$work/readme-app" n=0 line cmd install_warnings="" feed_line=""
  rm -rf "$app" "$packages/cachedaes" "$packages/cachedaes.identitymodel" "$packages/cachedaes.dataprotection" "$packages/cachedaes.josejwt"
  mkdir -p "$app"
  run readme-new dotnet new worker --output "$app" --name ReadmeApp || { fail "dotnet new worker failed"; return 0; }
  rm -f "$app/Worker.cs"

  # README's lines as written, in the app's folder; only ~/cachedaes-feed becomes this run's folder.
  while IFS= read -r line; do
    case "$line" in
      "bash scripts/pack-local.sh "*)
        feed_line=$line   # packing was step 1; the folder it names must be the one the source line adds
        continue ;;
      dotnet\ *) ;;
      *) fail "README.md's Install block has a line this test does not know how to run: $line"; continue ;;
    esac
    n=$((n + 1))
    cmd=${line//\~\/cachedaes-feed/$feed}
    if ! (cd "$app" && run "readme-install-$n" bash -c "$cmd"); then
      fail "README.md's Install line failed in a fresh app: $line"
      return 0
    fi
    # `dotnet add package` prints NuGet's warnings as "warn : NU1603: ...", a build as "warning NU1603: ...".
    install_warnings+=$(grep -E '(warning|warn :) [A-Z]+[0-9]+' "$logs/readme-install-$n.log" | sort -u)
  done <"$work/readme-install.txt"
  if [[ "$feed_line" != *"~/cachedaes-feed"* ]] || ! grep -q 'nuget add source ~/cachedaes-feed .*--configfile' "$work/readme-install.txt"; then
    fail "README.md's Install block does not pack into and add as a source (with --configfile) one folder, ~/cachedaes-feed"
  fi
  for id in CachedAes CachedAes.DataProtection CachedAes.IdentityModel CachedAes.JoseJwt; do
    grep -qE "^dotnet add package $id --prerelease( |$)" "$work/readme-install.txt" || fail "README.md's Install block has no 'dotnet add package $id --prerelease'"
  done
  if [[ -n "$install_warnings" ]]; then
    fail "README.md's Install lines restored with warnings:"
    echo "$install_warnings"
  else
    pass "README.md's $n Install lines ran as written in a fresh worker app, without a warning"
  fi

  cp "$integration_dir/Program.cs" "$work/ReadmeLines.cs" "$app/"
  if run readme-build dotnet build "$app" -c Release -o "$work/readme-app-bin"; then
    local w
    w=$(warnings_in "$logs/readme-build.log")
    if [[ -z "$w" ]]; then
      pass "the app built README.md's one-liners with their using lines ($(grep -c '^using ' "$work/ReadmeLines.cs") using lines), without a warning"
    else
      fail "the README app's build printed warnings:"
      echo "$w"
    fi
  else
    fail "the README app did not build (a missing using line in README.md's one-liners, or a package missing from its Install lines)"
    return 0
  fi
  check_restored "the README app"
  build_stock_app || return 0

  # Every turn runs even after one failed, so that a ring one app could not read is reported by that app too.
  local cached_dll="$work/readme-app-bin/ReadmeApp.dll" ring="$work/ring-stock-first" ok=1
  ring_step "stock app making the ring" ring1-stock dotnet "$stock_dll" "$ring" || ok=0
  ring_step "README app on the stock app's ring" ring1-cached dotnet "$cached_dll" "$ring" || ok=0
  ring_step "stock app after the README app, rotating" ring1-stock-rotate dotnet "$stock_dll" "$ring" rotate || ok=0
  ring_step "README app after the stock app's rotation, rotating" ring1-cached-rotate dotnet "$cached_dll" "$ring" rotate || ok=0
  ring_step "stock app after the README app's rotation" ring1-stock-end dotnet "$stock_dll" "$ring" || ok=0
  [[ $ok -eq 1 ]] && pass "key ring made by the stock app, shared both ways across a rotation by each: README app $(grep -h '^dataprotection: ' "$logs/ring1-cached-rotate.log" | sed 's/^dataprotection: //'), each on CachedAes; stock app $(grep -h '^stock: ' "$logs/ring1-stock-end.log" | sed 's/^stock: //')"
  ring="$work/ring-cached-first" ok=1
  ring_step "README app making the ring" ring2-cached dotnet "$cached_dll" "$ring" || ok=0
  ring_step "stock app on the README app's ring, rotating" ring2-stock dotnet "$stock_dll" "$ring" rotate || ok=0
  ring_step "README app after the stock app's rotation" ring2-cached-end dotnet "$cached_dll" "$ring" || ok=0
  ring_step "stock app at the end" ring2-stock-end dotnet "$stock_dll" "$ring" || ok=0
  [[ $ok -eq 1 ]] && pass "key ring made by the README app: the stock app (no CachedAes) reads it, rotates, and each reads the other's payloads ($(grep -h '^stock: ' "$logs/ring2-stock-end.log"))"
  local backend
  backend=$(sed -n 's/^backend: //p' "$logs/ring1-cached.log")
  [[ "$expected_backend" == any || "$backend" == "$expected_backend" ]] || fail "the README app's backend is '$backend', expected '$expected_backend'"
}

# consume_integrations TFM: tests/lanes/consumers/IntegrationConsumerCheck itself (packages by id and version) as a TFM app, with
# README's one-liners, on a ring of its own that the stock app then reads.
consume_integrations() {
  local tfm=$1 tag="integrations-$1"
  local tfm_args=(-p:CachedAesConsumerTargetFramework="$tfm" -p:CachedAesReadmeLines="$work/ReadmeLines.cs")
  [[ "$tfm" == net11.0 ]] && tfm_args+=(-p:AfterMicrosoftNetSdkProps="$repo/build/Net11WithSdk10.props")
  rm -rf "$packages/cachedaes" "$packages/cachedaes.identitymodel" "$packages/cachedaes.dataprotection" "$packages/cachedaes.josejwt" "$integration_dir/bin" "$integration_dir/obj"

  local ring="$work/ring-$tfm" log="$logs/integration-run-$tfm.log" dotnet_host=dotnet
  run "integration-build-$tfm" dotnet build "$integration_sample" -c Release "${tfm_args[@]}" -p:CachedAesVersion="$version" -o "$work/build-$tag" \
    || { fail "$tfm integration sample build failed"; return 0; }
  if [[ "$tfm" == net11.0 ]]; then
    install_dotnet11 || return 0
    dotnet_host="$dotnet11_root/dotnet"
  fi
  run "integration-run-$tfm" "$dotnet_host" "$work/build-$tag/IntegrationConsumerCheck.dll" "$ring" \
    || { fail "$tfm integration sample run failed (see above)"; return 0; }
  local run_warnings
  run_warnings=$(warnings_in "$logs/integration-build-$tfm.log")
  [[ -z "$run_warnings" ]] || { fail "$tfm integration sample build printed warnings:"; echo "$run_warnings"; }

  local major=${tfm%%.*} line problems=()
  major=${major#net}
  grep -qx 'integration-check: OK' "$log" || problems+=("no 'integration-check: OK' line: $(grep -E '^(MISMATCH|integration-check)' "$log" | head -n 5 | paste -sd' ' -)")
  [[ "$(sed -n 's/^runtime: //p' "$log")" == "$major".* ]] || problems+=("ran on .NET '$(sed -n 's/^runtime: //p' "$log")'")
  for line in library identitymodel-package dataprotection-package josejwt-package; do
    [[ "$(sed -n "s/^$line: //p" "$log")" == ".NETCoreApp,Version=v$major.0" ]] || problems+=("$line is '$(sed -n "s/^$line: //p" "$log")', expected lib/$tfm")
  done
  backend=$(sed -n 's/^backend: //p' "$log")
  [[ "$expected_backend" == any || "$backend" == "$expected_backend" ]] || problems+=("backend is '$backend', expected '$expected_backend'")
  if [[ ${#problems[@]} -eq 0 ]]; then
    pass "$tfm integration sample: integration-check: OK ($(grep -E '^checks:' "$log")), backend $backend, .NET $(sed -n 's/^runtime: //p' "$log"), lib/$tfm of all four packages"
  else
    for p in "${problems[@]}"; do fail "$tfm integration sample: $p"; done
  fi
  check_restored "the $tfm integration sample"
  build_stock_app && ring_step "stock app reading the $tfm app's ring" "ring-$tfm-stock" dotnet "$stock_dll" "$ring" \
    && pass "the stock app (no CachedAes) read the $tfm integration sample's key ring: $(grep -h '^stock: ' "$logs/ring-$tfm-stock.log")"
}

aot_unavailable() {
  if [[ "${CACHEDAES_REQUIRE_AOT:-0}" == 1 ]]; then
    fail "native AOT publish ($rid): $*"
  else
    skip "native AOT publish ($rid): $*"
  fi
}

if extract_readme >"$logs/readme-extract.log" 2>&1; then
  pass "README.md: $(grep -c '' "$work/readme-install.txt") Install commands and the three one-liners extracted"
else
  cat "$logs/readme-extract.log"
  fail "README.md's Install block or one-liners could not be extracted"
fi

for tfm in ${CACHEDAES_CONSUMER_TFMS:-net10.0 net11.0}; do
  consume "$tfm"
  if [[ -f "$work/ReadmeLines.cs" ]]; then
    if [[ "$tfm" == net10.0 ]]; then consume_readme; else consume_integrations "$tfm"; fi
  fi
done
finish
