// Loads an FBX file with three.js's FBXLoader and prints, as one JSON object, the world position
// of every named object of the loaded scene at the given times of each animation clip:
//
//   node three_joints.mjs THREE_DIR FILE.fbx F1 F2 ...
//
// THREE_DIR is the `three` npm package (frontend-sdl/web/node_modules/three). Each clip is
// sampled at the fractions F1, F2, ... of its key range (first to last key time of its tracks,
// on the file's time line); each sample gives its time in seconds. Positions are in the file's
// units; `unitScaleFactor` (centimeters per unit) is the file's, as the loader reads it.
// Textures are not loaded: every texture is an empty `Texture`. Each clip plays once, held at
// its end, so the last time reads its last keys.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [threeDir, file, ...fractionArgs] = process.argv.slice(2);
const fractions = fractionArgs.map(Number);
const THREE = await import(pathToFileURL(resolve(threeDir, 'build/three.module.js')).href);
const { FBXLoader } = await import(pathToFileURL(resolve(threeDir, 'examples/jsm/loaders/FBXLoader.js')).href);

// What the loader reaches for outside the scene graph: the window's size (cameras) and blob URLs
// (embedded images). No DOM is needed once textures are stubbed.
globalThis.window ??= { innerWidth: 640, innerHeight: 480 };
URL.createObjectURL = () => 'blob:stub';

const manager = new THREE.LoadingManager();
const stubTextures = {
  path: undefined,
  setPath(p) { this.path = p; return this; },
  load() { return new THREE.Texture(); },
};
manager.addHandler(/./, stubTextures);
const loader = new FBXLoader(manager);
const bytes = readFileSync(file);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const group = loader.parse(buffer, '');

function positions() {
  group.updateMatrixWorld(true);
  const out = [];
  const v = new THREE.Vector3();
  group.traverse((o) => {
    if (o === group || !o.name) return;
    o.getWorldPosition(v);
    out.push([o.name, v.x, v.y, v.z]);
  });
  return out;
}

const clips = [];
for (const clip of group.animations) {
  const mixer = new THREE.AnimationMixer(group);
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  action.play();
  const start = Math.min(...clip.tracks.map((track) => track.times[0]));
  const end = Math.max(...clip.tracks.map((track) => track.times[track.times.length - 1]));
  const samples = [];
  for (const f of fractions) {
    const t = start + f * (end - start);
    mixer.setTime(t);
    samples.push({ time: t, joints: positions() });
  }
  action.stop();
  mixer.uncacheRoot(group);
  clips.push({ name: clip.name, duration: clip.duration, samples });
}
const rest = positions();

process.stdout.write(JSON.stringify({
  loader: `three.js FBXLoader r${THREE.REVISION}`,
  unitScaleFactor: group.userData.unitScaleFactor ?? 1,
  rest,
  clips,
}) + '\n');
