#!/usr/bin/env bash
# What index.html downloads to show a .sinew model, from a built site (build.sh): each file's
# size and its size gzipped (gzip -9), as a Markdown table with the total. The modules fetched
# only on demand (graphs, glTF importer, scalar fallback) are listed below it.
#   bash frontend-sdl/web/size.sh target/site
set -euo pipefail
site="${1:-target/site}"
row() { printf '| %s | %d | %d |\n' "$1" "$(wc -c <"$site/$1")" "$(gzip -9 -c "$site/$1" | wc -c)"; }
page=(index.html style.css viewer.js sinew.js camera.js sinew_web.wasm)
for f in skin_common.vert skin_lbs.vert skin_dqs.vert mesh.frag line.vert line.frag; do page+=("shaders/$f.glsl"); done
echo "| file | bytes | gzip -9 |"
echo "|---|---|---|"
raw=0 gz=0
for f in "${page[@]}"; do
  row "$f"
  raw=$((raw + $(wc -c <"$site/$f")))
  gz=$((gz + $(gzip -9 -c "$site/$f" | wc -c)))
done
printf '| **total** | **%d** | **%d** |\n\n' "$raw" "$gz"
echo "| on demand | bytes | gzip -9 |"
echo "|---|---|---|"
for f in sinew_web_graph.wasm sinew_web_import.wasm import.js sinew_web_scalar.wasm; do
  [ -f "$site/$f" ] && row "$f"
done
