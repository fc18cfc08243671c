// The spring bones benchmark in the browser: N characters of one VRM model held in its rest
// pose, each moved on the scripted world path (world-path.js; character i runs φᵢ seconds ahead,
// so that no two swing alike) and stepped once per 1/60 s frame; once with sinew's runtime (the
// full module, sinew_web_graph.wasm) and once with three-vrm's VRMSpringBoneManager, in the same
// page load. Only the spring stage is timed, as far as each side allows:
//   three-vrm: per frame, every character's root group is placed and `updateMatrixWorld(true)`
//     run, untimed; then `springBoneManager.update(1/60)` of every character is timed.
//   sinew: per frame, every character's `setWorld` and `advance(1/60)` run, untimed; then
//     `update(0)` of every character is timed (the pose's model matrices, then the spring stage:
//     one step and the model matrices of the final pose), and the same loop over N characters
//     of the model without spring bones (the model matrices alone) is timed too; the difference
//     counts.
// The amplitude is 0.3 × the model's height (the rest pose's box), the turn 0.6 rad.
//
// URL: ?model=URL.sinew&vrm=URL.vrm&n=N&rounds=R&ms=M
//   vrm: the same model for three-vrm (default: the model URL with .sinew replaced by .vrm);
//   n: characters (default 200); rounds: timed rounds per side (default 3); ms: milliseconds of
//   timed steps per round at least (default 1000).
// Result: document.body.dataset.result, two lines
//   sinew-web springs NAME <ns per spring joint per step> N JOINTS
//   three-vrm springs NAME <ns per spring joint per step> N JOINTS
// (JOINTS: the spring joints of one character; also shown on the page);
// document.body.dataset.state is 'running', 'done' or 'error: ...'.

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { VRMSpringBoneLoaderPlugin } from '@pixiv/three-vrm';
import { Sinew, moduleUrl } from './sinew.js';
import { fetchBytes } from './fetch-bytes.js';
import { scriptedWorld } from './world-path.js';

const params = new URLSearchParams(location.search);
const out = document.getElementById('out');
/** Seconds per step. */
const DT = 1 / 60;
/** Frames run before timing. */
const WARMUP = 30;
/** Timed rounds per side, alternating; each side's best counts (`rounds=`). */
const ROUNDS = Math.max(1, Number(params.get('rounds')) || 3);
/** Milliseconds of timed steps a round runs at least (`ms=`). */
const ROUND_MS = Math.max(1, Number(params.get('ms')) || 1000);
/** The path's largest turn, radians. */
const TURN = 0.6;

function show(text) {
  out.textContent = text;
}

/** The i-th character's phase on the path, in seconds. */
function phase(i) {
  return (i * 0.6180339887) % 4;
}

/**
 * A side: `place(frame)` moves every character to its place at `frame` (untimed), `step()` runs
 * what is timed for one frame; `baseline`, the same for what is subtracted (sinew's characters
 * without spring bones).
 */
function timedSide(label, joints, place, step, baseline = null) {
  return { label, joints, place, step, baseline, best: Infinity, frame: 0 };
}

/** sinew: characters with their spring bones on, and as many of the model without them. */
function sinewSide(model, n, amplitude) {
  const make = (springs) =>
    Array.from({ length: n }, () => {
      const c = model.character();
      c.playing = true;
      if (springs && !c.setupSprings({ on: true })) throw new Error(`${model.sinew.text()}`);
      return c;
    });
  const [swinging, still] = [make(true), make(false)];
  const place = (crowd) => (frame) => {
    crowd.forEach((c, i) => {
      const w = scriptedWorld(phase(i) + frame * DT, amplitude, TURN);
      c.setWorld(w.translation, w.rotation);
      if (frame > 0) c.advance(DT);
    });
  };
  const step = (crowd) => () => {
    for (const c of crowd) c.update(0);
  };
  // Frame 0 puts the springs at rest in place.
  place(swinging)(0);
  step(swinging)();
  const joints = swinging[0]?.springFrame?.joints ?? 0;
  return timedSide('sinew-web', joints, place(swinging), step(swinging), { place: place(still), step: step(still), frame: 0 });
}

/** three-vrm: a VRM loaded per character, its scene under a group the path moves. */
async function threeSide(bytes, n, amplitude) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMSpringBoneLoaderPlugin(parser));
  const crowd = [];
  for (let i = 0; i < n; i++) {
    const gltf = await loader.parseAsync(bytes.slice().buffer, '');
    const manager = gltf.userData.vrmSpringBoneManager;
    if (!manager) throw new Error('three-vrm found no spring bones in the file');
    const root = new THREE.Group();
    root.add(gltf.scene);
    crowd.push({ root, manager });
  }
  const yaw = new THREE.Quaternion();
  const place = (frame) => {
    crowd.forEach((c, i) => {
      const w = scriptedWorld(phase(i) + frame * DT, amplitude, TURN);
      c.root.position.fromArray(w.translation);
      c.root.quaternion.copy(yaw.fromArray(w.rotation));
      c.root.updateMatrixWorld(true);
    });
  };
  place(0);
  for (const c of crowd) c.manager.reset();
  const step = () => {
    for (const c of crowd) c.manager.update(DT);
  };
  return timedSide('three-vrm', crowd[0]?.manager.joints.size ?? 0, place, step);
}

/**
 * Runs frames of `side` (its placement untimed, its step timed) for at least ROUND_MS of steps;
 * milliseconds of steps per frame.
 */
function round(side, place, step) {
  let [frames, elapsed] = [0, 0];
  do {
    side.frame++;
    place(side.frame);
    const start = performance.now();
    step();
    elapsed += performance.now() - start;
    frames++;
  } while (elapsed < ROUND_MS);
  return elapsed / frames;
}

async function main() {
  document.body.dataset.state = 'running';
  const url = params.get('model') || 'models/springbone_collider_capsule_x0p02_r0p1.sinew';
  const vrmUrl = params.get('vrm') || url.replace(/\.sinew$/i, '.vrm');
  const n = Math.max(1, Number(params.get('n')) || 200);
  const name = decodeURIComponent(url.split('/').pop().split('?')[0]).replace(/\.[^.]*$/, '');

  const [sinew, data, vrm] = await Promise.all([Sinew.load(moduleUrl({ graphs: true })), fetchBytes(url), fetchBytes(vrmUrl)]);
  if (!sinew.hasSprings) throw new Error('the full module has no spring bones');
  const model = sinew.open(data);
  // The rest pose's box: its height sets the sway.
  const probe = model.character();
  const bounds = probe.update(0).poseBounds();
  probe.free();
  const amplitude = 0.3 * 2 * bounds.radius;
  show(`${name}: loading ${n} characters`);
  const sides = [sinewSide(model, n, amplitude), await threeSide(vrm, n, amplitude)];
  if (sides.some((s) => s.joints === 0)) throw new Error(`no spring joints: ${sides.map((s) => `${s.label} ${s.joints}`).join(', ')}`);
  show(`${name}: ${n} characters, ${sides[0].joints} spring joints each; warming up`);
  for (const s of sides) {
    for (let f = 0; f < WARMUP; f++) {
      s.frame++;
      s.place(s.frame);
      s.step();
      if (s.baseline) {
        s.baseline.frame++;
        s.baseline.place(s.baseline.frame);
        s.baseline.step();
      }
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of sides) {
      await new Promise((resolve) => setTimeout(resolve)); // lets the page show its progress
      const ms = round(s, s.place, s.step);
      const base = s.baseline ? round(s.baseline, s.baseline.place, s.baseline.step) : 0;
      s.best = Math.min(s.best, ms - base);
      show(`${name}: ${n} characters, ${sides[0].joints} spring joints each; round ${r + 1} of ${ROUNDS}`);
    }
  }
  const ns = (x) => (x >= 100 ? String(Math.round(x)) : x.toFixed(1));
  const result = sides.map((s) => `${s.label} springs ${name} ${ns((s.best * 1e6) / (n * s.joints))} ${n} ${s.joints}`).join('\n');
  show(result);
  document.body.dataset.result = result;
  document.body.dataset.state = 'done';
}

main().catch((e) => {
  show(`error: ${e.message}`);
  document.body.dataset.state = `error: ${e.message}`;
});
