// PNG decoding (pngjs) and silhouette comparison: a pixel belongs to the silhouette when it is
// farther than a threshold from the clear color in any channel.
import fs from 'node:fs';
import { PNG } from 'pngjs';

/** The viewers' background: glClearColor(0.12, 0.13, 0.16) in 8 bits. */
export const CLEAR = [0.12, 0.13, 0.16].map((c) => Math.round(c * 255));
/** A channel this far (in 8-bit steps) from the clear color marks a model pixel. */
export const THRESHOLD = 12;

/** Decodes a PNG (a Buffer or a path) to { width, height, data: RGBA bytes }. */
export function readPng(src) {
  const buf = Buffer.isBuffer(src) ? src : fs.readFileSync(src);
  const png = PNG.sync.read(buf);
  return { width: png.width, height: png.height, data: png.data };
}

export function writePng(path, img) {
  const png = new PNG({ width: img.width, height: img.height });
  img.data.copy ? img.data.copy(png.data) : png.data.set(img.data);
  fs.writeFileSync(path, PNG.sync.write(png));
}

/** One byte per pixel: 1 where the pixel differs from `clear` by more than `threshold`. */
export function silhouette(img, clear = CLEAR, threshold = THRESHOLD) {
  const n = img.width * img.height;
  const m = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const p = 4 * i;
    for (let c = 0; c < 3; c++) {
      if (Math.abs(img.data[p + c] - clear[c]) > threshold) {
        m[i] = 1;
        break;
      }
    }
  }
  return m;
}

/** Morphological opening of a mask with a (2r+1)² square: erosion then dilation, which
 * removes everything thinner than 2r+1 pixels (the ground grid's lines) and keeps solid
 * shapes as they were. */
export function open(mask, width, height, r = 1) {
  const pass = (src, keep) => {
    // keep = 1: erosion (all neighbours set), keep = 0: dilation (any neighbour set).
    const dst = new Uint8Array(src.length);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let v = keep;
        for (let dy = -r; dy <= r && v === keep; dy++) {
          for (let dx = -r; dx <= r; dx++) {
            const xx = x + dx;
            const yy = y + dy;
            const s = xx < 0 || yy < 0 || xx >= width || yy >= height ? 0 : src[yy * width + xx];
            if (s !== keep) { v = 1 - keep; break; }
          }
        }
        dst[y * width + x] = v;
      }
    }
    return dst;
  };
  return pass(pass(mask, 1), 0);
}

/** The share of the image's pixels in its silhouette. */
export function coverage(img) {
  const m = silhouette(img);
  let k = 0;
  for (const v of m) k += v;
  return k / m.length;
}

/** Intersection over union of two same-sized images' silhouettes; pixels inside any of the
 * `exclude` rectangles ({ x, y, width, height }) are left out of both; `opening: r` opens
 * both masks first (see `open`); `background: 'corner'` takes each image's top-left pixel
 * as its background instead of CLEAR. Two empty silhouettes
 * give 0, not 1: a comparison of nothing with nothing is no evidence. */
export function iou(a, b, { exclude = [], opening = 0, background = 'clear' } = {}) {
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`image sizes differ: ${a.width}x${a.height} and ${b.width}x${b.height}`);
  }
  // background 'corner': each image's own top-left pixel instead of the viewers' clear color.
  const bg = (img) => (background === 'corner' ? pixel(img, 0, 0) : CLEAR);
  let ma = silhouette(a, bg(a));
  let mb = silhouette(b, bg(b));
  if (opening) {
    ma = open(ma, a.width, a.height, opening);
    mb = open(mb, b.width, b.height, opening);
  }
  const w = a.width;
  const skip = (i) => {
    const x = i % w;
    const y = (i - x) / w;
    return exclude.some((r) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height);
  };
  let inter = 0;
  let union = 0;
  for (let i = 0; i < ma.length; i++) {
    if (!(ma[i] | mb[i])) continue;
    if (exclude.length && skip(i)) continue;
    union++;
    inter += ma[i] & mb[i];
  }
  return union === 0 ? 0 : inter / union;
}

/** The two silhouettes in one picture: both (white), only `a` (red), only `b` (blue). */
export function diffImage(a, b) {
  const ma = silhouette(a);
  const mb = silhouette(b);
  const data = Buffer.alloc(a.width * a.height * 4);
  for (let i = 0; i < ma.length; i++) {
    const [r, g, bl] = ma[i] && mb[i] ? [255, 255, 255] : ma[i] ? [255, 40, 40] : mb[i] ? [40, 80, 255] : [0, 0, 0];
    data.set([r, g, bl, 255], 4 * i);
  }
  return { width: a.width, height: a.height, data };
}

/** The RGB of pixel (x, y). */
export function pixel(img, x, y) {
  const p = 4 * (y * img.width + x);
  return [img.data[p], img.data[p + 1], img.data[p + 2]];
}

/** Whether the four corners are the clear color (within `threshold`): a check that the image
 * is a frame of a viewer at all, with the expected background. */
export function cornersAreClear(img, threshold = THRESHOLD) {
  const { width: w, height: h } = img;
  return [[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]].every(([x, y]) =>
    pixel(img, x, y).every((v, c) => Math.abs(v - CLEAR[c]) <= threshold));
}
