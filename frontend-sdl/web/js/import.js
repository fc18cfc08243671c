// sinew's glTF importer in the browser: loads `sinew_web_import.wasm` (the `sinew-web-import`
// package built for wasm32-unknown-unknown) on first use and turns the bytes of a `.glb` file,
// or of a `.gltf` file whose buffers and images are `data:` URIs, into `.sinew` bytes.
//
// The module imports nothing and exports a plain C ABI:
//   sinew_import_alloc(len) -> ptr          memory for the input bytes
//   sinew_import_free(ptr, len)             releases it
//   sinew_import(ptr, len, palette) -> 1|0  imports and bakes (palette 0: no limit)
//   sinew_import_result_ptr/len()           the .sinew bytes of the last success
//   sinew_import_error_ptr/len()            the one-line UTF-8 message of the last failure
//   sinew_import_notes_ptr/len()            the last success's notes, UTF-8, one per line

/** @type {Map<string, Promise<WebAssembly.Instance>>} Instances by URL, created once each. */
const instances = new Map();

/**
 * Fetches and instantiates the module at `url` (streaming compilation where the server sends
 * `application/wasm`, otherwise from the whole response's bytes).
 * @param {string} url
 * @returns {Promise<WebAssembly.Instance>}
 */
async function instantiate(url) {
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    try {
      const { instance } = await WebAssembly.instantiateStreaming(fetch(url), {});
      return instance;
    } catch (_) {
      // A wrong MIME type or a missing streaming API: compile from the bytes below.
    }
  }
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`cannot load the glTF importer ${url}: HTTP ${response.status}`);
  }
  const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {});
  return instance;
}

/**
 * The cached instance of the module at `url`; a failed load is not cached.
 * @param {string} url
 * @returns {Promise<WebAssembly.Instance>}
 */
function instanceFor(url) {
  let p = instances.get(url);
  if (!p) {
    p = instantiate(url);
    instances.set(url, p);
    p.catch(() => instances.delete(url));
  }
  return p;
}

/**
 * Runs the importer of `instance` on `bytes`.
 * @param {WebAssembly.Instance} instance
 * @param {Uint8Array} bytes
 * @param {number} palette
 * @returns {{ bytes: Uint8Array, notes: string[] }} the .sinew bytes, copied out of the module's
 *   memory, and the import's notes (what it left out or changed), one string each
 */
export function importWith(instance, bytes, palette) {
  const x = instance.exports;
  const len = bytes.length >>> 0;
  const ptr = x.sinew_import_alloc(len);
  if (len > 0 && ptr === 0) {
    throw new Error(`the glTF importer cannot allocate ${len} bytes`);
  }
  let ok;
  try {
    // The memory's buffer is read after every call: the module's memory may have grown.
    new Uint8Array(x.memory.buffer, ptr, len).set(bytes);
    ok = x.sinew_import(ptr, len, palette >>> 0);
  } finally {
    x.sinew_import_free(ptr, len);
  }
  const view = (p, n) => new Uint8Array(x.memory.buffer, p >>> 0, n >>> 0);
  if (ok === 1) {
    const text = new TextDecoder().decode(view(x.sinew_import_notes_ptr(), x.sinew_import_notes_len()));
    return { bytes: view(x.sinew_import_result_ptr(), x.sinew_import_result_len()).slice(), notes: text ? text.split('\n') : [] };
  }
  throw new Error(new TextDecoder().decode(view(x.sinew_import_error_ptr(), x.sinew_import_error_len())));
}

/**
 * The message the module stored for a panic before it trapped, or a generic one.
 * @param {WebAssembly.Instance} instance
 * @param {unknown} trap
 * @returns {string}
 */
function trapMessage(instance, trap) {
  try {
    const x = instance.exports;
    const n = x.sinew_import_error_len();
    if (n > 0) {
      return new TextDecoder().decode(new Uint8Array(x.memory.buffer, x.sinew_import_error_ptr() >>> 0, n));
    }
  } catch (_) {
    // Nothing readable: the generic message below.
  }
  return `internal error in the importer: ${trap}`;
}

/**
 * Imports a glTF file (a `.glb`, or a `.gltf` with `data:` URIs only) and bakes it to `.sinew`
 * bytes, with bone palettes of at most `palette` joints per mesh part (0: no limit) and 4
 * influences per vertex, as `sinew demo` bakes imported files.
 *
 * The importer module is fetched on the first call and kept for the next ones.
 *
 * @param {Uint8Array} bytes the file's bytes
 * @param {{ wasmUrl?: string | URL, palette?: number }} [options]
 * @returns {Promise<{ bytes: Uint8Array, notes: string[] }>} the baked `.sinew` bytes and the
 *   import's notes
 * @throws {Error} with the importer's one-line message when the file cannot be imported
 */
export async function importGltf(bytes, { wasmUrl = new URL('sinew_web_import.wasm', import.meta.url), palette = 0 } = {}) {
  const url = String(wasmUrl);
  const instance = await instanceFor(url);
  try {
    return importWith(instance, bytes, palette);
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) {
      // The module trapped (a panic): its state is no longer trusted, the next call loads a
      // fresh instance.
      instances.delete(url);
      throw new Error(trapMessage(instance, e));
    }
    throw e;
  }
}
