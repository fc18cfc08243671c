#!/usr/bin/env bash
# Builds the browser site into a folder (default target/site): the runtime and the glTF
# importer compiled to wasm32, the pages and their modules, the desktop's GLSL ES 1.00 shaders
# (frontend-sdl/shaders, the one copy both frontends read), the built-in character, and
# three.js and three-vrm for the three.js example and the benchmarks (from npm, never kept in the repository).
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
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$out/shaders" "$out/models"
# module NAME FLAVOR RUSTFLAGS CARGO-ARGS...: builds one module into $out/NAME, in a target folder
# per flavor (a change of RUSTFLAGS would rebuild everything in a shared one).
module() {
  local name="$1" dir="$target/web-$2" flags="$3"
  shift 3
  RUSTFLAGS="$flags" cargo build --quiet --profile web --target wasm32-unknown-unknown --target-dir "$dir" "$@"
  cp "$dir/wasm32-unknown-unknown/web/$(sed 's/_scalar\|_graph//' <<<"$name")" "$out/$name"
}
# The lockfile's packages: esbuild minifies the pages' modules, binaryen's wasm-opt the runtime's.
if [ -f "$web/package-lock.json" ] && [ ! -x "$web/node_modules/.bin/wasm-opt" ] && command -v npm >/dev/null; then
  npm ci --prefix "$web" --no-audit --no-fund --silent
fi
simd="-C target-feature=+simd128"
# The runtime without the graphs' state machines, foot placement, spring bones, crowds, morph
# targets and dual-quaternion rows, the one every page loads, with SIMD (simd128, in every
# current engine); without SIMD, for engines that lack it (where the full module, SIMD only,
# cannot be fetched), with the morph targets and dual-quaternion rows.
module sinew_web.wasm simd "$simd" -p sinew-web --no-default-features --features trap-panics
module sinew_web_scalar.wasm scalar "" -p sinew-web --no-default-features --features morphs,dqs,trap-panics
# The full module, with the state machines and foot placement (the default features), fetched
# when a page runs a graph or places the feet.
module sinew_web_graph.wasm simd "$simd" -p sinew-web --features trap-panics
# The glTF importer, fetched when a page is given a .glb or .gltf.
module sinew_web_import.wasm scalar "" -p sinew-web-import

# The runtime modules through wasm-opt -Oz when npm has installed binaryen (a smaller module
# with the same arithmetic: binaryen keeps IEEE float semantics); as rustc wrote them otherwise.
# The features are those rustc's wasm32 target enables (the stripped modules do not list them),
# and simd128 where the module was built with it.
wasm_opt="$web/node_modules/.bin/wasm-opt"
if [ -x "$wasm_opt" ]; then
  features=(--enable-bulk-memory --enable-sign-ext --enable-mutable-globals --enable-nontrapping-float-to-int
    --enable-multivalue --enable-reference-types)
  for name in sinew_web.wasm sinew_web_scalar.wasm sinew_web_graph.wasm; do
    simd_feature=(--enable-simd)
    [ "$name" != sinew_web_scalar.wasm ] || simd_feature=()
    "$wasm_opt" -Oz --converge "${features[@]}" "${simd_feature[@]}" "$out/$name" -o "$out/$name"
  done
else
  echo "build.sh: no npm: the runtime modules are not passed through wasm-opt" >&2
fi

cp "$web"/site/* "$out/"
# The pages' modules, minified one by one (imports and exports kept) by the lockfile's esbuild
# when npm has installed it; as written otherwise.
esbuild="$web/node_modules/.bin/esbuild"
for f in "$web"/js/*.js; do
  if [ -x "$esbuild" ]; then
    "$esbuild" "$f" --minify --format=esm --log-level=warning --outfile="$out/$(basename "$f")"
  else
    cp "$f" "$out/"
  fi
done
# The shaders the desktop compiles, without their comments, indentation and blank lines.
for f in "$root"/frontend-sdl/shaders/*.glsl; do
  sed -e 's#//.*##' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$f" >"$out/shaders/$(basename "$f")"
done
cp "$root/core/fixtures/character.sinew" "$out/models/"

# three.js, for three.html, bench.html and springs-bench.html: the npm package of the lockfile.
three="$web/node_modules/three"
if [ ! -d "$three" ] && [ -f "$web/package-lock.json" ] && command -v npm >/dev/null; then
  npm ci --prefix "$web" --no-audit --no-fund --silent
fi
if [ -d "$three" ]; then
  # The module build (recent versions split it in two and ship no minified copy) and the addons
  # the pages import, at their places under examples/jsm so their relative imports resolve.
  mkdir -p "$out/three/addons/loaders" "$out/three/addons/utils"
  cp "$three/build/three.module.js" "$out/three/"
  [ ! -f "$three/build/three.core.js" ] || cp "$three/build/three.core.js" "$out/three/"
  for f in loaders/GLTFLoader.js utils/BufferGeometryUtils.js utils/SkeletonUtils.js; do
    cp "$three/examples/jsm/$f" "$out/three/addons/$f"
  done
  # three-vrm, for springs-bench.html (its spring bones against sinew's): the package's minified
  # module build, which imports only `three` (the page's import map names both).
  vrm="$web/node_modules/@pixiv/three-vrm/lib/three-vrm.module.min.js"
  [ ! -f "$vrm" ] || cp "$vrm" "$out/three/three-vrm.module.js"
else
  echo "build.sh: no npm: three.html, bench.html and springs-bench.html need three.js in $out/three" >&2
fi
echo "site: $out"
