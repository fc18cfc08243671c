// sinew in a three.js scene: sinew's runtime (wasm) plays and blends the clips and computes the
// skinning palettes; three.js draws. Each draw part of the model becomes a THREE.SkinnedMesh
// whose bones stand for the part's palette slots, with identity inverses and bind matrix, so the
// bone matrices three uploads are sinew's palette (model × inverse bind) copied as they are.
// Rigid parts are plain meshes that follow their node's matrix. The camera, clear color and
// light are the WebGL viewer's (index.html).
//
// URL: ?model=URL&clip=NAME&time=T&paused=1&width=W&height=H
// Test hooks: document.body.dataset.state ('loading', 'ready', 'error: <message>') and
// window.sinewThree ({palette(skin), render()}).

import * as THREE from 'three';
import { Sinew, Outputs, moduleUrl, hasSimd } from './sinew.js';
import { framing, eye, clipPlanes, gridLines } from './camera.js';

const params = new URLSearchParams(location.search);

/** WebGL sampler enums (what a part stores) → three.js constants. */
const GL_TO_THREE = {
  10497: THREE.RepeatWrapping, 33071: THREE.ClampToEdgeWrapping, 33648: THREE.MirroredRepeatWrapping,
  9728: THREE.NearestFilter, 9729: THREE.LinearFilter,
  9984: THREE.NearestMipmapNearestFilter, 9985: THREE.LinearMipmapNearestFilter,
  9986: THREE.NearestMipmapLinearFilter, 9987: THREE.LinearMipmapLinearFilter,
};

/** A part's triangles: the interleaved vertices (position, normal, joints, weights, uv, color) and indices, copied. */
function partGeometry(model, part) {
  const vertices = new THREE.InterleavedBuffer(model.vertexData(part).slice(), model.sinew.limits.floatsPerVertex);
  const geometry = new THREE.BufferGeometry();
  // The runtime's vertex layout, attribute by attribute, under three's names.
  ['position', 'normal', 'skinIndex', 'skinWeight', 'uv', 'color'].forEach((name, i) => {
    const [n, offset] = model.sinew.vertexLayout[i];
    geometry.setAttribute(name, new THREE.InterleavedBufferAttribute(vertices, n, offset));
  });
  geometry.setIndex(new THREE.BufferAttribute(model.indexData(part).slice(), 1));
  return geometry;
}

/** Texture `t` of `model` as a DataTexture (RGB565 widened to RGBA8), sampled as the part says. */
function partTexture(model, t, part) {
  const rgba = model.rgba(t).slice();
  // glTF's uv convention (v down from the first row): flipY stays false.
  const texture = new THREE.DataTexture(rgba, t.width, t.height, THREE.RGBAFormat, THREE.UnsignedByteType);
  texture.colorSpace = THREE.SRGBColorSpace;
  [texture.wrapS, texture.wrapT] = [GL_TO_THREE[part.wrapS], GL_TO_THREE[part.wrapT]];
  [texture.magFilter, texture.minFilter] = [GL_TO_THREE[part.mag], GL_TO_THREE[part.min]];
  texture.generateMipmaps = part.min >= 9984;
  texture.needsUpdate = true;
  return texture;
}

/** The part's material: its base color times the vertex color times its texture, lit. */
function partMaterial(model, part, textures) {
  const [r, g, b, a] = part.color;
  const material = new THREE.MeshLambertMaterial({ color: new THREE.Color(r, g, b), vertexColors: true });
  if (a < 1) Object.assign(material, { transparent: true, opacity: a });
  const t = part.texture === null ? null : model.textures[part.texture];
  if (t) {
    const key = [part.texture, part.wrapS, part.wrapT, part.mag, part.min].join();
    if (!textures.has(key)) textures.set(key, partTexture(model, t, part));
    material.map = textures.get(key);
  }
  return material;
}

async function main() {
  const url = params.get('model') || 'models/character.sinew';
  const paused = params.get('paused') === '1';
  const width = Number(params.get('width')) || innerWidth;
  const height = Number(params.get('height')) || innerHeight;

  const canvas = document.getElementById('view');
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
  renderer.setSize(width, height, false);
  renderer.setClearColor(new THREE.Color().setRGB(0.12, 0.13, 0.16, THREE.SRGBColorSpace));
  const scene = new THREE.Scene();

  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());

  // ANCHOR: three
  let sinew = await Sinew.load(); // sinew_web.wasm, next to sinew.js
  let model = sinew.open(bytes); // a .sinew file's bytes
  if (!sinew.hasMorphs && hasSimd && model.meshes.some((m) => m.morph)) {
    // Morph targets are evaluated in the full module, sinew_web_graph.wasm.
    model.close();
    sinew = await Sinew.load(moduleUrl({ graphs: true }));
    model = sinew.open(bytes);
  }
  const character = model.character(); // plays the first clip; .play(name), .blend(name, w)...

  // One SkinnedMesh per draw part; its bones are the part's palette slots, and three's bone
  // matrices are sinew's palette entries for them (skin joint map[i] for bone i), copied in
  // when three updates the skeleton before drawing.
  function skinnedMesh(mesh, part, geometry, material) {
    const bones = Array.from({ length: part.joints }, () => new THREE.Bone());
    const skeleton = new THREE.Skeleton(bones, bones.map(() => new THREE.Matrix4()));
    const map = model.partMap(part).slice();
    skeleton.update = () => {
      const palette = character.palette(mesh.skin); // 16 floats per skin joint
      map.forEach((joint, i) => skeleton.boneMatrices.set(palette.subarray(16 * joint, 16 * joint + 16), 16 * i));
      if (skeleton.boneTexture) skeleton.boneTexture.needsUpdate = true;
    };
    const object = new THREE.SkinnedMesh(geometry, material);
    object.bind(skeleton, new THREE.Matrix4());
    object.frustumCulled = false; // the bind-pose bounds do not hold the animated pose
    return object;
  }

  // Each frame: advance the clock, compute the pose and the palettes, draw.
  function frame(dt) {
    character.advance(dt).update(Outputs.PALETTES | Outputs.MORPHS);
    followers.forEach((follow) => follow());
    renderer.render(scene, camera);
  }
  // ANCHOR_END: three

  // Rigid parts follow their node's matrix; morphed parts take the morphed vertices (before skinning).
  const followers = [];
  const textures = new Map();
  model.meshes.forEach((mesh, mi) =>
    mesh.parts.forEach((part, pi) => {
      const geometry = partGeometry(model, part);
      const material = partMaterial(model, part, textures);
      let object;
      if (part.rigid) {
        object = new THREE.Mesh(geometry, material);
        object.matrixAutoUpdate = false;
        if (mesh.node != null) followers.push(() => object.matrix.fromArray(character.jointMatrices(), 16 * mesh.node));
      } else {
        object = skinnedMesh(mesh, part, geometry, material);
      }
      if (mesh.morph) {
        const vertices = geometry.getAttribute('position').data;
        followers.push(() => {
          vertices.array.set(character.partData(mi, pi, 2));
          vertices.needsUpdate = true;
        });
      }
      scene.add(object);
    }),
  );

  // The viewer's camera, floor grid and light.
  const limits = model.sinew.limits;
  const cam = framing(limits, model.bounds.center, model.bounds.radius);
  const camera = new THREE.PerspectiveCamera((cam.fovY * 180) / Math.PI, width / height, ...clipPlanes(limits, cam));
  camera.position.set(...eye(cam));
  camera.lookAt(...cam.target);
  const lines = gridLines(model.bounds, model.sinew.gridStep(model.bounds.radius));
  const grid = new THREE.BufferGeometry().setAttribute('position', new THREE.BufferAttribute(lines, 3));
  const gridColor = new THREE.Color().setRGB(0.42, 0.45, 0.52, THREE.SRGBColorSpace);
  scene.add(new THREE.LineSegments(grid, new THREE.LineBasicMaterial({ color: gridColor, transparent: true, opacity: 0.55 })));
  const light = new THREE.DirectionalLight(0xffffff, Math.PI * 0.75); // three's Lambert divides by π
  light.position.set(-1, 1, 1);
  scene.add(light, new THREE.AmbientLight(0xffffff, Math.PI * 0.25));

  // As the viewer: the clip played from its start and advanced by `time` seconds.
  if (params.has('clip')) character.play(params.get('clip'));
  frame(Number(params.get('time')) || 0);
  character.playing = !paused;
  window.sinewThree = {
    palette: (skin = 0) => new Float32Array(character.palette(skin)),
    render: () => renderer.render(scene, camera),
  };
  document.body.dataset.state = 'ready';

  let last = null;
  renderer.setAnimationLoop((now) => {
    if (last !== null && !paused) frame(Math.min((now - last) / 1000, 0.25));
    last = now;
  });
}

main().catch((e) => {
  document.getElementById('message').textContent = e.message;
  document.body.dataset.state = `error: ${e.message}`;
});
