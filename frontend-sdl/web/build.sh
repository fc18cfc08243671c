#!/usr/bin/env bash
# Builds the browser site into a folder (default target/site): the runtime and the glTF
# importer compiled to wasm32, the pages and their modules, the desktop's GLSL ES 1.00 shaders
# (frontend-sdl/shaders, the one copy both frontends read), the built-in character, and
# three.js for the three.js example and the benchmark (from npm, never kept in the repository).
# The folder is self-contained: serve it with any static server, e.g.
#   python3 -m http.server -d target/site 8000 --bind 127.0.0.1
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
web="$root/frontend-sdl/web"
out="$(mkdir -p "${1:-$root/target/site}" && cd "${1:-$root/target/site}" && pwd)"
cd "$root"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
crates=(-p sinew-web)
[ -f "$web/import/Cargo.toml" ] && crates+=(-p sinew-web-import)
cargo build --quiet --profile web --target wasm32-unknown-unknown "${crates[@]}"
wasm="${CARGO_TARGET_DIR:-$root/target}/wasm32-unknown-unknown/web"

mkdir -p "$out/shaders" "$out/models"
cp "$web"/site/* "$web"/js/*.js "$out/"
cp "$root"/frontend-sdl/shaders/*.glsl "$out/shaders/"
cp "$wasm"/sinew_web*.wasm "$out/"
cp "$root/core/fixtures/character.sinew" "$out/models/"

# three.js, for three.html and bench.html: the npm package of the lockfile.
three="$web/node_modules/three"
if [ ! -d "$three" ] && [ -f "$web/package-lock.json" ] && command -v npm >/dev/null; then
  npm ci --prefix "$web" --no-audit --no-fund --silent
fi
if [ -d "$three" ]; then
  mkdir -p "$out/three"
  cp "$three/build/three.module.min.js" "$three/build/three.core.min.js" "$out/three/" 2>/dev/null ||
    cp "$three/build/three.module.min.js" "$out/three/"
else
  echo "build.sh: no npm: three.html and bench.html need three.js in $out/three" >&2
fi
echo "site: $out"
