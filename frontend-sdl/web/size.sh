#!/usr/bin/env bash
# What index.html downloads to show a .sinew model, from a built site (build.sh): each file's
# size and its size gzipped (gzip -9), as a Markdown table with the total. The files fetched
# only on demand (the full module, the dual-quaternion shader, the glTF importer, the scalar
# fallback) are listed below it, then the peer:
# three.js's skinned-animation subset (WebGLRenderer, SkinnedMesh, AnimationMixer) bundled and
# minified by esbuild from the lockfile's three, and the ratio of the totals. Last, the floor
# under the runtime module: examples/floor.rs (the core's parser, key-cursor sampling, the
# hierarchy and a palette, nothing else) built as sinew_web.wasm is, beside what the page
# downloads besides its module.
#   bash frontend-sdl/web/size.sh target/site
set -euo pipefail
site="${1:-target/site}"
row() { printf '| %s | %d | %d |\n' "$1" "$(wc -c <"$site/$1")" "$(gzip -9 -c "$site/$1" | wc -c)"; }
page=(index.html style.css viewer.js sinew.js camera.js gl.js sinew_web.wasm)
for f in skin_common.vert skin_lbs.vert mesh.frag line.vert line.frag; do page+=("shaders/$f.glsl"); done
echo "| file | bytes | gzip -9 |"
echo "|---|---|---|"
raw=0 gz=0
for f in "${page[@]}"; do
  row "$f"
  raw=$((raw + $(wc -c <"$site/$f")))
  gz=$((gz + $(gzip -9 -c "$site/$f" | wc -c)))
done
printf '| **total** | **%d** | **%d** |\n\n' "$raw" "$gz"
module_gz=$(gzip -9 -c "$site/sinew_web.wasm" | wc -c)
echo "| on demand | bytes | gzip -9 |"
echo "|---|---|---|"
for f in sinew_web_graph.wasm shaders/skin_dqs.vert.glsl sinew_web_import.wasm import.js sinew_web_scalar.wasm; do
  [ -f "$site/$f" ] && row "$f"
done

web="$(cd "$(dirname "$0")" && pwd)"
esbuild="$web/node_modules/.bin/esbuild"
if [ -x "$esbuild" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "import { WebGLRenderer, SkinnedMesh, AnimationMixer } from 'three'; export { WebGLRenderer, SkinnedMesh, AnimationMixer };" >"$tmp/entry.js"
  NODE_PATH="$web/node_modules" "$esbuild" "$tmp/entry.js" --bundle --minify --format=esm --log-level=warning \
    --alias:three="$web/node_modules/three/build/three.module.js" --outfile="$tmp/three-subset.js"
  three_raw=$(wc -c <"$tmp/three-subset.js")
  three_gz=$(gzip -9 -c "$tmp/three-subset.js" | wc -c)
  printf '\nthree.js %s subset (esbuild --minify): %d bytes, %d gzipped; sinew / three.js gzipped: %.2f\n' \
    "$(node -p "require('$web/node_modules/three/package.json').version")" "$three_raw" "$three_gz" \
    "$(awk -v a="$gz" -v b="$three_gz" 'BEGIN { print a / b }')"
else
  echo "(npm ci --prefix frontend-sdl/web for the three.js comparison)"
fi

root="$(cd "$web/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}/web-simd"
(cd "$root" && RUSTFLAGS="-C target-feature=+simd128" cargo build --quiet --profile web --target wasm32-unknown-unknown \
  --target-dir "$target" -p sinew-web --no-default-features --example floor)
floor="$target/wasm32-unknown-unknown/web/examples/floor.wasm"
printf '\nfloor (examples/floor.rs): %d bytes, %d gzipped; the page without its module: %d gzipped\n' \
  "$(wc -c <"$floor")" "$(gzip -9 -c "$floor" | wc -c)" "$((gz - module_gz))"

