// A sinew crowd in a three.js scene: sinew's runtime (wasm) evaluates the crowd into its palette
// texture; three.js draws each skinned mesh of the glTF the model was baked from as one
// THREE.InstancedMesh skinned from that texture (three-crowd.js). The camera frames the whole
// crowd as crowd.html does (camera.js's framing of the crowd's extent), with the viewers' clear
// color and light. Crowds are in the full runtime module (sinew_web_graph.wasm).
//
// URL: ?model=URL (.sinew) &gltf=URL (the glTF it was baked from) &n=COUNT &lod=0 &paused=1
//      &time=SECONDS &frames=STEPS &width=W &height=H &ref=1
// `ref=1` draws the same crowd without the instanced path, for the tests: one plain
// THREE.SkinnedMesh per instance and skinned mesh, placed by the instance's row, its bone
// matrices read from the instance's palette slot (three's own skinning).
// `paused=1`: the crowd advanced by `time` seconds (default 0.5) in `frames` equal steps (default
// 1, as crowd.html does), each drawn, then nothing moves.
// Test hooks: document.body.dataset.state ('loading', 'ready', 'error: <message>') and
// window.sinewThreeCrowd ({stats, render(), camera: {eye, target, fovY, near, far}, meshes, crowd}).

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { Sinew, moduleUrl } from './sinew.js';
import { fetchBytes } from './fetch-bytes.js';
import { framing, eye, clipPlanes } from './camera.js';
import { createCrowdMesh, createPaletteTexture, skinnedMeshesOfSkin, INSTANCE_FLOATS } from './three-crowd.js';

const params = new URLSearchParams(location.search);

/**
 * The crowd's instances as plain SkinnedMeshes of `skinned`'s geometry and material: instance
 * i's matrix is its placement, its bones stand for the palette joints (identity inverses and
 * bind matrix, detached), and their matrices are read from its palette slot whenever three updates the
 * skeleton.
 */
function referenceMeshes(skinned, crowd) {
  const joints = skinned.skeleton.bones.length;
  return Array.from({ length: crowd.count }, (_, i) => {
    const bones = Array.from({ length: joints }, () => new THREE.Bone());
    const skeleton = new THREE.Skeleton(bones, bones.map(() => new THREE.Matrix4()));
    const object = new THREE.SkinnedMesh(skinned.geometry, skinned.material);
    skeleton.update = () => {
      const rows = crowd.instanceRows().subarray(INSTANCE_FLOATS * i, INSTANCE_FLOATS * (i + 1));
      const { width } = crowd.textureSize();
      const texels = crowd.palette();
      const at = 4 * (rows[13] * width + rows[12]);
      for (let j = 0; j < joints; j++) {
        const m = skeleton.boneMatrices.subarray(16 * j, 16 * j + 16);
        for (let k = 0; k < 3; k++) for (let c = 0; c < 4; c++) m[4 * c + k] = texels[at + 12 * j + 4 * k + c];
        [m[3], m[7], m[11], m[15]] = [0, 0, 0, 1];
      }
      object.matrix.set(...rows.subarray(0, 12), 0, 0, 0, 1);
      object.matrixWorld.copy(object.matrix);
      if (skeleton.boneTexture) skeleton.boneTexture.needsUpdate = true;
    };
    object.matrixAutoUpdate = false;
    // Detached: the bones are in the model's space, the placement is the object's matrix.
    object.bindMode = THREE.DetachedBindMode;
    object.bind(skeleton, new THREE.Matrix4());
    object.frustumCulled = false;
    return object;
  });
}

async function main() {
  const url = params.get('model') || 'models/Fox.sinew';
  const gltfUrl = params.get('gltf') || url.replace(/\.sinew$/, '.glb');
  const count = Math.max(1, Number(params.get('n')) || 100);
  const lod = params.get('lod') !== '0';
  const paused = params.get('paused') === '1';
  const reference = params.get('ref') === '1';
  const width = Number(params.get('width')) || innerWidth;
  const height = Number(params.get('height')) || innerHeight;

  const canvas = document.getElementById('view');
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
  renderer.setSize(width, height, false);
  renderer.setClearColor(new THREE.Color().setRGB(0.12, 0.13, 0.16, THREE.SRGBColorSpace));
  const scene = new THREE.Scene();

  // ANCHOR: three-crowd
  const [sinew, bytes, gltf] = await Promise.all([Sinew.load(moduleUrl({ graphs: true })), fetchBytes(url), new GLTFLoader().loadAsync(gltfUrl)]);
  const model = sinew.open(bytes); // the .sinew baked from the glTF
  const crowd = model.crowd({ count, lod }); // a grid of instances, each at its own clip and phase
  // Every skinned mesh of the glTF's skin 0 becomes one InstancedMesh; they share the palette texture.
  const palette = createPaletteTexture(THREE, crowd);
  const meshes = skinnedMeshesOfSkin(gltf, 0).map((skinned) =>
    createCrowdMesh(THREE, skinned, crowd, { palette, joints: model.skins[0].joints }),
  );
  meshes.forEach(({ mesh }) => scene.add(mesh));

  // Each frame: advance the crowd, upload what changed, draw.
  function frame(dt) {
    const stats = crowd.frame(dt); // {evaluated, shared, held}
    palette.update();
    meshes.forEach((m) => m.update());
    renderer.render(scene, camera);
    return stats;
  }
  // ANCHOR_END: three-crowd
  if (!meshes.length) throw new Error(`${gltfUrl}: no skinned mesh of skin 0`);
  if (reference) {
    meshes.forEach(({ mesh }) => scene.remove(mesh));
    skinnedMeshesOfSkin(gltf, 0).forEach((skinned) => scene.add(...referenceMeshes(skinned, crowd)));
  }

  // The viewer's camera, aimed at the whole crowd; the crowd's levels of detail from it.
  const limits = model.sinew.limits;
  const bounds = crowd.bounds();
  const cam = framing(limits, bounds.center, bounds.radius);
  const [near, far] = clipPlanes(limits, cam);
  const camera = new THREE.PerspectiveCamera((cam.fovY * 180) / Math.PI, width / height, near, far);
  camera.position.set(...eye(cam));
  camera.lookAt(...cam.target);
  crowd.setCamera(eye(cam), height / (2 * Math.tan(cam.fovY / 2)));
  const light = new THREE.DirectionalLight(0xffffff, Math.PI * 0.75); // three's diffuse term divides by π
  light.position.set(-1, 1, 1);
  scene.add(light, new THREE.AmbientLight(0xffffff, Math.PI * 0.25));

  // Paused: `time` seconds in `frames` steps, each drawn; otherwise the animation loop's steps.
  let stats = null;
  if (paused) {
    const time = Number(params.get('time') ?? 0.5);
    const frames = Math.max(1, Math.round(Number(params.get('frames')) || 1));
    for (let i = 0; i < frames; i++) stats = frame(time / frames);
  }
  const api = {
    stats,
    render: () => renderer.render(scene, camera),
    camera: { eye: eye(cam), target: cam.target, fovY: cam.fovY, near, far },
    meshes: meshes.length,
    crowd,
  };
  window.sinewThreeCrowd = api;
  document.body.dataset.state = 'ready';

  let last = null;
  if (!paused) {
    renderer.setAnimationLoop((now) => {
      api.stats = frame(last === null ? 0 : Math.min((now - last) / 1000, 0.1));
      last = now;
    });
  }
}

main().catch((e) => {
  document.getElementById('message').textContent = e.message;
  document.body.dataset.state = `error: ${e.message}`;
});
