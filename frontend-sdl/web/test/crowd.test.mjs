// The crowd page (crowd.html) in headless Chromium: instanced drawing against the same crowd
// drawn instance by instance, the bench mode's lines, and the fallback's notice.
//
// Needs the site built into SINEW_SITE (default target/site) and the test models
// (`bash frontend-sdl/web/test/run.sh DIR` does both). Frames go to SINEW_WEB_TEST_OUT.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, openReady, benchResult } from './browser.mjs';
import { readPng, writePng, iou, coverage, diffImage } from './image.mjs';
import { prepareModels } from './models.mjs';
import { SITE, OUT } from './paths.mjs';

const W = 480;
const H = 360;
const T = { timeout: 120_000 };
const N = 16;

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(SITE, 'crowd.html')), `${SITE}/crowd.html missing: bash frontend-sdl/web/build.sh ${SITE}`);
  prepareModels(SITE);
  fs.mkdirSync(OUT, { recursive: true });
  server = await serve(SITE);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const query = (params) => new URLSearchParams(params).toString();

/** crowd.html with `params`, paused after one frame; its frame and its dataset. */
async function crowdFrame(params, name) {
  const page = await newPage(browser);
  const url = `${server.url}crowd.html?${query({ model: 'models/character.sinew', n: N, paused: '1', time: '0.4', width: W, height: H, hud: '0', ...params })}`;
  await openReady(page, url);
  const img = readPng(await page.locator('#view').screenshot());
  assert.equal(`${img.width}x${img.height}`, `${W}x${H}`);
  writePng(path.join(OUT, name), img);
  const data = await page.evaluate(() => ({ ...document.body.dataset }));
  return { page, img, data };
}

test(`crowd.html: ${N} instances drawn instanced give the frame drawn one by one (silhouette IoU >= 0.99)`, T, async () => {
  const a = await crowdFrame({}, 'crowd.instanced.png');
  const b = await crowdFrame({ instanced: '0' }, 'crowd.uniforms.png');
  assert.equal(a.data.mode, 'instanced', `headless Chromium should draw instanced (notice: ${a.data.notice})`);
  assert.equal(a.data.notice, undefined);
  assert.equal(b.data.mode, 'uniforms');
  // One instanced draw per part against one draw per part and instance.
  assert.equal(Number(b.data.draws), Number(a.data.draws) * N);
  for (const x of [a, b]) {
    checkClean(x.page);
    await x.page.context().close();
  }
  writePng(path.join(OUT, 'crowd.diff.png'), diffImage(a.img, b.img));
  const score = iou(a.img, b.img);
  console.log(`crowd instanced / one by one: silhouette IoU ${score.toFixed(4)}, coverage ${coverage(a.img).toFixed(3)} / ${coverage(b.img).toFixed(3)}`);
  // The frames hold the crowd: a share of the picture, not a speck or a wall.
  assert.ok(coverage(a.img) > 0.01 && coverage(a.img) < 0.9, `coverage ${coverage(a.img)}`);
  assert.ok(score >= 0.99, `IoU ${score} < 0.99 (see ${OUT}/crowd.diff.png)`);
});

test('crowd.html: forced or capped, the fallback says so once and splits the palette', T, async () => {
  // 76 vectors: 16 reserved leave 20 joints, fewer than the character's 22.
  const { page, data } = await crowdFrame({ instanced: '0', maxVectors: '76' }, 'crowd.capped.png');
  assert.equal(data.mode, 'uniforms');
  assert.match(data.notice, /^instanced drawing is off \(instanced=0\): each instance is drawn on its own with a uniform palette of 20 joints$/);
  const shown = await page.locator('#message').textContent();
  assert.equal(shown, data.notice);
  // The character's one mesh split into more parts than the uncapped page's.
  const parts = await page.evaluate(() => window.sinewCrowd.renderer.parts.map((p) => p.map.length));
  assert.ok(parts.length >= 2 && parts.every((j) => j <= 20), `parts' palettes: ${parts}`);
  assert.equal(Number(data.draws), parts.length * N);
  checkClean(page);
  await page.context().close();
});

/** The bench mode's two lines for `lod`, parsed. */
async function bench(n, lod) {
  const page = await newPage(browser);
  const resp = await page.goto(`${server.url}crowd.html?${query({ model: 'models/Fox.sinew', gltf: 'models/Fox.glb', n, lod, ms: 100 })}`);
  assert.ok(resp.ok());
  const result = await benchResult(page, 100_000);
  checkClean(page);
  await page.context().close();
  const lines = result.trim().split('\n');
  assert.equal(lines.length, 2, result);
  const s = lines[0].match(/^sinew-web crowd-frame Fox n (\d+) ms ([\d.]+) evaluated (\d+) draws (\d+)$/);
  const t = lines[1].match(/^three\.js crowd-frame Fox n (\d+) ms ([\d.]+) draws (\d+)$/);
  assert.ok(s, lines[0]);
  assert.ok(t, lines[1]);
  console.log(`crowd.html bench lod=${lod}:\n  ${lines.join('\n  ')}`);
  return {
    sinew: { n: Number(s[1]), ms: Number(s[2]), evaluated: Number(s[3]), draws: Number(s[4]) },
    three: { n: Number(t[1]), ms: Number(t[2]), draws: Number(t[3]) },
  };
}

test('crowd.html bench: lines in the issue\'s format, counts consistent with lod', T, async () => {
  const n = 64;
  const off = await bench(n, 0);
  const on = await bench(n, 1);
  for (const r of [off, on]) {
    assert.equal(r.sinew.n, n);
    assert.equal(r.three.n, n);
    assert.ok(r.sinew.ms > 0 && r.three.ms > 0);
    // Fox: one skinned mesh per clone for three.js; one instanced draw per part for sinew.
    assert.ok(r.three.draws > 0 && r.three.draws % n === 0, `three.js draws ${r.three.draws}`);
    assert.ok(r.sinew.draws >= 1 && r.sinew.draws < n, `sinew draws ${r.sinew.draws}`);
  }
  // Without levels of detail every instance is evaluated every frame; with them, at most all.
  assert.equal(off.sinew.evaluated, n);
  assert.ok(on.sinew.evaluated >= 1 && on.sinew.evaluated <= n, `evaluated ${on.sinew.evaluated}`);
});
