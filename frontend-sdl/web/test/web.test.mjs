// The browser build in headless Chromium: the WebGL 1 viewer (index.html) against the desktop
// viewer's frames and the CLI's palette, its error and drag-and-drop paths, the phone-sized
// uniform budget, the three.js page (three.html) and the crowd benchmark (bench.html).
//
// Needs: the site built into SINEW_SITE (default target/site; `bash frontend-sdl/web/build.sh
// DIR`), target/debug/sinew (`cargo build -p sinew-frontend`), chromium, xvfb-run (or a
// DISPLAY). `bash frontend-sdl/web/test/run.sh DIR` does all of it. Frames, silhouette diffs and
// IoU values go to SINEW_WEB_TEST_OUT (default: web-test-out beside the site).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, waitForState, openReady, benchResult } from './browser.mjs';
import { desktopFrame, dump, nativePalette } from './desktop.mjs';
import { readPng, writePng, iou, diffImage, coverage } from './image.mjs';
import { prepareModels } from './models.mjs';
import { SITE, OUT } from './paths.mjs';

const W = 480;
const H = 360;
const T = { timeout: 240_000 };

let server;
let browser;
let models;
const results = {};

before(async () => {
  // (three.html and bench.html are checked by their own tests.)
  assert.ok(fs.existsSync(path.join(SITE, 'index.html')), `${SITE}/index.html missing: bash frontend-sdl/web/build.sh ${SITE}`);
  models = prepareModels(SITE);
  fs.mkdirSync(OUT, { recursive: true });
  server = await serve(SITE);
  browser = await launch();
});

after(async () => {
  fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  await browser?.close();
  await server?.close();
});

const query = (params) => new URLSearchParams(params).toString();

/** A still frame of a page (index.html or three.html), checked for size; the page stays open
 * for more questions. */
async function stillFrame(file, params, name) {
  const page = await newPage(browser);
  const url = `${server.url}${file}?${query({ paused: '1', width: W, height: H, ...params })}`;
  await openReady(page, url);
  // The viewer draws on canvas#view; a page without one is shot through its only canvas.
  const canvas = (await page.locator('#view').count()) ? page.locator('#view') : page.locator('canvas');
  const img = readPng(await canvas.screenshot());
  assert.equal(`${img.width}x${img.height}`, `${W}x${H}`, `${file}: #view is ${img.width}x${img.height}, asked ${W}x${H}`);
  if (name) writePng(path.join(OUT, name), img);
  return { page, img };
}

const viewerFrame = (params, name) => stillFrame('index.html', { hud: '0', ...params }, name);

/** Writes the silhouette diff, records and prints the IoU of the raw silhouettes (every pixel
 * off the clear color: the model and the ground grid) and of the model's (the masks opened by
 * a 3x3 square, which drops the grid's one- and two-pixel lines). Returns the one `use` names:
 * 'model' between different GL implementations (Mesa's lines and SwiftShader's need not cover
 * the same pixels: a 1-pixel shift of a desktop frame has a raw IoU near 0.7, its model IoU
 * 0.89 to 0.95), 'raw' between two frames of the same page. */
function compare(label, a, b, { use = 'model', exclude, background } = {}) {
  const raw = iou(a, b, { exclude, background });
  const model = iou(a, b, { exclude, background, opening: 1 });
  writePng(path.join(OUT, `${label}.diff.png`), diffImage(a, b));
  results[label] = { raw, model, used: use, coverage: [coverage(a), coverage(b)] };
  console.log(`${label}: silhouette IoU ${use === 'model' ? model.toFixed(4) : raw.toFixed(4)} (${use}); ` +
    `raw ${raw.toFixed(4)}, model ${model.toFixed(4)}, coverage ${coverage(a).toFixed(3)} / ${coverage(b).toFixed(3)}`);
  return use === 'model' ? model : raw;
}
const used = (label) => results[label][results[label].used];

/** The f32 bits of a palette: from the page (a Float32Array) or from `sinew dump` (numbers
 * printed shortest round-trip, so Math.fround recovers each f32 exactly). */
const pageBits = (page, expr) => page.evaluate((e) => {
  // eslint-disable-next-line no-new-func
  const p = new Function(`return ${e}`)();
  if (!(p instanceof Float32Array)) throw new Error(`${e} is ${Object.prototype.toString.call(p)}, not a Float32Array`);
  return Array.from(new Uint32Array(Float32Array.from(p).buffer));
}, expr);
const dumpBits = (matrices) => Array.from(new Uint32Array(Float32Array.from(matrices.flat(2), Math.fround).buffer));
const asFloat = (bits) => new Float32Array(new Uint32Array([bits]).buffer)[0];

function assertSameBits(got, want, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length / 16} matrices, expected ${want.length / 16}`);
  const bad = [];
  for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) bad.push(i);
  if (bad.length) {
    const show = bad.slice(0, 5).map((i) => `[joint ${i >> 4}, ${i & 15}] ${asFloat(got[i])} != ${asFloat(want[i])}`);
    assert.fail(`${what}: ${bad.length} of ${want.length} floats differ in their bits, e.g.\n  ${show.join('\n  ')}`);
  }
}

test('headless Chromium gives a WebGL 1 context', T, async () => {
  const page = await newPage(browser);
  const gl = await page.evaluate(() => {
    const c = document.createElement('canvas').getContext('webgl');
    if (!c) return null;
    const info = c.getExtension('WEBGL_debug_renderer_info');
    return {
      version: c.getParameter(c.VERSION),
      renderer: info ? c.getParameter(info.UNMASKED_RENDERER_WEBGL) : c.getParameter(c.RENDERER),
      maxVertexUniformVectors: c.getParameter(c.MAX_VERTEX_UNIFORM_VECTORS),
    };
  });
  await page.context().close();
  assert.ok(gl, "canvas.getContext('webgl') returned null: see LAUNCH_ARGS in browser.mjs");
  console.log(`WebGL: ${gl.version}; ${gl.renderer}; MAX_VERTEX_UNIFORM_VECTORS ${gl.maxVertexUniformVectors}`);
  results.webgl = gl;
  assert.match(gl.version, /^WebGL 1\.0/);
  assert.ok(gl.maxVertexUniformVectors >= 128, `MAX_VERTEX_UNIFORM_VECTORS ${gl.maxVertexUniformVectors}`);
});

const FRAMES = [
  { name: 'character', model: 'character.sinew', clip: 'walk', time: 0.4 },
  { name: 'CesiumMan', model: 'CesiumMan.glb', clip: 'clip0', time: 0.5 },
  { name: 'Fox', model: 'Fox.sinew', clip: 'Run', time: 0.3 },
  // Morph targets: the viewer opens the model in the full module, which evaluates them.
  { name: 'AnimatedMorphCube', model: 'AnimatedMorphCube.glb', clip: 'Square', time: 1.3, morphs: true },
];

for (const f of FRAMES) {
  test(`viewer frame matches the desktop's: ${f.name} ${f.clip} t=${f.time} (silhouette IoU >= 0.97)`, T, async () => {
    const desk = await desktopFrame({ model: path.join(models, f.model), clip: f.clip, time: f.time, width: W, height: H,
      png: path.join(OUT, `${f.name}.desktop.png`) });
    const { page, img } = await viewerFrame({ model: `models/${f.model}`, clip: f.clip, time: f.time }, `${f.name}.web.png`);
    const morphs = await page.evaluate(() => window.sinewViewer.sinew.hasMorphs);
    checkClean(page);
    await page.context().close();
    assert.ok(compare(f.name, img, desk) >= 0.97, `${f.name}: IoU ${used(f.name)} < 0.97 (see ${OUT})`);
    assert.equal(morphs, Boolean(f.morphs), 'the module that drew it evaluates morph targets only for a model with them');
  });
}

for (const simd of ['1', '0']) {
  const module = simd === '1' ? 'sinew_web.wasm (simd128)' : 'sinew_web_scalar.wasm';
  test(`viewer palette from ${module} equals the native runtime's bits: Fox Run t=0.3`, T, async () => {
    const want = dumpBits([await nativePalette(path.join(models, 'Fox.sinew'), 'Run', 0.3)]);
    const { page } = await viewerFrame({ model: 'models/Fox.sinew', clip: 'Run', time: 0.3, simd });
    const got = await pageBits(page, 'window.sinewViewer.palette(0)');
    checkClean(page);
    await page.context().close();
    assertSameBits(got, want, `sinewViewer.palette(0) from ${module}`);
    console.log(`palette from ${module}: ${want.length / 16} matrices, the native bits`);
  });
}

test('viewer palette is the pose `sinew dump` samples (its joint_matrices within 1e-6 of the model size): Fox Run t=0.3', T, async () => {
  // The viewer plays the clip through sampling caches, the command line samples it directly:
  // the same keys and interpolation, rounded in another order.
  const d = await dump(path.join(models, 'Fox.sinew'), 'Run', 0.3);
  assert.ok(Array.isArray(d.joint_matrices) && d.joint_matrices.length > 0, 'sinew dump printed no joint_matrices');
  const want = d.joint_matrices.flat(2);
  const { page } = await viewerFrame({ model: 'models/Fox.sinew', clip: 'Run', time: 0.3 });
  const got = await page.evaluate(() => Array.from(window.sinewViewer.palette(0)));
  const radius = await page.evaluate(() => window.sinewViewer.model.bounds.radius);
  checkClean(page);
  await page.context().close();
  assert.equal(got.length, want.length);
  const worst = Math.max(...got.map((g, i) => Math.abs(g - want[i])));
  console.log(`palette against sinew dump: largest difference ${worst.toExponential(2)} (model radius ${radius.toFixed(1)})`);
  assert.ok(worst <= 1e-6 * radius, `largest difference ${worst} > 1e-6 x radius ${radius}`);
});

test('the viewer with its controls, as a page shows it: CesiumMan.glb through the importer (viewer.png, the README screenshot)', T, async () => {
  const [w, h] = [640, 400];
  const page = await newPage(browser, { width: w, height: h });
  await openReady(page, `${server.url}index.html?${query({ model: 'models/CesiumMan.glb', clip: 'clip0', time: 0.5, paused: '1' })}`);
  const shot = readPng(await page.screenshot());
  writePng(path.join(OUT, 'viewer.png'), shot);
  const text = await page.locator('#message').textContent();
  checkClean(page);
  await page.context().close();
  assert.match(text, /^loaded CesiumMan\.glb \(22 joints, 1 clips, 1 mesh parts\)$/);
  assert.ok(coverage(shot) > 0.05, `the frame is nearly empty: coverage ${coverage(shot)}`);
});

test('DQS skinning opens the model in the full module, which computes its dual-quaternion rows', T, async () => {
  const page = await newPage(browser);
  await openReady(page, `${server.url}index.html?${query({ model: 'models/character.sinew', paused: '1' })}`);
  const run = await page.evaluate(async () => {
    const v = window.sinewViewer;
    const before = [v.sinew.hasDqs, v.character.partData(0, 0, 1)?.length ?? 0];
    await v.toggleMethod();
    const rows = v.character.partData(0, 0, 1)?.length ?? 0;
    return { before, after: v.sinew.hasDqs, method: v.method, rows, joints: v.model.meshes[0].parts[0].joints, program: Boolean(v.renderer.dqs) };
  });
  checkClean(page);
  await page.context().close();
  assert.deepEqual(run.before, [false, 0], 'the base module computes no dual-quaternion rows');
  assert.deepEqual([run.after, run.method, run.program], [true, 'dqs', true]);
  assert.ok(run.joints > 0);
  assert.equal(run.rows, run.joints * 16, 'a dual quaternion and a scale (16 floats) per palette joint');
});

test("the character's graph runs in the graphs' module and follows its parameters", T, async () => {
  const page = await newPage(browser);
  await openReady(page, `${server.url}index.html?${query({ model: 'models/character.sinew', paused: '1' })}`);
  const run = await page.evaluate(async () => {
    const v = window.sinewViewer;
    await v.useGraph(0);
    const c = v.character;
    const before = v.model.graphs[0].states[c.graphState];
    c.playing = true;
    c.set('speed', 2).advance(0.5);
    return { before, after: v.model.graphs[0].states[c.graphState], speed: c.parameter(0), state: document.body.dataset.state };
  });
  checkClean(page);
  await page.context().close();
  console.log(`graph: ${run.before} -> ${run.after} at speed ${run.speed}`);
  assert.equal(run.state, 'ready');
  assert.deepEqual([run.before, run.after, run.speed], ['walk', 'stride', 2]);
});

test('a bad file: the state and #message give one error line, the previous model stays drawn', T, async () => {
  // With its HUD (hud=0 hides #message with the rest): as a user drops a file.
  const { page, img: before } = await stillFrame('index.html', { model: 'models/Fox.sinew', clip: 'Run', time: 0.3 },
    'bad-file.before.png');
  const view = await page.locator('#view').boundingBox();
  // The HUD (with #message) sits over the canvas: its box, before and after, is left out.
  const hudBox = async () => {
    const b = await page.locator('#hud').boundingBox();
    return b && { x: Math.floor(b.x - view.x), y: Math.floor(b.y - view.y), width: Math.ceil(b.width) + 2, height: Math.ceil(b.height) + 2 };
  };
  const exclude = [await hudBox()];
  const bytes = [...crypto.randomBytes(64)];
  const res = await page.evaluate(async (b) => {
    await window.sinewViewer.loadFile('bad.sinew', new Uint8Array(b));
    return { resolved: true };
  }, bytes).catch((e) => ({ resolved: false, e: e.message }));
  assert.ok(res.resolved, `loadFile rejected (it should resolve and report on the page): ${res.e}; bytes ${Buffer.from(bytes).toString('hex')}`);
  const state = await page.evaluate(() => document.body.dataset.state);
  assert.match(state, /^error: \S/, `dataset.state after a bad file: ${JSON.stringify(state)}`);
  assert.ok(!state.includes('\n'), `dataset.state is more than one line: ${JSON.stringify(state)}`);
  const message = page.locator('#message');
  assert.ok(await message.isVisible(), '#message is not visible');
  const text = (await message.innerText()).trim();
  assert.ok(text.length > 0 && !text.includes('\n'), `#message should show one line, shows ${JSON.stringify(text)}`);
  assert.ok(text.includes(state.slice('error: '.length)), `#message ${JSON.stringify(text)} lacks the state's ${JSON.stringify(state)}`);
  const clips = await page.evaluate(() => window.sinewViewer.clipNames());
  assert.deepEqual([...clips].sort(), ['Run', 'Survey', 'Walk'], 'the previous model (Fox) is no longer loaded');
  exclude.push(await hudBox());
  const afterImg = readPng(await page.locator('#view').screenshot());
  writePng(path.join(OUT, 'bad-file.after.png'), afterImg);
  checkClean(page, (p) => p.startsWith('console.error:') && p.includes(state.slice('error: '.length)));
  await page.context().close();
  assert.ok(compare('bad-file', afterImg, before, { exclude: exclude.filter(Boolean), use: 'raw' }) >= 0.99,
    `the frame after the bad file differs from the one before (IoU ${used('bad-file')})`);
});

test('drag-and-drop of Fox.sinew onto #view loads it', T, async () => {
  const { page } = await viewerFrame({ model: 'models/character.sinew', clip: 'walk', time: 0.4 });
  assert.deepEqual([...(await page.evaluate(() => window.sinewViewer.clipNames()))].sort(), ['run', 'walk']);
  await page.evaluate(async () => {
    const bytes = await (await fetch('models/Fox.sinew')).arrayBuffer();
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'Fox.sinew', { type: 'application/octet-stream' }));
    const view = document.getElementById('view');
    document.body.dataset.state = 'dropping';
    for (const type of ['dragenter', 'dragover', 'drop']) {
      view.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  });
  const state = await waitForState(page, 30_000);
  assert.equal(state, 'ready', 'dataset.state after the drop');
  const clips = await page.evaluate(() => window.sinewViewer.clipNames());
  checkClean(page);
  await page.context().close();
  assert.deepEqual([...clips].sort(), ['Run', 'Survey', 'Walk'], `clipNames() after the drop: ${JSON.stringify(clips)}`);
});

test('128 vertex uniform vectors (a phone): pab_crossarms splits into parts of <= 28 joints, frame matches the desktop --palette 28', T, async () => {
  const desk = await desktopFrame({ model: path.join(models, 'pab_crossarms.glb'), clip: 'crossarms', time: 2.0, width: W, height: H,
    palette: 28, png: path.join(OUT, 'crossarms-128.desktop.png') });
  const { page, img } = await viewerFrame({ model: 'models/pab_crossarms.glb', clip: 'crossarms', time: 2.0, maxVectors: 128 },
    'crossarms-128.web.png');
  const ds = await page.evaluate(() => ({ joints: document.body.dataset.joints, parts: document.body.dataset.parts }));
  checkClean(page);
  await page.context().close();
  console.log(`maxVectors=128: ${ds.parts} parts, ${ds.joints} joints per palette`);
  assert.ok(Number(ds.joints) > 0 && Number(ds.joints) <= 28, `dataset.joints = ${JSON.stringify(ds.joints)}, want 1..28`);
  assert.ok(Number(ds.parts) > 1, `dataset.parts = ${JSON.stringify(ds.parts)}, want > 1 (67 joints in one part)`);
  assert.ok(compare('crossarms-128', img, desk) >= 0.97, `IoU ${used('crossarms-128')} < 0.97 (see ${OUT})`);
});

test('three.html: the same palette bits and silhouette as the viewer (Fox Run t=0.3)', T, async () => {
  const params = { model: 'models/Fox.sinew', clip: 'Run', time: 0.3 };
  const v = await viewerFrame(params, 'three-vs-viewer.web.png');
  const viewerBits = await pageBits(v.page, 'window.sinewViewer.palette(0)');
  checkClean(v.page);
  await v.page.context().close();
  const t = await stillFrame('three.html', params, 'three-vs-viewer.three.png');
  const threeBits = await pageBits(t.page, 'window.sinewThree.palette(0)');
  checkClean(t.page);
  await t.page.context().close();
  assertSameBits(threeBits, viewerBits, 'sinewThree.palette(0) against sinewViewer.palette(0)');
  // three.js clears to its own background: each frame's corner pixel is its background.
  assert.ok(compare('three-vs-viewer', t.img, v.img, { background: 'corner' }) >= 0.97, `IoU ${used('three-vs-viewer')} < 0.97 (see ${OUT})`);
});

test('bench.html smoke: Fox.sinew n=50 reports both lines', T, async () => {
  const page = await newPage(browser);
  const resp = await page.goto(`${server.url}bench.html?${query({ model: 'models/Fox.sinew', n: 50 })}`);
  assert.ok(resp.ok(), `bench.html: HTTP ${resp.status()}`);
  const result = await benchResult(page, 120_000);
  checkClean(page);
  await page.context().close();
  console.log(result);
  const lines = result.trim().split('\n');
  assert.equal(lines.length, 2, `dataset.result: ${JSON.stringify(result)}`);
  ['sinew-web', 'three.js'].forEach((who, i) => {
    const m = lines[i].match(/^(\S+) crowd (\S+) (\S+) (\d+)$/);
    assert.ok(m, `line ${i + 1}: ${JSON.stringify(lines[i])}, want "${who} crowd NAME NS N"`);
    assert.equal(m[1], who);
    assert.ok(Number.isFinite(Number(m[3])) && Number(m[3]) > 0, `ns per character: ${m[3]}`);
    assert.equal(m[4], '50');
  });
  results.bench = lines;
});
