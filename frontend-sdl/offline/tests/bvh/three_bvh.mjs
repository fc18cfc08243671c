// Loads a BVH file with three.js's BVHLoader and prints, as one JSON object, every bone's world
// position at rest and at the given times of the loader's clip, sampled by an AnimationMixer on
// the loader's skeleton. The cross-check of sinew's BVH importer (tests/bvh.rs) runs it.
//
//   node three_bvh.mjs NODE_MODULES FILE.bvh T0 [T1 ...]
//
// NODE_MODULES is the folder holding `three` (frontend-sdl/web/node_modules). Output:
// {"three": VERSION, "duration": SECONDS, "bones": [{"name", "parent"}], "rest": [[x, y, z]...],
//  "frames": [{"time": T, "positions": [[x, y, z]...]}]}, bones in the loader's order (its End
// Sites are named "ENDSITE"), positions in file units.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, file, ...times] = process.argv.slice(2);
if (!modules || !file || times.length === 0) {
  console.error('usage: node three_bvh.mjs NODE_MODULES FILE.bvh T0 [T1 ...]');
  process.exit(2);
}
// The module BVHLoader's own `import ... from 'three'` resolves to (the package's "import"
// export), so the loader and the mixer share one copy of three.js.
const url = (rel) => pathToFileURL(path.join(modules, 'three', rel)).href;
const THREE = await import(url('build/three.module.js'));
const { BVHLoader } = await import(url('examples/jsm/loaders/BVHLoader.js'));

const { skeleton, clip } = new BVHLoader().parse(fs.readFileSync(file, 'utf8'));
const bones = skeleton.bones;
const root = bones[0];
const positions = () => {
  root.updateMatrixWorld(true);
  return bones.map((b) => b.getWorldPosition(new THREE.Vector3()).toArray());
};
const rest = positions();
const mixer = new THREE.AnimationMixer(root);
const action = mixer.clipAction(clip);
action.setLoop(THREE.LoopOnce, 1);
action.clampWhenFinished = true;
action.play();
const frames = times.map(Number).map((time) => {
  mixer.setTime(time);
  return { time, positions: positions() };
});
console.log(JSON.stringify({
  three: THREE.REVISION,
  version: JSON.parse(fs.readFileSync(path.join(modules, 'three', 'package.json'), 'utf8')).version,
  duration: clip.duration,
  bones: bones.map((b) => ({ name: b.name, parent: b.parent && b.parent.isBone ? bones.indexOf(b.parent) : null })),
  rest,
  frames,
}));
