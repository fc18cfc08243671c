// Smoke test of the browser's glTF importer under Node 20 (no npm packages): bakes Fox.glb
// through frontend-sdl/web/js/import.js and checks the .sinew magic, then checks that a
// truncated, a glTF 1.0 and a meshopt-compressed file give the importer's messages.
//
//   node frontend-sdl/web/test/import.smoke.mjs [sinew_web_import.wasm] [model.glb]
//
// The .wasm defaults to $CARGO_TARGET_DIR (or target/) /wasm32-unknown-unknown/release/, as
// built by `cargo build --release --target wasm32-unknown-unknown -p sinew-web-import`.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { importGltf, importWith } from '../js/import.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const target = process.env.CARGO_TARGET_DIR ?? resolve(root, 'target');
const wasmPath = process.argv[2] ?? resolve(target, 'wasm32-unknown-unknown/release/sinew_web_import.wasm');
const glbPath = process.argv[3] ?? resolve(root, '../shared/assets/gltf/Fox/Fox.glb');

/** `core/src/format/mod.rs` MAGIC. */
const MAGIC = [...'SINEW\0\r\n'].map((c) => c.charCodeAt(0));

let failed = false;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  failed ||= !ok;
}

const wasm = readFileSync(wasmPath);
const glb = new Uint8Array(readFileSync(glbPath));
const imports = WebAssembly.Module.imports(new WebAssembly.Module(wasm));
check(imports.length === 0, `${wasmPath}: ${wasm.length} bytes, imports ${JSON.stringify(imports)}`);

// importGltf itself, fetching the module from a data: URL (Node's fetch reads those).
const wasmUrl = `data:application/wasm;base64,${wasm.toString('base64')}`;
let t = performance.now();
const baked = await importGltf(glb, { wasmUrl });
const magicOk = MAGIC.every((b, i) => baked[i] === b);
check(magicOk, `${glbPath}: ${glb.length} bytes -> ${baked.length} .sinew bytes in ${(performance.now() - t).toFixed(0)} ms, magic ${magicOk ? 'SINEW' : 'wrong'}`);

t = performance.now();
const again = await importGltf(glb, { wasmUrl, palette: 8 });
check(again.length > 0 && MAGIC.every((b, i) => again[i] === b), `palette 8: ${again.length} bytes in ${(performance.now() - t).toFixed(0)} ms (cached instance)`);

try {
  await importGltf(glb.subarray(0, glb.length >> 1), { wasmUrl });
  check(false, 'a truncated file was accepted');
} catch (e) {
  check(/^malformed GLB container/.test(e.message), `truncated file: ${e.message}`);
}

// The same, on an instance made from the file's bytes.
const { instance } = await WebAssembly.instantiate(wasm, {});
check(importWith(instance, glb, 0).length === baked.length, 'importWith on an instance from the file: same size');
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

process.exit(failed ? 1 : 0);
