// Loads a glTF or VRM file with three.js's GLTFLoader and three-vrm's VRMSpringBoneLoaderPlugin
// and prints, as one JSON object, the spring joints in the order three-vrm's
// VRMSpringBoneManager updates them (`_sortedJoints`, after `setInitState`), each with what it
// was given and what `setInitState` made. The cross-check of sinew's spring bone import
// (tests/vrm_springs.rs) runs it.
//
//   node three_vrm_springs.mjs NODE_MODULES FILE
//
// NODE_MODULES holds `three` and `@pixiv/three-vrm-springbone` (frontend-sdl/web/node_modules).
// External buffers are read next to FILE and handed to the loader as data: URIs. Output:
// {"three": REVISION, "springbone": VERSION, "joints": [{"node", "child", "tail", "hitRadius",
//  "stiffness", "gravityPower", "gravityDir", "dragForce", "center", "colliders": [{"node",
//  "type", "offset", "radius", "tail", "inside", "normal"}]}]}: nodes as glTF node indices (null
// for an object that is no glTF node, such as a collider three-vrm added under a node), tail
// the joint's `initialLocalChildPosition`, colliders those of its collider groups in order.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
  console.error('usage: node three_vrm_springs.mjs NODE_MODULES FILE');
  process.exit(2);
}
// three's FileLoader, which fetches the data: URIs, reports progress with the browser's
// ProgressEvent.
globalThis.ProgressEvent ??= class ProgressEvent {
  constructor(type, init) {
    Object.assign(this, { type }, init);
  }
};
const url = (rel) => pathToFileURL(path.join(modules, rel)).href;
const THREE = await import(url('three/build/three.module.js'));
const { GLTFLoader } = await import(url('three/examples/jsm/loaders/GLTFLoader.js'));
const { VRMSpringBoneLoaderPlugin } = await import(url('@pixiv/three-vrm-springbone/lib/three-vrm-springbone.module.js'));

let data = fs.readFileSync(file);
if (data.subarray(0, 4).toString('latin1') !== 'glTF') {
  const json = JSON.parse(data.toString('utf8'));
  for (const b of json.buffers ?? []) {
    if (b.uri && !b.uri.startsWith('data:')) {
      const bytes = fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(b.uri)));
      b.uri = 'data:application/octet-stream;base64,' + bytes.toString('base64');
    }
  }
  data = JSON.stringify(json);
} else {
  data = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
}

const loader = new GLTFLoader();
loader.register((parser) => new VRMSpringBoneLoaderPlugin(parser));
// VRM 1.0 files require VRMC_vrm, which the loader refuses unless a plugin claims it; its
// content does not touch the spring bones.
loader.register(() => ({ name: 'VRMC_vrm' }));
const gltf = await new Promise((resolve, reject) => loader.parse(data, '', resolve, reject));
const nodeOf = (object) => {
  if (!object) return null;
  const a = gltf.parser.associations.get(object);
  return a && a.nodes !== undefined ? a.nodes : null;
};
const v = (x) => (x ? x.toArray() : null);
const manager = gltf.userData.vrmSpringBoneManager;
const joints = manager ? manager._sortedJoints : [];
console.log(JSON.stringify({
  three: THREE.REVISION,
  springbone: JSON.parse(fs.readFileSync(path.join(modules, '@pixiv/three-vrm-springbone/package.json'), 'utf8')).version,
  joints: joints.map((j) => ({
    node: nodeOf(j.bone),
    child: nodeOf(j.child),
    tail: v(j.initialLocalChildPosition),
    hitRadius: j.settings.hitRadius,
    stiffness: j.settings.stiffness,
    gravityPower: j.settings.gravityPower,
    gravityDir: v(j.settings.gravityDir),
    dragForce: j.settings.dragForce,
    center: nodeOf(j.center),
    colliders: j.colliderGroups.flatMap((g) => g.colliders).map((c) => ({
      node: nodeOf(c.parent),
      type: c.shape.type,
      offset: v(c.shape.offset),
      radius: c.shape.radius ?? null,
      tail: v(c.shape.tail),
      inside: c.shape.inside ?? null,
      normal: v(c.shape.normal),
    })),
  })),
}));
