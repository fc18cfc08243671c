// Foot placement in the viewer (index.html) in headless Chromium: a humanoid (CesiumMan.glb,
// through the importer) stands on the runtime's ground, a step under its right leg and a slope
// under its left (planted at t = 0.9 s, its right foot lifted). The page's module has no foot
// placement: the "feet" button opens the model again in the full module (the clip and its time
// carried over) with the placement on, and the ankles are read back
// through the module's ABI (joint matrices, the ground's height and normal) and held to the
// ground within 5 mm. Its frame goes to SINEW_WEB_TEST_OUT (feet.png).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, openReady } from './browser.mjs';
import { readPng, writePng, coverage } from './image.mjs';
import { prepareModels } from './models.mjs';
import { SITE, OUT } from './paths.mjs';

const T = { timeout: 240_000 };
/** How far an ankle may sit from where the ground puts it: 5 mm (CesiumMan is in meters). */
const TOLERANCE = 0.005;

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(SITE, 'index.html')), `${SITE}/index.html missing: bash frontend-sdl/web/build.sh ${SITE}`);
  prepareModels(SITE);
  fs.mkdirSync(OUT, { recursive: true });
  server = await serve(SITE);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('feet: CesiumMan on the step and the slope, each ankle at its clip height over the ground within 5 mm', T, async () => {
  const page = await newPage(browser, { width: 640, height: 400 });
  const query = new URLSearchParams({ model: 'models/CesiumMan.glb', clip: 'clip0', time: 0.9, paused: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  const button = page.locator('#feet');
  assert.ok(await button.isVisible(), 'no feet button for a model with legs');
  assert.equal(await button.textContent(), 'feet: off');
  // The ankles (model space = the world here) and what the module's ground answers under them
  // (none in a module without foot placement).
  const read = () => page.evaluate(() => {
    const c = window.sinewViewer.character;
    const w = c.sinew.wasm;
    const m = c.jointMatrices();
    return {
      module: { feet: 'sinew_character_feet_setup' in w, graphs: c.sinew === window.sinewViewer.fullRuntime },
      weight: c.feetWeight,
      ankles: ['leg_joint_L_3', 'leg_joint_R_3'].map((name) => {
        const j = c.model.jointNames.indexOf(name);
        const [x, y, z] = [m[j * 16 + 12], m[j * 16 + 13], m[j * 16 + 14]];
        const ground = [0, 1, 2, 3].map((k) => (w.sinew_character_ground ? w.sinew_character_ground(c.id, x, z, k) : NaN));
        return { name, x, y, z, ground };
      }),
    };
  });
  const off = await read();
  assert.deepEqual(off.module, { feet: false, graphs: false }, 'the page starts on the base module, without foot placement');
  assert.ok(Number.isNaN(off.weight), 'without foot placement the weight is NaN');
  await button.click();
  await page.waitForFunction(() => document.getElementById('feet').textContent === 'feet: on' && document.body.dataset.state === 'ready');
  const on = await read();
  assert.deepEqual(on.module, { feet: true, graphs: true }, 'the button opened the model in the full module');
  const shot = readPng(await page.locator('#view').screenshot());
  writePng(path.join(OUT, 'feet.png'), shot);
  // Off again, playing: the weight ramps down over the blend time (a quarter second).
  const ramp = await page.evaluate(() => {
    const c = window.sinewViewer.character;
    c.feet(false);
    c.playing = true;
    c.advance(0.125).update();
    c.playing = false;
    return c.feetWeight;
  });
  checkClean(page);
  await page.context().close();
  assert.equal(on.weight, 1, 'paused, the button turns the placement on at once');
  assert.ok(coverage(shot) > 0.02, `the frame is nearly empty: coverage ${coverage(shot)}`);
  // One ankle on the flat step, the other on the slope.
  const normals = on.ankles.map((a) => a.ground[2]);
  assert.ok(normals.some((n) => n > 0.9999) && normals.some((n) => n < 0.99), `ground normals' y under the ankles: ${normals}`);
  for (const [i, a] of on.ankles.entries()) {
    const clip = off.ankles[i];
    // The ankle at its clip height above the ground, across the sole tilted by the ground's
    // slope (cos θ = the normal's y; 12° is within the 30° a foot tilts at most).
    const [height, , cos] = a.ground;
    const want = height + clip.y / cos;
    const error = a.y - want;
    const moved = Math.hypot(a.x - clip.x, a.z - clip.z);
    console.log(`${a.name}: ${a.y.toFixed(4)} over ground ${height.toFixed(4)} (normal y ${cos.toFixed(4)}), ` +
      `clip height ${clip.y.toFixed(4)}: ${(error * 1000).toFixed(2)} mm off; moved ${(moved * 1000).toFixed(2)} mm across`);
    assert.ok(Math.abs(error) <= TOLERANCE, `${a.name}: ${a.y} against ${want} (${height} + ${clip.y} / ${cos})`);
    assert.ok(moved <= TOLERANCE, `${a.name} moved ${moved} across`);
  }
  assert.ok(Math.abs(ramp - 0.5) < 1e-6, `half way through the ramp down the weight is ${ramp}`);
});

test('feet: feet=1 opens CesiumMan in the full module with the placement on', T, async () => {
  const page = await newPage(browser, { width: 320, height: 200 });
  const query = new URLSearchParams({ model: 'models/CesiumMan.glb', clip: 'clip0', time: 0.9, paused: '1', feet: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  const got = await page.evaluate(() => {
    const v = window.sinewViewer;
    return { feet: v.sinew.hasFeet, full: v.sinew === v.fullRuntime, weight: v.character.feetWeight, button: document.getElementById('feet').textContent };
  });
  checkClean(page);
  await page.context().close();
  assert.deepEqual(got, { feet: true, full: true, weight: 1, button: 'feet: on' });
});
