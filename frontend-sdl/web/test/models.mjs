// The test models, copied (or baked) into SITE/models: they are not part of the site.
// As a command: `node models.mjs SITE` does the same.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { REPO, SINEW, asset } from './paths.mjs';

/** name in models/ → where it comes from: a file of the repository (`file`), or a shared asset
 * (`asset`, a path of tests/assets/manifest.tsv), copied or baked. */
export const MODELS = {
  'character.sinew': { copy: true, file: path.join(REPO, 'core/fixtures/character.sinew') },
  'CesiumMan.glb': { copy: true, asset: 'gltf/CesiumMan/CesiumMan.glb' },
  'Fox.sinew': { bake: true, asset: 'gltf/Fox/Fox.glb' },
  // bench.html's three.js side loads the glTF beside the .sinew (models/Fox.glb).
  'Fox.glb': { copy: true, asset: 'gltf/Fox/Fox.glb' },
  'pab_crossarms.glb': { copy: true, asset: 'ozz/pab_crossarms.glb' },
  // Morph targets and their weight track, on a rigid mesh.
  'AnimatedMorphCube.glb': { copy: true, asset: 'gltf/AnimatedMorphCube/AnimatedMorphCube.glb' },
  // Spring bones (a chain of three falling onto a capsule): baked for sinew, and the file
  // itself for springs-bench.html's three-vrm side.
  'springbone_collider_capsule_x0p02_r0p1.sinew': { bake: true, asset: 'vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm' },
  'springbone_collider_capsule_x0p02_r0p1.vrm': { copy: true, asset: 'vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm' },
};

function fresh(out, ...inputs) {
  if (!fs.existsSync(out)) return false;
  const t = fs.statSync(out).mtimeMs;
  return inputs.every((i) => fs.statSync(i).mtimeMs <= t);
}

/** Copies and bakes what is missing or older than its source (or than the sinew binary, for a
 * baked one); returns the models folder. */
export function prepareModels(site) {
  const dir = path.join(site, 'models');
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, src] of Object.entries(MODELS)) {
    const out = path.join(dir, name);
    const input = src.asset ? asset(src.asset) : src.file;
    if (!fs.existsSync(input)) throw new Error(`${input} is missing (test model ${name})`);
    if (src.copy) {
      if (!fresh(out, input)) fs.copyFileSync(input, out);
    } else if (!fresh(out, input, SINEW)) {
      try {
        execFileSync(SINEW, ['bake', input, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        fs.rmSync(out, { force: true });
        throw new Error(`${SINEW} bake ${input} -o ${out} failed:\n${e.stderr ?? e.message}`);
      }
    }
  }
  return dir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && !process.env.NODE_TEST_CONTEXT) {
  const site = process.argv[2];
  if (!site) {
    console.error('usage: node models.mjs SITE_DIR');
    process.exit(2);
  }
  console.log(prepareModels(path.resolve(site)));
}
