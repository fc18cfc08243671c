// The browser's glTF importer module under Node (run.sh runs it with the other tests): the
// site's sinew_web_import.wasm bakes Fox.glb through js/import.js into a .sinew file, and a
// truncated, a glTF 1.0 and a meshopt-compressed file give the importer's one-line messages,
// and a file with two scenes gives a note.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { importGltf, importWith } from '../js/import.js';
import { REPO, SITE, asset } from './paths.mjs';

const root = REPO;
const wasmPath = resolve(SITE, 'sinew_web_import.wasm');

/** `core/src/format/mod.rs` MAGIC. */
const MAGIC = [...'SINEW\0\r\n'].map((c) => c.charCodeAt(0));

function check(ok, what) {
  console.log(what);
  assert.ok(ok, what);
}

test('the importer module bakes glTF in the browser runtime and refuses what it cannot read with one line', async () => {

const glbPath = asset('gltf/Fox/Fox.glb');
const wasm = readFileSync(wasmPath);
const glb = new Uint8Array(readFileSync(glbPath));
const imports = WebAssembly.Module.imports(new WebAssembly.Module(wasm));
check(imports.length === 0, `${wasmPath}: ${wasm.length} bytes, imports ${JSON.stringify(imports)}`);

// importGltf itself, fetching the module from a data: URL (Node's fetch reads those).
const wasmUrl = `data:application/wasm;base64,${wasm.toString('base64')}`;
let t = performance.now();
const { bytes: baked, notes } = await importGltf(glb, { wasmUrl });
const magicOk = MAGIC.every((b, i) => baked[i] === b);
check(magicOk, `${glbPath}: ${glb.length} bytes -> ${baked.length} .sinew bytes in ${(performance.now() - t).toFixed(0)} ms, magic ${magicOk ? 'SINEW' : 'wrong'}`);
check(Array.isArray(notes) && notes.length === 0, `Fox.glb: notes ${JSON.stringify(notes)}`);

t = performance.now();
const { bytes: again } = await importGltf(glb, { wasmUrl, palette: 8 });
check(again.length > 0 && MAGIC.every((b, i) => again[i] === b), `palette 8: ${again.length} bytes in ${(performance.now() - t).toFixed(0)} ms (cached instance)`);

try {
  await importGltf(glb.subarray(0, glb.length >> 1), { wasmUrl });
  check(false, 'a truncated file was accepted');
} catch (e) {
  check(/^malformed GLB container/.test(e.message), `truncated file: ${e.message}`);
}

// The same, on an instance made from the file's bytes.
const { instance } = await WebAssembly.instantiate(wasm, {});
check(importWith(instance, glb, 0).bytes.length === baked.length, 'importWith on an instance from the file: same size');

// A file with two scenes: the default one is imported, and a note says what was left out.
const twoScenes = new TextEncoder().encode(JSON.stringify({
  asset: { version: '2.0' }, scene: 0, scenes: [{ nodes: [0] }, { nodes: [1] }], nodes: [{ name: 'a' }, { name: 'b' }],
}));
const left = importWith(instance, twoScenes, 0);
check(left.bytes.length > 0 && left.notes.length === 1 && /left out/.test(left.notes[0]), `two scenes: notes ${JSON.stringify(left.notes)}`);
try {
  importWith(instance, new TextEncoder().encode('{"asset": {"version": "1.0"}}'), 0);
  check(false, 'a glTF 1.0 file was accepted');
} catch (e) {
  check(e.message.length > 0 && !e.message.includes('\n'), `glTF 1.0 file: ${e.message}`);
}

// A meshopt-compressed file: this build has no meshopt decoder and says so.
const meshopt = new Uint8Array(readFileSync(resolve(root, 'frontend-sdl/offline/tests/data/RiggedFigure-meshopt.glb')));
try {
  importWith(instance, meshopt, 0);
  check(false, 'a meshopt-compressed file was accepted');
} catch (e) {
  check(/EXT_meshopt_compression.*this build of sinew cannot decode/.test(e.message), `meshopt file: ${e.message}`);
}

});
