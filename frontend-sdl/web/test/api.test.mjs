// js/sinew.js under Node, on the site's runtime module: what the API promises without a
// browser. Errors are SinewErrors carrying the command line's line for the same file (what
// `sinew info FILE` prints after `sinew: FILE: `), a failed call keeps what was loaded, and the
// views read the module's memory in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sinew, SinewError, Outputs } from '../js/sinew.js';
import { REPO, SINEW, SITE } from './paths.mjs';

const run = promisify(execFile);
const character = fs.readFileSync(path.join(REPO, 'core/fixtures/character.sinew'));

async function runtime(name = 'sinew_web.wasm') {
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(path.join(SITE, name)), {});
  return new Sinew(instance.exports);
}

/** The command line's message for `bytes` as a file: `sinew info` prints `sinew: FILE: MESSAGE`. */
async function cliMessage(bytes) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sinew-api-')), 'bad.sinew');
  fs.writeFileSync(file, bytes);
  const failed = await run(SINEW, ['info', file]).then(() => null, (e) => e.stderr.trim());
  assert.ok(failed, `sinew info accepted ${bytes.length} bad bytes`);
  return failed.slice(`sinew: ${file}: `.length);
}

test('bad files throw the command line message and leave the loaded model working', async () => {
  const sinew = await runtime();
  const model = sinew.open(character);
  const walker = model.character().play('walk');
  const bad = [new Uint8Array(64).fill(0x55), character.subarray(0, 2000), character.subarray(0, 40)];
  for (const bytes of bad) {
    const want = await cliMessage(bytes);
    assert.throws(() => sinew.open(bytes), (e) => e instanceof SinewError && e.message === want, want);
    console.log(`${bytes.length} bytes: ${want}`);
  }
  assert.throws(() => sinew.open(new Uint8Array()), /the file is empty/);
  assert.throws(() => walker.play('fly'), /^SinewError: no clip named or numbered 'fly'$/);
  assert.throws(() => walker.blend('run', 2), /a blend weight is from 0 to 1/);
  assert.throws(() => walker.set('speed', 1), /no graph is running/);
  assert.throws(() => (walker.loop = 'bounce'), /no loop mode 'bounce'/);
  assert.throws(() => walker.useGraph(0), /this module runs no graphs: load sinew_web_graph.wasm/);
  // Still playing after all that.
  walker.advance(0.25).update(Outputs.PALETTES);
  assert.equal(walker.clip, 0);
  assert.ok(Math.abs(walker.time - 0.25) < 1e-6);
});

test('palettes and joint matrices are views of the module memory, renewed after it grows', async () => {
  const sinew = await runtime();
  const model = sinew.open(character);
  const c = model.character();
  c.advance(0.1).update(Outputs.PALETTES);
  const palette = c.palette(0);
  assert.equal(palette.buffer, sinew.wasm.memory.buffer, 'a view, not a copy');
  assert.equal(palette.length, model.skins[0].joints * 16);
  const before = Float32Array.from(palette);
  c.advance(0.1).update(Outputs.PALETTES);
  assert.notDeepEqual(Float32Array.from(c.palette(0)), before, 'the view shows the new frame');
  // More models grow the memory (the old buffer is detached); views taken afterwards read the
  // new one.
  const current = Float32Array.from(c.palette(0));
  const size = sinew.wasm.memory.buffer.byteLength;
  const others = [];
  while (sinew.wasm.memory.buffer.byteLength === size && others.length < 4096) others.push(sinew.open(character));
  assert.ok(sinew.wasm.memory.buffer.byteLength > size, 'the memory grew');
  assert.equal(palette.byteLength, 0, 'the old view is detached');
  assert.equal(c.palette(0).buffer, sinew.wasm.memory.buffer);
  assert.deepEqual(Float32Array.from(c.palette(0)), current);
  assert.equal(c.jointMatrices().length, model.joints * 16);
  others.forEach((m) => m.close());
});

test('a crossfade hands over to the second clip; the graph module runs the graph', async () => {
  const sinew = await runtime();
  const c = sinew.open(character).character().play('walk').crossfade('run', 0.5);
  c.advance(0.25);
  assert.ok(Math.abs(c.weight - 0.5) < 1e-6);
  c.advance(0.3);
  assert.deepEqual([c.clip, c.weight], [1, 0]);
  const graphs = await runtime('sinew_web_graph.wasm');
  const g = graphs.open(character).character().useGraph('character');
  g.set('speed', 2).advance(0.5);
  assert.equal(g.model.graphs[0].states[g.graphState], 'stride');
});
