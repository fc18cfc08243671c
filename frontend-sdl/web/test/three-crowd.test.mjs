// The three.js crowd (three-crowd.html: js/three-crowd.js's InstancedMesh skinned from sinew's
// palette texture) in headless Chromium: against the same crowd drawn by three's own skinning
// (three-crowd.html?ref=1: a SkinnedMesh per instance posed from the palette read back on the
// CPU), and against sinew's WebGL viewer of the crowd (crowd.html), the same crowd, time and
// camera.
//
// Needs the site (`bash frontend-sdl/web/build.sh DIR`, SINEW_SITE) with its test models
// (`node frontend-sdl/web/test/models.mjs DIR`); `bash frontend-sdl/web/test/run.sh DIR` does
// all of it. Frames and diffs go to SINEW_WEB_TEST_OUT (default: web-test-out beside the site).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, openReady } from './browser.mjs';
import { readPng, writePng, iou, diffImage, coverage, cornersAreClear } from './image.mjs';
import { prepareModels } from './models.mjs';
import { SITE, OUT } from './paths.mjs';

const W = 480;
const H = 360;
const T = { timeout: 240_000 };
/** The crowd both pages draw: 36 Fox, levels of detail on, one frame of 0.75 s (crowd.html's
 * paused frame). */
const CROWD = { model: 'models/Fox.sinew', n: '36', time: '0.75' };
/** A larger crowd (four texture rows) in 45 frames: levels of detail hold some instances'
 * poses, and the palette texture is uploaded whole once, then by the rows each frame wrote. */
const STEPPED = { ...CROWD, n: '100', frames: '45' };

let server;
let browser;
const results = {};

before(async () => {
  assert.ok(fs.existsSync(path.join(SITE, 'three-crowd.html')), `${SITE}/three-crowd.html missing: bash frontend-sdl/web/build.sh ${SITE}`);
  prepareModels(SITE);
  fs.mkdirSync(OUT, { recursive: true });
  server = await serve(SITE);
  browser = await launch();
});

after(async () => {
  fs.writeFileSync(path.join(OUT, 'three-crowd.json'), JSON.stringify(results, null, 2) + '\n');
  await browser?.close();
  await server?.close();
});

/** A still frame of `file` with `params` (paused, W × H), written to OUT/`name`; the page and
 * what it exposes as `hook` (a window property) come back too. */
async function still(file, params, name, hook) {
  const page = await newPage(browser);
  const url = `${server.url}${file}?${new URLSearchParams({ paused: '1', width: W, height: H, ...params })}`;
  await openReady(page, url);
  checkClean(page);
  const img = readPng(await page.locator('#view').screenshot());
  assert.equal(`${img.width}x${img.height}`, `${W}x${H}`, `${file}: #view is ${img.width}x${img.height}, asked ${W}x${H}`);
  writePng(path.join(OUT, name), img);
  const exposed = hook ? await page.evaluate((h) => JSON.parse(JSON.stringify(window[h] ?? null)), hook) : null;
  await page.close();
  return { img, exposed };
}

/** The IoU of the two frames' silhouettes, raw and with the masks opened by a 3×3 square (the
 * floor grid's thin lines dropped); the diff image and the figures go to OUT. */
function compare(label, a, b) {
  const raw = iou(a, b);
  const model = iou(a, b, { opening: 1 });
  writePng(path.join(OUT, `${label}.diff.png`), diffImage(a, b));
  results[label] = { raw, model, coverage: [coverage(a), coverage(b)] };
  console.log(`${label}: silhouette IoU raw ${raw.toFixed(4)}, model ${model.toFixed(4)}, ` +
    `coverage ${coverage(a).toFixed(3)} / ${coverage(b).toFixed(3)}`);
  return { raw, model };
}

test('three-crowd.html: the InstancedMesh skinned from the palette texture is three\'s own skinning of the same palette', T, async () => {
  const { img, exposed } = await still('three-crowd.html', STEPPED, 'three-crowd-stepped.png', 'sinewThreeCrowd');
  const { img: ref } = await still('three-crowd.html', { ...STEPPED, ref: '1' }, 'three-crowd-ref.png');
  assert.ok(cornersAreClear(img), 'the frame\'s corners are not the clear color');
  // A crowd, not a speck: the instances cover a fair part of the frame.
  assert.ok(coverage(img) > 0.02, `coverage ${coverage(img)}`);
  const { evaluated, shared, held } = exposed.stats;
  assert.equal(evaluated + shared + held, Number(STEPPED.n), `stats ${JSON.stringify(exposed.stats)}`);
  // Pose sharing and levels of detail were at work: fewer evaluations than instances.
  assert.ok(evaluated < Number(STEPPED.n), `stats ${JSON.stringify(exposed.stats)}`);
  // The same pixels within 8-bit rounding: the raw silhouettes (grid included) agree.
  const { raw } = compare('three-crowd-vs-skinned-meshes', img, ref);
  assert.ok(raw >= 0.995, `three-crowd.html against ?ref=1: raw IoU ${raw.toFixed(4)} < 0.995`);
});

test('three-crowd.html: the frame matches sinew\'s WebGL crowd (crowd.html) for the same crowd, time and camera', T, async () => {
  const { img } = await still('three-crowd.html', CROWD, 'three-crowd.png');
  const { img: viewer } = await still('crowd.html', { ...CROWD, hud: '0' }, 'three-crowd-viewer.png');
  assert.ok(cornersAreClear(viewer), 'crowd.html\'s corners are not the clear color');
  const { model } = compare('three-crowd-vs-crowd-html', img, viewer);
  assert.ok(model >= 0.97, `three-crowd.html against crowd.html: IoU ${model.toFixed(4)} < 0.97`);
});
