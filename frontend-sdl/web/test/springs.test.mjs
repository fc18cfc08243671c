// Spring bones in headless Chromium. The viewer (index.html?springs=1) opens a VRM model with
// spring bones (the VRM 1.0 conformance chain falling onto a capsule, baked) in the full
// module, and its character is moved on the scripted world path (js/world-path.js) for two
// seconds at 60 Hz: every joint's position after every step must be the bits the native runtime
// gives for the same placements (examples/springs.rs: the same Rust, built for the host; the
// placements go to both as the same f32 numbers). The springs button (and the S key) must
// turn them off and on again, changing the pose. With colliders=1 the viewer draws the spring
// colliders (the O key hides and shows them): the lines `colliderLines()` reads must be the
// native runtime's bits and lie on the capsule where the native file's definition and the
// page's joint matrices put it, and the frame must show their color only while they are on.
// The springs benchmark runs with a few characters and must write its two lines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve } from './server.mjs';
import { launch, newPage, checkClean, openReady, benchResult } from './browser.mjs';
import { prepareModels } from './models.mjs';
import { REPO, SITE, OUT } from './paths.mjs';
import { readPng, writePng } from './image.mjs';
import { scriptedWorld } from '../js/world-path.js';

const T = { timeout: 240_000 };
/** The runtime's spring bones built natively (frontend-sdl/web/examples/springs.rs). */
const SPRINGS = process.env.SINEW_SPRINGS_BIN || path.join(REPO, 'target/debug/examples/springs');
const NAME = 'springbone_collider_capsule_x0p02_r0p1';
/** Steps after the reset: two seconds at 60 Hz. */
const STEPS = 120;
/** The path: a sway of 0.4 m (0.3 × the model's 1.36 m) and turns of up to 0.6 rad. */
const [AMPLITUDE, TURN] = [0.4, 0.6];

let server;
let browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(SITE, 'index.html')), `${SITE}/index.html missing: bash frontend-sdl/web/build.sh ${SITE}`);
  assert.ok(fs.existsSync(SPRINGS), `${SPRINGS} missing: cargo build -p sinew-web --example springs`);
  prepareModels(SITE);
  fs.mkdirSync(OUT, { recursive: true });
  server = await serve(SITE);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The placements of steps 0 … STEPS, as `[tx, ty, tz, qx, qy, qz, qw, scale]` f32 values. */
function placements() {
  return Array.from({ length: STEPS + 1 }, (_, k) => {
    const w = scriptedWorld(k / 60, AMPLITUDE, TURN);
    return [...w.translation, ...w.rotation, 1].map(Math.fround);
  });
}

/** The f32 bits of numbers that are f32 values. */
function bits(values) {
  return new Uint32Array(Float32Array.from(values).buffer);
}

test(`springs: the full module's joints equal the native runtime's bits over ${STEPS} steps on a moving world (${NAME})`, T, async () => {
  const worlds = placements();
  const file = path.join(OUT, 'springs-worlds.txt');
  fs.writeFileSync(file, `${worlds.map((w) => w.join(' ')).join('\n')}\n`);
  const native = JSON.parse(execFileSync(SPRINGS, [path.join(SITE, 'models', `${NAME}.sinew`), file], { encoding: 'utf8' }));

  const page = await newPage(browser, { width: 480, height: 320 });
  const query = new URLSearchParams({ model: `models/${NAME}.sinew`, paused: '1', springs: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  // Paused, the viewer advances nothing itself: the steps below are the only ones.
  const got = await page.evaluate((worlds) => {
    const v = window.sinewViewer;
    const c = v.character;
    const setUp = { full: v.sinew === v.fullRuntime, springs: v.hasSprings, button: document.getElementById('springs').textContent };
    c.playing = true;
    const steps = [];
    let contacts = 0;
    worlds.forEach((w, k) => {
      c.setWorld(w.slice(0, 3), w.slice(3, 7), w[7]);
      if (k === 0) c.springs(true, true);
      else c.advance(1 / 60);
      c.update(0);
      contacts += c.springFrame.contacts;
      const m = c.jointMatrices();
      steps.push(Array.from({ length: c.model.joints }, (_, j) => [m[j * 16 + 12], m[j * 16 + 13], m[j * 16 + 14]]).flat());
    });
    c.playing = false;
    return { setUp, steps, contacts, frame: c.springFrame, joints: c.springJoints() };
  }, worlds);
  checkClean(page);
  await page.context().close();

  assert.deepEqual(got.setUp, { full: true, springs: true, button: 'springs: on' }, 'springs=1 opens the model in the full module, its springs on');
  assert.equal(got.frame.joints, 3, 'the chain has three swaying joints');
  assert.equal(got.frame.steps, 1, 'one step per 1/60 s');
  assert.equal(got.joints.length, 3);
  assert.equal(got.steps.length, native.steps.length);
  // The tails swing: the last spring joint's child moves away from where the path alone carries it.
  const tip = got.joints[2].child >= 0 ? got.joints[2].child : got.joints[2].joint;
  const swing = Math.max(...got.steps.map((s) => Math.hypot(...[0, 1, 2].map((a) => s[tip * 3 + a] - got.steps[0][tip * 3 + a]))));
  assert.ok(swing > 0.01, `the chain's tip moved at most ${swing} in model space`);
  got.steps.forEach((s, k) => {
    const [a, b] = [bits(s), bits(native.steps[k])];
    const differ = a.findIndex((x, i) => x !== b[i]);
    assert.ok(a.length === b.length && differ < 0, `step ${k}: float ${differ} is ${s[differ]} in the page, ${native.steps[k][differ]} natively`);
  });
  console.log(`springs: ${STEPS} steps, ${got.steps[0].length / 3} joints each, the native bits; tip swung up to ${swing.toFixed(3)} m; ${got.contacts} contacts`);
});

test('springs: the button and the S key turn the spring bones off and on, and the pose changes with them', T, async () => {
  const page = await newPage(browser, { width: 480, height: 320 });
  const query = new URLSearchParams({ model: `models/${NAME}.sinew`, paused: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  // Paused, springs that are on swing on with the page's clock: the clock is stopped here (speed
  // 0) so that the poses read below are those of the updates this test runs.
  await page.evaluate(() => { window.sinewViewer.speed = 0; });
  const button = page.locator('#springs');
  assert.equal(await button.textContent(), 'springs: off', 'the base module has no spring bones');
  assert.equal(await page.evaluate(() => window.sinewViewer.sinew.hasSprings), false);
  await button.click();
  await page.waitForFunction(() => document.getElementById('springs').textContent === 'springs: on' && document.body.dataset.state === 'ready');
  // Swing the chain: a second on the path, then the spring joints' positions.
  const pose = () => page.evaluate(() => {
    const c = window.sinewViewer.character;
    const m = c.jointMatrices();
    return c.springJoints().flatMap(({ joint }) => [m[joint * 16 + 12], m[joint * 16 + 13], m[joint * 16 + 14]]);
  });
  const swung = await page.evaluate(async ({ amplitude, turn }) => {
    const { scriptedWorld } = await import('./world-path.js');
    const c = window.sinewViewer.character;
    c.playing = true;
    for (let k = 1; k <= 60; k++) {
      const w = scriptedWorld(k / 60, amplitude, turn);
      c.setWorld(w.translation, w.rotation).advance(1 / 60).update(0);
    }
    c.playing = false;
    return { full: window.sinewViewer.sinew.hasSprings, frame: c.springFrame };
  }, { amplitude: AMPLITUDE, turn: TURN });
  assert.equal(swung.full, true, 'the button opened the model in the full module');
  assert.equal(swung.frame.on, true);
  const on = await pose();
  await button.click();
  await page.waitForFunction(() => document.getElementById('springs').textContent === 'springs: off');
  const off = await pose();
  const frameOff = await page.evaluate(() => window.sinewViewer.character.springFrame);
  await page.keyboard.press('s');
  await page.waitForFunction(() => document.getElementById('springs').textContent === 'springs: on');
  const again = await pose();
  checkClean(page);
  await page.context().close();
  assert.equal(frameOff.on, false);
  const moved = Math.max(...on.map((x, i) => Math.abs(x - off[i])));
  assert.ok(moved > 0.005, `turning the springs off moved the spring joints by at most ${moved}`);
  // Switched on again the springs start at rest in the pose: the pose with them off (the path
  // is held, so the reset's pose is the animated one).
  const rest = Math.max(...again.map((x, i) => Math.abs(x - off[i])));
  assert.ok(rest < 1e-6, `on again, at rest: ${rest} from the pose without springs`);
});

test('springs: paused, the clip holds and the spring bones swing on with the page clock', T, async () => {
  const page = await newPage(browser, { width: 480, height: 320 });
  const query = new URLSearchParams({ model: `models/${NAME}.sinew`, paused: '1', springs: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  const state = () => page.evaluate(() => {
    const v = window.sinewViewer;
    const c = v.character;
    const m = c.jointMatrices();
    const tip = c.springJoints().at(-1).joint;
    return { playing: v.playing, time: c.time, tip: [m[tip * 16 + 12], m[tip * 16 + 13], m[tip * 16 + 14]] };
  });
  const before = await state();
  // The conformance chain starts level and falls under gravity: a few frames of the page's clock.
  await page.waitForFunction(() => window.sinewViewer.character.springFrame.steps > 0);
  await page.waitForTimeout(300);
  const after = await state();
  checkClean(page);
  await page.context().close();
  assert.equal(before.playing, false, 'paused=1 opens paused');
  assert.equal(after.time, before.time, 'the clip holds');
  const moved = Math.max(...after.tip.map((x, i) => Math.abs(x - before.tip[i])));
  assert.ok(moved > 1e-3, `the chain's last spring joint moved by ${moved} while paused`);
});

test('springs bench: both result lines, positive figures (16 characters)', T, async () => {
  prepareModels(SITE);
  const page = await newPage(browser);
  const resp = await page.goto(`${server.url}springs-bench.html?${new URLSearchParams({ model: `models/${NAME}.sinew`, n: 16, rounds: 1, ms: 200 })}`);
  assert.ok(resp.ok(), `springs-bench.html: HTTP ${resp.status()}`);
  const lines = (await benchResult(page, 120_000)).trim().split('\n');
  checkClean(page);
  await page.context().close();
  assert.equal(lines.length, 2, lines.join('\n'));
  const labels = ['sinew-web', 'three-vrm'];
  lines.forEach((line, i) => {
    const m = line.match(/^(\S+) springs (\S+) (\d+(?:\.\d+)?) (\d+) (\d+)$/);
    assert.ok(m, `result line '${line}'`);
    assert.equal(m[1], labels[i]);
    assert.equal(m[2], NAME);
    assert.ok(Number(m[3]) > 0, `${m[1]}: ${m[3]} ns per spring joint per step`);
    assert.equal(Number(m[4]), 16);
    assert.equal(Number(m[5]), 3, `${m[1]}: three spring joints per character`);
  });
  console.log(lines.join('\n'));
});

test('springs: shift+drag and right-drag move the character on the ground, a plain drag orbits', T, async () => {
  const page = await newPage(browser, { width: 480, height: 320 });
  const query = new URLSearchParams({ model: `models/${NAME}.sinew`, springs: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  const state = () => page.evaluate(() => {
    const v = window.sinewViewer;
    return { offset: [...v.offset], yaw: v.camera.yaw, frame: v.character.springFrame };
  });
  const before = await state();
  const box = await page.locator('#view').boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  // Shift+drag 60 px to the right in a few moves, the frames running meanwhile.
  await page.keyboard.down('Shift');
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= 6; i++) {
    await page.mouse.move(x + 10 * i, y);
    await page.waitForTimeout(30);
  }
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const moved = await state();
  // Right-drag 40 px down: towards the camera.
  await page.mouse.move(x, y);
  await page.mouse.down({ button: 'right' });
  await page.mouse.move(x, y + 40, { steps: 4 });
  await page.mouse.up({ button: 'right' });
  const toward = await state();
  // A plain drag turns the camera and leaves the character.
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + 50, y, { steps: 4 });
  await page.mouse.up();
  const orbited = await state();
  checkClean(page);
  await page.context().close();
  const { yaw } = before;
  // Screen right on the ground is (cos yaw, 0, −sin yaw); screen down is (sin yaw, 0, cos yaw).
  const along = (o, from, d) => (o[0] - from[0]) * d[0] + (o[2] - from[2]) * d[1];
  const right = along(moved.offset, before.offset, [Math.cos(yaw), -Math.sin(yaw)]);
  const across = along(moved.offset, before.offset, [Math.sin(yaw), Math.cos(yaw)]);
  assert.ok(right > 0 && Math.abs(across) < 1e-6 * Math.max(1, right), `shift+drag right moved the character by ${right} along screen right, ${across} across`);
  assert.equal(moved.offset[1], 0, 'the character stays on the ground plane');
  const down = along(toward.offset, moved.offset, [Math.sin(yaw), Math.cos(yaw)]);
  assert.ok(down > 0, `right-drag down moved the character by ${down} towards the camera`);
  assert.deepEqual(orbited.offset, toward.offset, 'a plain drag leaves the character');
  assert.notEqual(orbited.yaw, toward.yaw, 'a plain drag turns the camera');
  assert.equal(moved.frame.on, true);
});

/** Pixels of `img` in the outside colliders' color (0.3, 0.9, 1 at 0.9 alpha): blue and green
 * high, red low, which neither the clear color, the grid nor the model's gray has. */
function colliderPixels(img) {
  let n = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
    if (g > 170 && b > 190 && r < 140) n++;
  }
  return n;
}

/** Distance from `p` to the segment `a`…`b` (3-vectors, in f64). */
function toSegment(p, a, b) {
  const ab = [0, 1, 2].map((i) => b[i] - a[i]);
  const ap = [0, 1, 2].map((i) => p[i] - a[i]);
  const t = Math.min(1, Math.max(0, ab.reduce((s, x, i) => s + x * ap[i], 0) / ab.reduce((s, x) => s + x * x, 0)));
  return Math.hypot(...[0, 1, 2].map((i) => ap[i] - ab[i] * t));
}

/** Point `p` through column-major 4×4 `m` (f64). */
function transform(m, p) {
  return [0, 1, 2].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r]);
}

/** Point `p` rotated by unit quaternion `[x, y, z, w]` and moved by `t` (f64). */
function place([x, y, z, w], t, p) {
  const u = [x, y, z];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const c1 = cross(u, p);
  const c2 = cross(u, c1);
  return [0, 1, 2].map((i) => p[i] + 2 * (w * c1[i] + c2[i]) + t[i]);
}

test('springs: colliders=1 draws the colliders (the O key hides them); their lines are the native bits, on the capsule', T, async () => {
  // Half a second on the path, then the lines.
  const worlds = placements().slice(0, 31);
  const file = path.join(OUT, 'springs-colliders-worlds.txt');
  fs.writeFileSync(file, `${worlds.map((w) => w.join(' ')).join('\n')}\n`);
  const native = JSON.parse(execFileSync(SPRINGS, [path.join(SITE, 'models', `${NAME}.sinew`), file, '--colliders'], { encoding: 'utf8' }));

  const page = await newPage(browser, { width: 480, height: 320 });
  const query = new URLSearchParams({ model: `models/${NAME}.sinew`, paused: '1', colliders: '1' });
  await openReady(page, `${server.url}index.html?${query}`);
  const button = page.locator('#colliders');
  const setUp = await page.evaluate(() => {
    const v = window.sinewViewer;
    return { full: v.sinew === v.fullRuntime, springs: v.hasSprings, colliders: v.colliders, hidden: document.getElementById('colliders').hidden };
  });
  assert.deepEqual(setUp, { full: true, springs: true, colliders: true, hidden: false }, 'colliders=1 opens the model in the full module, colliders shown');
  assert.equal(await button.textContent(), 'colliders: on');
  const shot = async (name) => {
    const img = readPng(await page.locator('#view').screenshot());
    writePng(path.join(OUT, name), img);
    return colliderPixels(img);
  };
  const on = await shot('colliders-on.png');
  await page.keyboard.press('o');
  await page.waitForFunction(() => document.getElementById('colliders').textContent === 'colliders: off');
  const off = await shot('colliders-off.png');
  await button.click();
  await page.waitForFunction(() => document.getElementById('colliders').textContent === 'colliders: on');
  const again = await shot('colliders-again.png');
  assert.ok(on > 100 && off < on / 20, `collider-colored pixels: ${on} with the colliders on, ${off} off`);
  assert.ok(again > on / 2, `on again: ${again} collider pixels`);

  const got = await page.evaluate((worlds) => {
    const c = window.sinewViewer.character;
    c.playing = true;
    worlds.forEach((w, k) => {
      c.setWorld(w.slice(0, 3), w.slice(3, 7), w[7]);
      if (k === 0) c.springs(true, true);
      else c.advance(1 / 60);
      c.update(0);
    });
    c.playing = false;
    const lines = c.colliderLines();
    return { outside: Array.from(lines.outside), inside: Array.from(lines.inside), joints: Array.from(c.jointMatrices()) };
  }, worlds);
  checkClean(page);
  await page.context().close();

  for (const set of ['outside', 'inside']) {
    const [a, b] = [bits(got[set]), bits(native.lines[set])];
    const differ = a.findIndex((x, i) => x !== b[i]);
    assert.ok(a.length === b.length && differ < 0, `${set} lines: ${a.length} floats in the page, ${b.length} natively; float ${differ} is ${got[set][differ]} in the page, ${native.lines[set][differ]} natively`);
  }
  // Each capsule from the file's definition: its ends through the joint's model matrix (the
  // page's), then the last placement; every point of the outside lines on one capsule's surface.
  const capsules = native.colliders.filter((c) => c.shape === 'capsule' && !c.inside);
  assert.ok(capsules.length >= 1 && got.outside.length >= capsules.length * 6 * 4 * 24, `${capsules.length} capsules, ${got.outside.length / 6} lines`);
  assert.equal(native.colliders.length, capsules.length, 'the model has outside capsules only');
  const w = worlds[worlds.length - 1];
  const ends = capsules.map((c) => {
    const m = got.joints.slice(c.joint * 16, c.joint * 16 + 16);
    const [a, b] = [c.offset, c.tail].map((p) => place(w.slice(3, 7), w.slice(0, 3), transform(m, p)));
    return { a, b, radius: c.radius };
  });
  let worst = 0;
  for (let i = 0; i < got.outside.length; i += 3) {
    const p = got.outside.slice(i, i + 3);
    const off = Math.min(...ends.map((e) => Math.abs(toSegment(p, e.a, e.b) - e.radius)));
    worst = Math.max(worst, off);
  }
  assert.ok(worst < 1e-4, `a line point is ${worst} off the capsule's surface`);
  console.log(`colliders: ${got.outside.length / 6} lines, the native bits, at most ${worst.toExponential(2)} off the capsule; ${on} collider pixels on, ${off} off`);
});
