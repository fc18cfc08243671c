// Where things are: the repository root (three folders up from here), the sinew binary, the
// shared assets beside the repository, and the site and output folders.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SINEW = process.env.SINEW_BIN || path.join(REPO, 'target/debug/sinew');
/** The browser runtime built natively, printing a palette (frontend-sdl/web/examples/palette.rs). */
export const PALETTE = process.env.SINEW_PALETTE_BIN || path.join(REPO, 'target/debug/examples/palette');
/** The shared assets: `SINEW_ASSETS` (a relative one from the repository root) or
 * ../shared/assets beside the repository, as for the Rust tests (tests/assets/README.md). */
export const ASSETS = path.resolve(REPO, process.env.SINEW_ASSETS || '../shared/assets');
/** tests/assets/manifest.tsv: path → bytes of each shared file the tests may read. */
const MANIFEST = new Map(
  fs.readFileSync(path.join(REPO, 'tests/assets/manifest.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.split('\t'))
    .map(([rel, bytes]) => [rel, Number(bytes)]),
);

/** The shared file `rel` (`gltf/Fox/Fox.glb`) under ASSETS. Throws when the manifest does not
 * list it, and with the Rust tests' one line (`sinew_assets::path`) when it is missing. */
export function asset(rel) {
  const bytes = MANIFEST.get(rel);
  if (bytes === undefined) {
    throw new Error(`${rel} is not in tests/assets/manifest.tsv: list it there (path, bytes, SHA-256, license, source)`);
  }
  const root = fs.existsSync(ASSETS) ? fs.realpathSync(ASSETS) : ASSETS;
  const file = path.join(root, rel);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    throw new Error(`shared asset ${rel} is missing from ${root}: run tests/assets/fetch.sh (or point SINEW_ASSETS at a folder that has it)`);
  }
  if (stat.size !== bytes) {
    throw new Error(`shared asset ${rel} in ${root} has ${stat.size} bytes, not the manifest's ${bytes}: run tests/assets/fetch.sh`);
  }
  return file;
}
/** The built site (`bash frontend-sdl/web/build.sh SITE`); `SINEW_SITE` overrides. */
export const SITE = path.resolve(process.env.SINEW_SITE || path.join(REPO, 'target/site'));
/** Where the tests write their frames and numbers for inspection: beside the site. */
export const OUT = path.resolve(process.env.SINEW_WEB_TEST_OUT || path.join(SITE, '../web-test-out'));
