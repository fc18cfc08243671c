// Headless Chromium through playwright-core (no bundled browser: the system's chromium), with
// a real WebGL 1 context from SwiftShader (ANGLE on its Vulkan device), as root.
import { chromium } from 'playwright-core';
import fs from 'node:fs';

export const CHROMIUM = process.env.SINEW_CHROMIUM || '/usr/bin/chromium';

/** The flags that give WebGL headless: no sandbox (CI runs as root), the new headless mode,
 * and ANGLE on SwiftShader, allowed explicitly (Chromium otherwise refuses the software
 * fallback or blocklists it), the same on any machine whatever its GPU. */
export const LAUNCH_ARGS = [
  '--no-sandbox',
  '--headless=new',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
  '--disable-gpu-vsync',
  '--hide-scrollbars',
  '--force-color-profile=srgb',
];

export async function launch() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install chromium (apt-get install chromium) or set SINEW_CHROMIUM`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS, headless: true });
}

/** A page that records page errors (uncaught exceptions), console.error messages and failed
 * requests in `page.problems`; `checkClean(page)` throws when any were recorded. */
export async function newPage(browser, { width = 1024, height = 768 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.stack || e.message}`));
  // The browser asks for /favicon.ico on its own; a site without one is no error.
  const favicon = (url) => /\/favicon\.ico(\?|$)/.test(url || '');
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location()?.url;
    if (favicon(where)) return;
    page.problems.push(`console.error: ${m.text()}${where ? ` (${where})` : ''}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !favicon(r.url())) page.problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  // A request the page itself cancels (net::ERR_ABORTED: a stream reader let go, a navigation)
  // is no failure; the others (refused, reset, ...) are.
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    if (why !== 'net::ERR_ABORTED') page.problems.push(`request failed: ${r.url()} ${why}`);
  });
  page.on('crash', () => page.problems.push('page crashed'));
  return page;
}

/** Throws when the page reported errors; `allow` (a predicate) exempts expected ones. */
export function checkClean(page, allow = () => false) {
  const bad = page.problems.filter((p) => !allow(p));
  if (bad.length) throw new Error(`the page reported errors:\n${bad.join('\n')}`);
}

/** Waits for `document.body.dataset.state` to be "ready" or start with "error", returns it. */
export async function waitForState(page, timeout = 60_000) {
  try {
    await page.waitForFunction(
      () => {
        const s = document.body && document.body.dataset.state;
        return s === 'ready' || (typeof s === 'string' && s.startsWith('error'));
      },
      null,
      { timeout, polling: 50 },
    );
  } catch (e) {
    const s = await page.evaluate(() => document.body && document.body.dataset.state).catch(() => undefined);
    throw new Error(`no dataset.state "ready"/"error: ..." within ${timeout} ms (state: ${JSON.stringify(s)}; ` +
      `problems: ${page.problems.join(' | ') || 'none'})`);
  }
  return page.evaluate(() => document.body.dataset.state);
}

/** Opens `url` and waits for the page to report "ready"; throws with the page's message
 * otherwise. */
export async function openReady(page, url, timeout = 60_000) {
  const resp = await page.goto(url, { waitUntil: 'load' });
  if (!resp || !resp.ok()) throw new Error(`${url}: HTTP ${resp && resp.status()}`);
  const state = await waitForState(page, timeout);
  if (state !== 'ready') throw new Error(`${url}: dataset.state = ${JSON.stringify(state)}`);
  return state;
}

/** Waits for bench.html's `dataset.result` (or an "error: ..." state) and returns the result's
 * lines; throws with the page's state and problems otherwise. */
export async function benchResult(page, timeout) {
  try {
    await page.waitForFunction(
      () => document.body.dataset.result || /^error/.test(document.body.dataset.state || ''),
      null,
      { timeout, polling: 100 },
    );
  } catch {
    // (the state and problems below say why)
  }
  const { result, state } = await page.evaluate(() => ({ result: document.body.dataset.result, state: document.body.dataset.state }));
  if (!result) {
    throw new Error(`bench.html wrote no dataset.result within ${timeout} ms (state: ${JSON.stringify(state)}; ` +
      `problems: ${page.problems.join(' | ') || 'none'})`);
  }
  return result;
}
