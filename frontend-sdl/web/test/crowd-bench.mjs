// The crowd frame benchmark in headless Chromium: serves SITE and opens
// crowd.html?model=models/Fox.sinew&gltf=models/Fox.glb&n=N&lod=L for lod 1 and 0, RUNS times
// each (a page load each), printing the page's two lines per load:
//   sinew-web crowd-frame Fox n N ms X evaluated E draws D
//   three.js crowd-frame Fox n N ms X draws D
//
//   node frontend-sdl/web/test/crowd-bench.mjs SITE [N] [RUNS]     (default N 10000, RUNS 3)
//
// SITE is a built site (bash frontend-sdl/web/build.sh SITE); the models are copied or baked
// into SITE/models first (needs target/debug/sinew for the bake).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, benchResult } from './browser.mjs';
import { prepareModels } from './models.mjs';

/** The page's lines for `n` instances with levels of detail `lod` (0 or 1), one page load. */
export async function crowdFrame(site, n, lod, { model = 'models/Fox.sinew', gltf = 'models/Fox.glb' } = {}) {
  prepareModels(site);
  const server = await serve(site);
  const browser = await launch();
  try {
    const page = await newPage(browser);
    const resp = await page.goto(`${server.url}crowd.html?${new URLSearchParams({ model, gltf, n, lod })}`);
    if (!resp.ok()) throw new Error(`crowd.html: HTTP ${resp.status()}`);
    const result = await benchResult(page, 600_000);
    checkClean(page);
    return result.trim().split('\n');
  } finally {
    await browser.close();
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && !process.env.NODE_TEST_CONTEXT) {
  const [site, n = '10000', runs = '3'] = process.argv.slice(2);
  if (!site || !/^\d+$/.test(n) || !/^\d+$/.test(runs)) {
    console.error('usage: node frontend-sdl/web/test/crowd-bench.mjs SITE_DIR [N] [RUNS]');
    process.exit(2);
  }
  try {
    for (const lod of [1, 0]) {
      for (let r = 0; r < Number(runs); r++) {
        console.log(`# lod=${lod} run ${r + 1}`);
        for (const line of await crowdFrame(path.resolve(site), Number(n), lod)) console.log(line);
      }
    }
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
