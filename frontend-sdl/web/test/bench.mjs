// The crowd benchmark in headless Chromium: serves SITE, opens
// bench.html?model=models/Fox.sinew&n=N and prints its two lines
// ("sinew-web crowd NAME NS_PER_CHARACTER N" and "three.js crowd ...").
//
//   node frontend-sdl/web/test/bench.mjs SITE [N]      (N: characters, default 1000)
//
// With --springs, the spring bones benchmark instead: springs-bench.html with the VRM
// conformance chain (models/springbone_collider_capsule_x0p02_r0p1.sinew and .vrm) and N
// characters (default 200), printing "sinew-web springs NAME NS_PER_JOINT_STEP N JOINTS" and
// "three-vrm springs ...":
//
//   node frontend-sdl/web/test/bench.mjs SITE --springs [N]
//
// SITE is a built site (bash frontend-sdl/web/build.sh SITE); the model is copied or baked
// into SITE/models first (needs target/debug/sinew for the bake).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, benchResult } from './browser.mjs';
import { prepareModels } from './models.mjs';

export async function bench(site, n = 1000, model = 'models/Fox.sinew', html = 'bench.html') {
  prepareModels(site);
  const server = await serve(site);
  const browser = await launch();
  try {
    const page = await newPage(browser);
    const resp = await page.goto(`${server.url}${html}?${new URLSearchParams({ model, n })}`);
    if (!resp.ok()) throw new Error(`${html}: HTTP ${resp.status()}`);
    const result = await benchResult(page, 600_000);
    checkClean(page);
    return result.trim().split('\n');
  } finally {
    await browser.close();
    await server.close();
  }
}

// Run as a command (not when `node --test` loads every module of this folder).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && !process.env.NODE_TEST_CONTEXT) {
  const args = process.argv.slice(2);
  const springs = args.includes('--springs');
  const [site, n = springs ? '200' : '1000'] = args.filter((a) => a !== '--springs');
  if (!site || !/^\d+$/.test(n)) {
    console.error('usage: node frontend-sdl/web/test/bench.mjs SITE_DIR [--springs] [N]');
    process.exit(2);
  }
  const run = springs
    ? [Number(n), 'models/springbone_collider_capsule_x0p02_r0p1.sinew', 'springs-bench.html']
    : [Number(n)];
  try {
    for (const line of await bench(path.resolve(site), ...run)) console.log(line);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
