// Loads a glTF / VRM file with three.js's GLTFLoader and @pixiv/three-vrm-springbone's loader
// plugin, moves the model on a scripted path and steps its spring bones with
// VRMSpringBoneManager.update, printing every node's world position after each step as one JSON
// object. The cross-check of sinew's spring bones (tests/vrm_springs_three.rs) runs it.
//
//   node three_springs.mjs NODE_MODULES FILE STEPS RATE AMPLITUDE TURN
//
// NODE_MODULES holds `three` and `@pixiv/three-vrm-springbone` (frontend-sdl/web/node_modules).
// The model's scene goes under a group placed at time t = k / RATE (step k = 0 … STEPS) by
//   world(t) = T(A·sin(2π·0.5·t), 0, 0.5·A·sin(2π·0.8·t)) · Ry(Θ·sin(2π·0.3·t)) · Rz(0.5·Θ·sin(2π·0.7·t))
// (A = AMPLITUDE in file units, Θ = TURN in radians; world(0) is the identity). At k = 0 the
// manager is reset (the rest pose initializes the tails); each step k ≥ 1 places the group at
// k / RATE, then advances the springs by 1 / RATE. Output:
// {"three": REVISION, "springbone": VERSION, "nodes": [names by glTF node index],
//  "joints": N, "contacts": [per step], "steps": [[[x, y, z] per node] per step 0 … STEPS]}
// A contact is one collider test of one joint that found the tail inside (distance < 0).
//
// Materials, textures and images are dropped before the loader sees the file (Node has no
// image decoder, and they play no part in the springs); buffers in files beside a .gltf are
// inlined as data URIs.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, file, stepsArg, rateArg, amplitudeArg, turnArg] = process.argv.slice(2);
if (!modules || !file || !stepsArg || !rateArg || amplitudeArg === undefined || turnArg === undefined) {
  console.error('usage: node three_springs.mjs NODE_MODULES FILE STEPS RATE AMPLITUDE TURN');
  process.exit(2);
}
const steps = Number(stepsArg);
const rate = Number(rateArg);
const amplitude = Number(amplitudeArg);
const turn = Number(turnArg);

const url = (...rel) => pathToFileURL(path.join(modules, ...rel)).href;
const THREE = await import(url('three', 'build', 'three.module.js'));
const { GLTFLoader } = await import(url('three', 'examples', 'jsm', 'loaders', 'GLTFLoader.js'));
const springbone = await import(url('@pixiv', 'three-vrm-springbone', 'lib', 'three-vrm-springbone.module.js'));
const springboneVersion = JSON.parse(
  fs.readFileSync(path.join(modules, '@pixiv', 'three-vrm-springbone', 'package.json'), 'utf8'),
).version;

// The file's JSON and binary chunk.
const bytes = fs.readFileSync(file);
let json;
let bin = null;
if (bytes.readUInt32LE(0) === 0x46546c67) {
  let offset = 12;
  while (offset < bytes.length) {
    const length = bytes.readUInt32LE(offset);
    const type = bytes.readUInt32LE(offset + 4);
    const chunk = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === 0x4e4f534a) json = JSON.parse(chunk.toString('utf8'));
    else if (type === 0x004e4942) bin = chunk;
    offset += 8 + length;
  }
} else {
  json = JSON.parse(bytes.toString('utf8'));
}
for (const buffer of json.buffers ?? []) {
  if (buffer.uri && !buffer.uri.startsWith('data:')) {
    const data = fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(buffer.uri)));
    buffer.uri = `data:application/octet-stream;base64,${data.toString('base64')}`;
  }
}
delete json.materials;
delete json.textures;
delete json.images;
delete json.samplers;
for (const mesh of json.meshes ?? []) for (const p of mesh.primitives ?? []) delete p.material;
const keep = (name) => name.startsWith('VRM');
json.extensionsUsed = (json.extensionsUsed ?? []).filter(keep);
json.extensionsRequired = (json.extensionsRequired ?? []).filter(keep);

// Back into a GLB for GLTFLoader.parse.
const pad = (buf, fill) => Buffer.concat([buf, Buffer.alloc((4 - (buf.length % 4)) % 4, fill)]);
const jsonChunk = pad(Buffer.from(JSON.stringify(json), 'utf8'), 0x20);
const chunks = [jsonChunk, 0x4e4f534a];
const parts = [Buffer.alloc(12)];
const header = (length, type) => {
  const h = Buffer.alloc(8);
  h.writeUInt32LE(length, 0);
  h.writeUInt32LE(type, 4);
  return h;
};
parts.push(header(jsonChunk.length, chunks[1]), jsonChunk);
if (bin) {
  const binChunk = pad(bin, 0);
  parts.push(header(binChunk.length, 0x004e4942), binChunk);
}
const glb = Buffer.concat(parts);
glb.writeUInt32LE(0x46546c67, 0);
glb.writeUInt32LE(2, 4);
glb.writeUInt32LE(glb.length, 8);

// Every collider test that finds the tail inside counts as one contact.
let contacts = 0;
for (const Shape of [
  springbone.VRMSpringBoneColliderShapeSphere,
  springbone.VRMSpringBoneColliderShapeCapsule,
  springbone.VRMSpringBoneColliderShapePlane,
]) {
  const calculate = Shape.prototype.calculateCollision;
  Shape.prototype.calculateCollision = function (...args) {
    const d = calculate.apply(this, args);
    if (d < 0) contacts += 1;
    return d;
  };
}

// three's FileLoader reports the progress of a data URI's fetch with a DOM ProgressEvent, which
// Node lacks.
globalThis.ProgressEvent ??= class extends Event {
  constructor(type, init = {}) {
    super(type);
    Object.assign(this, init);
  }
};
const loader = new GLTFLoader();
loader.register((parser) => new springbone.VRMSpringBoneLoaderPlugin(parser));
const gltf = await loader.parseAsync(glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength), '');
const manager = gltf.userData.vrmSpringBoneManager;
if (!manager) {
  console.error(`${file}: no spring bones`);
  process.exit(1);
}
const nodes = await gltf.parser.getDependencies('node');

const mover = new THREE.Group();
mover.add(gltf.scene);
const place = (t) => {
  const tau = 2 * Math.PI;
  mover.position.set(amplitude * Math.sin(tau * 0.5 * t), 0, 0.5 * amplitude * Math.sin(tau * 0.8 * t));
  const yaw = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 1, 0), turn * Math.sin(tau * 0.3 * t));
  const roll = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 0, 1), 0.5 * turn * Math.sin(tau * 0.7 * t));
  mover.quaternion.copy(yaw).multiply(roll);
  mover.updateMatrixWorld(true);
};
const positions = () => {
  mover.updateMatrixWorld(true);
  return nodes.map((n) => n.getWorldPosition(new THREE.Vector3()).toArray());
};

place(0);
manager.reset();
const frames = [positions()];
const perStep = [0];
for (let k = 1; k <= steps; k++) {
  place(k / rate);
  const before = contacts;
  manager.update(1 / rate);
  perStep.push(contacts - before);
  frames.push(positions());
}
console.log(JSON.stringify({
  three: THREE.REVISION,
  springbone: springboneVersion,
  nodes: nodes.map((n, i) => json.nodes[i].name ?? `node${i}`),
  joints: manager.joints.size,
  contacts: perStep,
  steps: frames,
}));
