// A sinew crowd drawn by three.js: a glTF's skinned mesh as one THREE.InstancedMesh whose
// vertex shader skins from sinew's palette texture instead of three's bone texture.
//
// sinew evaluates the crowd (model.crowd(), sinew.js) into one RGBA float texture: slot s holds
// 3 × joints texels from texel (column, row) of the instance's row, three per palette joint j
// (columns x0 + 3j + k, k = 0, 1, 2: the rows of its affine skin matrix, the translation in w).
// The palette joints are the model's skin 0 in skin order; sinew's glTF importer keeps the
// order of the file's skin (frontend-sdl/offline/src/import/gltf/skins.rs), which is also the
// order of three's `skeleton.bones` for the same skin, so a vertex's `skinIndex` names its
// palette joint as it is. `options.jointMap` maps them otherwise.
//
//   import * as THREE from 'three';
//   import { createCrowdMesh } from './three-crowd.js';
//   const crowd = model.crowd({ count: 100 });         // sinew.js
//   const fox = gltf.scene.getObjectByProperty('isSkinnedMesh', true);
//   const { mesh, update } = createCrowdMesh(THREE, fox, crowd);
//   scene.add(mesh);
//   // each frame:
//   crowd.frame(dt);
//   update();                                          // palette rows and instance slots to the GPU
//   renderer.render(scene, camera);
//
// Each instance's placement (rows 0 to 2 of `crowd.instanceRows()`) goes into the mesh's
// `instanceMatrix`, so three's instancing applies it to positions and normals; its slot's texel
// (the row's floats 12 and 13) is the `sinewSlot` instanced attribute.

/** Floats per instance of `crowd.instanceRows()`. */
export const INSTANCE_FLOATS = 16;

/** The vertex shader's declarations: the palette texture, the instance's slot, the skin attributes. */
const PARS = /* glsl */ `
uniform highp sampler2D sinewPalette;
attribute vec2 sinewSlot;
attribute vec4 skinIndex;
attribute vec4 skinWeight;
// Row k (0..2) of palette joint j's affine skin matrix in this instance's slot.
vec4 sinewRow( const in float j, const in int k ) {
	return texelFetch( sinewPalette, ivec2( int( sinewSlot.x ) + 3 * int( j ) + k, int( sinewSlot.y ) ), 0 );
}
`;

/** The weighted sum of the vertex's four joints' rows: the skin matrix's rows. */
const BASE = /* glsl */ `
vec4 sinewSkin0 = vec4( 0.0 ), sinewSkin1 = vec4( 0.0 ), sinewSkin2 = vec4( 0.0 );
for ( int i = 0; i < 4; i ++ ) {
	float w = skinWeight[ i ];
	if ( w == 0.0 ) continue;
	sinewSkin0 += w * sinewRow( skinIndex[ i ], 0 );
	sinewSkin1 += w * sinewRow( skinIndex[ i ], 1 );
	sinewSkin2 += w * sinewRow( skinIndex[ i ], 2 );
}
`;

/** The normal (and tangent) through the skin matrix's linear part. */
const NORMAL = /* glsl */ `
objectNormal = vec3( dot( sinewSkin0.xyz, objectNormal ), dot( sinewSkin1.xyz, objectNormal ), dot( sinewSkin2.xyz, objectNormal ) );
#ifdef USE_TANGENT
	objectTangent = vec3( dot( sinewSkin0.xyz, objectTangent ), dot( sinewSkin1.xyz, objectTangent ), dot( sinewSkin2.xyz, objectTangent ) );
#endif
`;

/** The position through the skin matrix (three's instancing then applies the placement). */
const POSITION = /* glsl */ `
{
	vec4 p = vec4( transformed, 1.0 );
	transformed = vec3( dot( sinewSkin0, p ), dot( sinewSkin1, p ), dot( sinewSkin2, p ) );
}
`;

/**
 * Patches `material` (any three.js material whose vertex shader includes three's skinning
 * chunks: the built-in mesh, depth and distance materials) so that it skins from `texture`,
 * sinew's palette, at the instance's `sinewSlot`. Returns the material. For shadows, give the
 * crowd mesh patched depth and distance materials: `mesh.customDepthMaterial =
 * patchMaterial(new THREE.MeshDepthMaterial({ depthPacking: THREE.RGBADepthPacking }), texture)`.
 * @template {import('three').Material} M
 * @param {M} material
 * @param {import('three').DataTexture} texture
 * @returns {M}
 */
export function patchMaterial(material, texture) {
  const before = material.onBeforeCompile;
  material.onBeforeCompile = (shader, renderer) => {
    before.call(material, shader, renderer);
    shader.uniforms.sinewPalette = { value: texture };
    const replace = (chunk, code) => {
      const include = `#include <${chunk}>`;
      if (!shader.vertexShader.includes(include)) {
        throw new Error(`three-crowd: ${material.type}'s vertex shader has no ${include}`);
      }
      shader.vertexShader = shader.vertexShader.replace(include, code);
    };
    replace('skinning_pars_vertex', PARS);
    replace('skinbase_vertex', BASE);
    // (Three's built-in vertex shaders all have it; a custom one may not.)
    if (shader.vertexShader.includes('#include <skinnormal_vertex>')) replace('skinnormal_vertex', NORMAL);
    replace('skinning_vertex', POSITION);
  };
  const key = material.customProgramCacheKey.bind(material);
  material.customProgramCacheKey = () => `sinew-crowd|${key()}`;
  material.needsUpdate = true;
  return material;
}

/**
 * The palette texture of `crowd` (RGBA, float, nearest), kept in step by `update()`: only the
 * rows the last frame wrote once the texture is on the GPU. Several crowd meshes of one crowd
 * (a model with more than one skinned mesh) share one.
 * @param {typeof import('three')} THREE
 * @param {{palette(): Float32Array, textureSize(): {width: number, height: number}, writtenRows(): ({first: number, end: number}|null)}} crowd
 * @returns {{texture: import('three').DataTexture, update(): void}}
 */
export function createPaletteTexture(THREE, crowd) {
  const { width, height } = crowd.textureSize();
  const texture = new THREE.DataTexture(crowd.palette(), width, height, THREE.RGBAFormat, THREE.FloatType);
  Object.assign(texture, {
    magFilter: THREE.NearestFilter,
    minFilter: THREE.NearestFilter,
    generateMipmaps: false,
    flipY: false,
    name: 'sinew crowd palette',
  });
  texture.needsUpdate = true;
  // Until three has uploaded it whole, every update uploads it whole.
  let uploaded = false;
  texture.onUpdate = () => {
    uploaded = true;
  };
  function update() {
    const rows = crowd.writtenRows();
    if (!rows) return;
    // The palette may be a view of wasm memory, which a grown memory replaces.
    const data = crowd.palette();
    if (data !== texture.image.data) texture.image.data = data;
    if (uploaded) {
      for (let row = rows.first; row < rows.end; row++) texture.addUpdateRange(row * width * 4, width * 4);
    } else {
      texture.clearUpdateRanges();
    }
    texture.needsUpdate = true;
  }
  return { texture, update };
}

/**
 * One THREE.InstancedMesh of `skinnedMesh`'s geometry and material(s) for every instance of
 * `crowd` (sinew.js's `model.crowd()`), skinned from sinew's palette texture and placed by the
 * crowd's instance rows. Call `update()` after each `crowd.frame(dt)`.
 *
 * The mesh sits at the origin of the crowd's world (the placements' frame): it is not frustum
 * culled (its bind-pose bounds hold neither the poses nor the crowd).
 *
 * @param {typeof import('three')} THREE
 * @param {import('three').SkinnedMesh} skinnedMesh a mesh of the glTF the crowd's model was baked from, bound to its skin 0
 * @param {object} crowd sinew.js's crowd: `count`, `palette()`, `textureSize()`, `writtenRows()`, `instanceRows()`
 * @param {object} [options]
 * @param {{texture: import('three').DataTexture, update(): void}} [options.palette] a palette texture
 *   (`createPaletteTexture`) shared with other meshes of the crowd; by default the mesh makes its own
 * @param {ArrayLike<number>} [options.jointMap] palette joint of each of `skinnedMesh`'s bones
 *   (by default bone i is palette joint i)
 * @param {number} [options.joints] palette joints (`model.skins[0].joints`): checked against the bones
 * @returns {{mesh: import('three').InstancedMesh, palette: {texture: import('three').DataTexture, update(): void}, update(): void}}
 * @throws {Error} when the mesh is not skinned, the joint counts differ, or a joint index is past the palette.
 */
export function createCrowdMesh(THREE, skinnedMesh, crowd, { palette, jointMap, joints } = {}) {
  if (!skinnedMesh?.isSkinnedMesh) throw new Error('three-crowd: not a THREE.SkinnedMesh');
  const source = skinnedMesh.geometry;
  const bones = skinnedMesh.skeleton.bones.length;
  if (joints !== undefined && !jointMap && joints !== bones) {
    throw new Error(`three-crowd: the skinned mesh has ${bones} bones, the crowd's palette ${joints} joints`);
  }
  for (const name of ['position', 'skinIndex', 'skinWeight']) {
    if (!source.getAttribute(name)) throw new Error(`three-crowd: the geometry has no ${name}`);
  }
  // The geometry's attributes shared, with the instances' slots added (and the joint indices
  // remapped when asked).
  const geometry = new THREE.BufferGeometry();
  for (const [name, attribute] of Object.entries(source.attributes)) geometry.setAttribute(name, attribute);
  geometry.setIndex(source.index);
  for (const g of source.groups) geometry.addGroup(g.start, g.count, g.materialIndex);
  geometry.setDrawRange(source.drawRange.start, source.drawRange.count);
  if (jointMap) {
    const src = source.getAttribute('skinIndex');
    const out = new Float32Array(src.count * 4);
    for (let v = 0; v < src.count; v++) {
      for (let c = 0; c < 4; c++) {
        const bone = src.getComponent(v, c);
        const j = jointMap[bone];
        if (!(j >= 0) || (joints !== undefined && j >= joints)) {
          throw new Error(`three-crowd: bone ${bone} has no palette joint in the joint map`);
        }
        out[4 * v + c] = j;
      }
    }
    geometry.setAttribute('skinIndex', new THREE.BufferAttribute(out, 4));
  }

  const count = crowd.count;
  const slots = new THREE.InstancedBufferAttribute(new Float32Array(2 * count), 2);
  slots.setUsage(THREE.DynamicDrawUsage);
  geometry.setAttribute('sinewSlot', slots);

  const shared = palette ?? createPaletteTexture(THREE, crowd);
  const patch = (m) => patchMaterial(m.clone(), shared.texture);
  const material = Array.isArray(skinnedMesh.material) ? skinnedMesh.material.map(patch) : patch(skinnedMesh.material);
  const mesh = new THREE.InstancedMesh(geometry, material, count);
  mesh.name = `${skinnedMesh.name || 'skinned mesh'} (sinew crowd)`;
  mesh.frustumCulled = false;

  /** Copies the instance rows: placements into instanceMatrix (when they changed), slots into sinewSlot. */
  function updateInstances() {
    const rows = crowd.instanceRows();
    const m = mesh.instanceMatrix.array;
    const s = slots.array;
    let moved = false;
    for (let i = 0; i < count; i++) {
      const r = INSTANCE_FLOATS * i;
      const e = 16 * i;
      // Rows 0..2 (x, y, z, translation) into three's column-major matrix.
      for (let row = 0; row < 3; row++) {
        for (let col = 0; col < 4; col++) {
          const v = rows[r + 4 * row + col];
          if (m[e + 4 * col + row] !== v) {
            m[e + 4 * col + row] = v;
            moved = true;
          }
        }
      }
      s[2 * i] = rows[r + 12];
      s[2 * i + 1] = rows[r + 13];
    }
    if (moved) mesh.instanceMatrix.needsUpdate = true;
    slots.needsUpdate = true;
  }

  function update() {
    if (!palette) shared.update();
    updateInstances();
  }
  updateInstances();
  return { mesh, palette: shared, update };
}

/**
 * The skinned meshes of a GLTFLoader result bound to the file's skin `skin`, its joints in the
 * file's order (the order sinew's palette keeps for that skin).
 * @param {{scene: import('three').Object3D, parser: {json: any, associations: Map<object, {nodes?: number}>}}} gltf
 * @param {number} [skin]
 * @returns {import('three').SkinnedMesh[]}
 */
export function skinnedMeshesOfSkin(gltf, skin = 0) {
  const joints = gltf.parser.json.skins?.[skin]?.joints ?? [];
  const out = [];
  gltf.scene.traverse((o) => {
    const bones = o.isSkinnedMesh ? o.skeleton.bones : null;
    if (bones && bones.length === joints.length && bones.every((b, i) => gltf.parser.associations.get(b)?.nodes === joints[i])) {
      out.push(o);
    }
  });
  return out;
}
