#!/usr/bin/env bash
# Puts the shared files the tests read (tests/assets/manifest.tsv) into the folder they read
# them from, and checks each one's SHA-256:
#   tests/assets/fetch.sh           downloads what is missing or differs, keeps what matches
#   tests/assets/fetch.sh --check   downloads nothing: names each file missing or different
# The folder is $SINEW_ASSETS, default ../shared/assets; a relative one is taken from the
# repository root, as the tests take it. $SINEW_ASSETS_MIRROR, a URL (file:// too, with curl)
# of a folder laid out the same way, replaces the upstream URLs, and also serves the derived
# file. Needs curl or wget, and sha256sum or shasum. Exits 1 when a file is still missing or
# different at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
manifest="$here/manifest.tsv"
dest="${SINEW_ASSETS:-../shared/assets}"
case "$dest" in
  /*) ;;
  *) dest="$root/$dest" ;;
esac
mirror="${SINEW_ASSETS_MIRROR:-}"
mirror="${mirror%/}"

check=false
case "${1-}" in
  '') ;;
  --check) check=true ;;
  -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
$check || mkdir -p "$dest"
[ -d "$dest" ] && dest="$(cd "$dest" && pwd)"

sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# download URL FILE
download() {
  if command -v curl >/dev/null; then
    curl -fsSL --connect-timeout 30 --retry 3 -o "$2" "$1" </dev/null
  elif command -v wget >/dev/null; then
    wget -q -O "$2" "$1" </dev/null
  else
    echo "neither curl nor wget is installed" >&2
    return 1
  fi
}

# What to do for a derived file (its manifest source starts with "derived:").
recipe() {
  cat >&2 <<EOF
  $1 is made, not downloaded: $2
  To make it, with the peer benchmark kit (shared/bench/ozz-rs, nightly Rust):
    1. download ozz-animation's media/bin/pab_skeleton.ozz, pab_crossarms.ozz and
       arnaud_mesh_4.ozz at commit 6cbdc790123aa4731d82e255df187b3a8a808256
       (https://raw.githubusercontent.com/guillaumeblanc/ozz-animation/6cbdc790123aa4731d82e255df187b3a8a808256/media/bin/FILE);
       their SHA-256: 2561ad06bf0c90af938afcabb29ddc3d53fc511a93998bf906173a18fc709569,
       ed421287992bc75a82bacdcca32979497eaf36171d3b2f3963ef0009d3155c21 and
       3654a5a7606ff4b779588df962f06758088035c4e292f6e3dc155b726ddcdac1;
    2. in a writable copy of shared/bench/ozz-rs: ./setup.sh && cargo +nightly run --release \\
         --bin ozz2gltf -- pab_skeleton.ozz pab_crossarms.ozz arnaud_mesh_4.ozz $dest/$1
    3. run $0 --check.
  Or set SINEW_ASSETS_MIRROR to a folder that has it. tests/assets/README.md has the details.
EOF
}

ok=0
fetched=0
bad=()
while IFS=$'\t' read -r path bytes sum license source; do
  case "$path" in '' | '#'*) continue ;; esac
  file="$dest/$path"
  if [ -f "$file" ] && [ "$(sha256 "$file")" = "$sum" ]; then
    ok=$((ok + 1))
    continue
  fi
  if [ -f "$file" ]; then
    what="$path in $dest is not the manifest's (SHA-256 $(sha256 "$file"))"
  else
    what="$path is missing from $dest"
  fi
  if $check; then
    echo "$what" >&2
    bad+=("$path")
    continue
  fi
  if [ -n "$mirror" ]; then
    url="$mirror/$path"
  elif [ "${source#derived:}" != "$source" ]; then
    echo "$what" >&2
    recipe "$path" "${source#derived: }"
    bad+=("$path")
    continue
  else
    url="$source"
  fi
  echo "fetching $path ($bytes bytes, $license) from $url"
  mkdir -p "$(dirname "$file")"
  part="$file.part"
  if ! download "$url" "$part"; then
    echo "$path: the download from $url failed" >&2
    rm -f "$part"
    bad+=("$path")
    continue
  fi
  got="$(sha256 "$part")"
  if [ "$got" != "$sum" ]; then
    echo "$path: the download from $url has SHA-256 $got, not the manifest's $sum; not kept" >&2
    rm -f "$part"
    bad+=("$path")
    continue
  fi
  mv -f "$part" "$file"
  fetched=$((fetched + 1))
done <"$manifest"

echo "$dest: $ok files already matched, $fetched fetched, ${#bad[@]} missing or different"
if [ ${#bad[@]} -gt 0 ]; then
  $check && echo "run $0 to fetch them" >&2
  exit 1
fi
