// Where things are: the repository root (three folders up from here), the sinew binary, the
// shared assets beside the repository, and the site and output folders.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SINEW = process.env.SINEW_BIN || path.join(REPO, 'target/debug/sinew');
/** The browser runtime built natively, printing a palette (frontend-sdl/web/examples/palette.rs). */
export const PALETTE = process.env.SINEW_PALETTE_BIN || path.join(REPO, 'target/debug/examples/palette');
export const ASSETS = process.env.SINEW_ASSETS || path.join(REPO, '../shared/assets');
/** The built site (`bash frontend-sdl/web/build.sh SITE`); `SINEW_SITE` overrides. */
export const SITE = path.resolve(process.env.SINEW_SITE || path.join(REPO, 'target/site'));
/** Where the tests write their frames and numbers for inspection: beside the site. */
export const OUT = path.resolve(process.env.SINEW_WEB_TEST_OUT || path.join(SITE, '../web-test-out'));
