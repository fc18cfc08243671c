#!/usr/bin/env bash
# The browser build's tests: builds what they need and runs them in headless Chromium.
#   bash frontend-sdl/web/test/run.sh OUT_DIR
# OUT_DIR receives the site (frontend-sdl/web/build.sh) and the test models (OUT_DIR/models);
# frames, silhouette diffs and IoU values go to OUT_DIR/../web-test-out.
# Needs: Rust with the wasm32-unknown-unknown target, libsdl2-dev, node 20 + npm, chromium,
# xvfb-run (or a DISPLAY) and Mesa for the desktop reference frames.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
mkdir -p "$1"
site="$(cd "$1" && pwd)"
web="$repo/frontend-sdl/web"
cd "$repo"

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 20 ]; then
  echo "node 20 or newer is needed (playwright-core, node:test); found: $(node --version 2>/dev/null || echo none)" >&2
  exit 1
fi

# npm ci when node_modules is missing or older than the lockfile (npm writes its own copy of
# the lockfile, node_modules/.package-lock.json, on every install).
if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$web" --no-audit --no-fund
fi

# The desktop viewer (reference frames, `sinew dump`, `sinew bake`), the runtime's native
# palette and spring bones (the bits the wasm modules must give), and the site, which takes
# three.js and three-vrm from node_modules.
cargo build -p sinew-frontend
cargo build -p sinew-web --example palette --example springs
bash frontend-sdl/web/build.sh "$site"

node "$web/test/models.mjs" "$site"
SINEW_SITE="$site" node --test "$web"/test/*.test.mjs
