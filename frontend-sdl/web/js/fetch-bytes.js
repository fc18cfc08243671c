// A file's bytes over fetch, for the bench pages.

/**
 * Fetches `url` and returns its body.
 * @param {string} url
 * @returns {Promise<Uint8Array>}
 * @throws {Error} naming the URL and the HTTP status when the response is not OK.
 */
export async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}
