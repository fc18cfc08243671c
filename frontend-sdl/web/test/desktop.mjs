// Reference frames from the desktop viewer: `sinew demo MODEL --clip C --time T --no-hud
// --screenshot PNG`, on DISPLAY when set (as the Rust demo tests do), else on a private Xvfb
// through `xvfb-run -a`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import { SINEW, PALETTE } from './paths.mjs';
import { readPng } from './image.mjs';

const run = promisify(execFile);

/** Renders one still frame and returns the decoded PNG (also left at `png`). */
export async function desktopFrame({ model, clip, time, width, height, palette, png }) {
  if (!fs.existsSync(SINEW)) throw new Error(`${SINEW} not found: cargo build -p sinew-frontend`);
  const args = ['demo', model, '--clip', clip, '--time', String(time), '--width', String(width),
    '--height', String(height), '--no-hud', '--screenshot', png];
  if (palette !== undefined) args.push('--palette', String(palette));
  fs.rmSync(png, { force: true });
  const [cmd, argv] = process.env.DISPLAY
    ? [SINEW, args]
    : ['xvfb-run', ['-a', '-s', '-screen 0 1280x1024x24 -nolisten tcp', SINEW, ...args]];
  try {
    await run(cmd, argv, { timeout: 120_000, maxBuffer: 16 << 20 });
  } catch (e) {
    throw new Error(`${cmd} ${argv.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  return readPng(png);
}

/** `sinew dump MODEL --clip C --time T` as parsed JSON. */
export async function dump(model, clip, time) {
  const { stdout } = await run(SINEW, ['dump', model, '--clip', clip, '--time', String(time)], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

/** The browser runtime's palette computed natively (`cargo run -p sinew-web --example palette --
 * MODEL CLIP T`): skin 0's 16 floats per joint, shortest round-trip. */
export async function nativePalette(model, clip, time) {
  if (!fs.existsSync(PALETTE)) throw new Error(`${PALETTE} not found: cargo build -p sinew-web --example palette`);
  const { stdout } = await run(PALETTE, [model, clip, String(time)], { maxBuffer: 16 << 20 });
  return JSON.parse(stdout).palette;
}
