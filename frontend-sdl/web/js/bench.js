// The crowd benchmark in the browser: N characters of one model, each at its own time offset,
// blending two clips at 0.5 each, with the hierarchy and the skinning palette computed every
// frame and nothing drawn; once with sinew's runtime (wasm) and once with three.js
// (AnimationMixer on clones of the glTF scene), in the same page load.
//
// URL: ?model=URL.sinew&n=N&gltf=URL.glb&clips=A,B
//   gltf: the same model for three.js (default: the model URL with .sinew replaced by .glb);
//   clips: default the 2nd and 3rd clip when there are three or more, else the first two.
// Result: document.body.dataset.result, two lines
//   sinew-web crowd NAME <ns per character per frame> N
//   three.js crowd NAME <ns per character per frame> N
// (also shown on the page); document.body.dataset.state is 'running', 'done' or 'error: ...'.

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import * as SkeletonUtils from 'three/addons/utils/SkeletonUtils.js';
import { Sinew, Outputs } from './sinew.js';
import { fetchBytes } from './fetch-bytes.js';

const params = new URLSearchParams(location.search);
const out = document.getElementById('out');
/** Seconds per frame. */
const DT = 1 / 60;
/** Frames run before timing. */
const WARMUP = 30;
/** Timed rounds per side, alternating; each side's best counts. */
const ROUNDS = 3;
/** Milliseconds a round runs at least. */
const ROUND_MS = 1000;

function show(text) {
  out.textContent = text;
}

/** The i-th character's time offset, in seconds: spread over a few seconds, no two alike. */
function offset(i) {
  return (i * 0.6180339887) % 4;
}

/** sinew: one character per member, `update` computes the pose, the joints' model matrices and the palettes. */
function sinewCrowd(model, clips, n) {
  const crowd = Array.from({ length: n }, (_, i) => model.character().play(clips[0]).blend(clips[1], 0.5).advance(offset(i)));
  return () => {
    for (const c of crowd) c.advance(DT).update(Outputs.PALETTES);
  };
}

/** three.js: a clone of the glTF scene per member, a mixer with both actions at 0.5, the world matrices and the skeletons' bone matrices. */
function threeCrowd(gltf, clips, n) {
  const crowd = Array.from({ length: n }, (_, i) => {
    const root = SkeletonUtils.clone(gltf.scene);
    const mixer = new THREE.AnimationMixer(root);
    for (const clip of clips) mixer.clipAction(clip).setEffectiveWeight(0.5).play();
    mixer.update(offset(i));
    const skeletons = new Set();
    root.traverse((o) => o.isSkinnedMesh && skeletons.add(o.skeleton));
    return { root, mixer, skeletons: [...skeletons] };
  });
  return () => {
    for (const c of crowd) {
      c.mixer.update(DT);
      c.root.updateMatrixWorld();
      for (const s of c.skeletons) s.update();
    }
  };
}

/** Runs `frame` for at least ROUND_MS; nanoseconds per character per frame. */
function round(frame, n) {
  let frames = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    frame();
    frames++;
    elapsed = performance.now() - start;
  } while (elapsed < ROUND_MS);
  return (elapsed * 1e6) / (frames * n);
}

async function main() {
  document.body.dataset.state = 'running';
  const url = params.get('model') || 'models/Fox.sinew';
  const gltfUrl = params.get('gltf') || url.replace(/\.sinew$/i, '.glb');
  const n = Math.max(1, Number(params.get('n')) || 1000);
  const name = decodeURIComponent(url.split('/').pop().split('?')[0]).replace(/\.[^.]*$/, '');

  const [sinew, data, gltf] = await Promise.all([Sinew.load(), fetchBytes(url), new GLTFLoader().loadAsync(gltfUrl)]);
  const model = sinew.open(data);
  const all = model.clips.map((c) => c.name);
  const names = params.has('clips') ? params.get('clips').split(',') : all.length >= 3 ? all.slice(1, 3) : all.slice(0, 2);
  if (names.length !== 2) throw new Error(`two clips are needed (the model has ${all.length})`);
  const clips = names.map((c) => model.clipIndex(c));
  // The same clips in the glTF: by name, else by index.
  const threeClips = clips.map((i) => THREE.AnimationClip.findByName(gltf.animations, all[i]) ?? gltf.animations[i]);
  if (threeClips.some((c) => !c)) throw new Error(`${gltfUrl}: clips ${names.join(', ')} not found`);

  show(`${name}: ${n} characters blending ${names.join(' and ')}; warming up`);
  const sides = [
    { label: 'sinew-web', frame: sinewCrowd(model, clips, n), best: Infinity },
    { label: 'three.js', frame: threeCrowd(gltf, threeClips, n), best: Infinity },
  ];
  for (const s of sides) for (let f = 0; f < WARMUP; f++) s.frame();
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of sides) {
      await new Promise((resolve) => setTimeout(resolve)); // lets the page show its progress
      s.best = Math.min(s.best, round(s.frame, n));
      show(`${name}: ${n} characters blending ${names.join(' and ')}; round ${r + 1} of ${ROUNDS}`);
    }
  }
  const ns = (x) => (x >= 100 ? String(Math.round(x)) : x.toFixed(1));
  const result = sides.map((s) => `${s.label} crowd ${name} ${ns(s.best)} ${n}`).join('\n');
  show(result);
  document.body.dataset.result = result;
  document.body.dataset.state = 'done';
}

main().catch((e) => {
  show(`error: ${e.message}`);
  document.body.dataset.state = `error: ${e.message}`;
});
