// sinew's runtime in the browser: the wasm module (sinew_web.wasm, built from
// frontend-sdl/web/src) behind a small API. A `.sinew` file is handed over as bytes and read in
// place; characters play, blend and crossfade clips or run the file's graphs; what a renderer
// needs each frame (joint matrices, skin palettes, shader rows, morphed vertices) is read as
// Float32Array views of the module's memory, without copies.
//
//   import { Sinew } from './sinew.js';
//   const sinew = await Sinew.load();                      // fetches the runtime beside this file
//   const model = sinew.open(new Uint8Array(await (await fetch('Fox.sinew')).arrayBuffer()));
//   const fox = model.character();
//   fox.play('Walk').blend('Run', 0.5);
//   fox.advance(1 / 60).update();
//   const palette = fox.palette(0);                        // 16 floats per skin joint
//   const crowd = model.crowd({ count: 1000 });            // the full module (graphs: true)
//   crowd.setCamera(eye, focal).frame(1 / 60);             // one batch into a float texture's texels
//
// Errors are thrown as `SinewError`s carrying the command line's one-line message.

/** What `Character.update` computes besides the pose and the joints' model matrices. */
export const Outputs = Object.freeze({ PALETTES: 1, LBS_ROWS: 2, DQS_ROWS: 4, MORPHS: 8 });

/** Loop modes of `Character.loop`. */
const LOOP_MODES = { loop: 0, once: 1, 'ping-pong': 2 };

/** An error from the runtime: the message is the command line's line for the same failure. */
export class SinewError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SinewError';
  }
}

const utf8 = new TextDecoder();

/** A module using one SIMD instruction (i8x16.popcnt): valid where the engine has simd128. */
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

/** Whether this engine runs WebAssembly SIMD (simd128). */
export const hasSimd = WebAssembly.validate(SIMD_PROBE);

/**
 * The runtime module beside this script: `sinew_web.wasm` (simd128), or `sinew_web_scalar.wasm`
 * where the engine has no SIMD (the same results: the core's lanes are four scalars there);
 * with `graphs`, `sinew_web_graph.wasm`, the full module, which adds the animation graphs'
 * state machines and foot placement (`Sinew#hasFeet`). `simd: false` picks the scalar module
 * anyway.
 */
export function moduleUrl({ graphs = false, simd = hasSimd } = {}) {
  if (graphs && !hasSimd) throw new SinewError("graphs need WebAssembly SIMD (simd128), which this browser's engine lacks");
  const name = graphs ? 'sinew_web_graph.wasm' : simd && hasSimd ? 'sinew_web.wasm' : 'sinew_web_scalar.wasm';
  return new URL(name, import.meta.url);
}

/** The loaded wasm module: its exports and views of its memory. */
export class Sinew {
  /**
   * Instantiates the module from `url` (default: `moduleUrl()`, the runtime beside this script).
   * @param {string|URL} [url]
   * @returns {Promise<Sinew>}
   */
  static async load(url = moduleUrl()) {
    const response = fetch(url);
    let instance;
    try {
      ({ instance } = await WebAssembly.instantiateStreaming(response, {}));
    } catch (e) {
      // Servers that do not send application/wasm: instantiate from the bytes.
      const bytes = await (await fetch(url)).arrayBuffer();
      ({ instance } = await WebAssembly.instantiate(bytes, {}));
    }
    return new Sinew(instance.exports);
  }

  /** @param {WebAssembly.Exports} exports */
  constructor(exports) {
    /** The module's exports (the C ABI of frontend-sdl/web/src/abi.rs). */
    this.wasm = exports;
    /**
     * Whether this module has foot placement (its `sinew_character_feet*` and `*_ground`
     * exports): `sinew_web_graph.wasm` does, `sinew_web.wasm` and `sinew_web_scalar.wasm` do not.
     */
    this.hasFeet = typeof exports.sinew_character_feet_setup === 'function';
    /**
     * Whether this module has spring bones (its `sinew_character_spring*` exports):
     * `sinew_web_graph.wasm` does, `sinew_web.wasm` and `sinew_web_scalar.wasm` do not.
     */
    this.hasSprings = typeof exports.sinew_character_springs_setup === 'function';
    /**
     * Whether this module has crowds (its `sinew_crowd_*` exports, `Model#crowd`):
     * `sinew_web_graph.wasm` does, `sinew_web.wasm` and `sinew_web_scalar.wasm` do not.
     */
    this.hasCrowds = typeof exports.sinew_crowd_new === 'function';
    const limit = exports.sinew_limit;
    /**
     * Whether this module evaluates morph targets (`Outputs.MORPHS`, a draw part's morphed
     * vertices): `sinew_web_graph.wasm` and `sinew_web_scalar.wasm` do, `sinew_web.wasm` does
     * not (its draw parts keep their rest shape).
     */
    this.hasMorphs = limit(11) === 1;
    /**
     * Whether this module computes dual-quaternion rows (`Outputs.DQS_ROWS`):
     * `sinew_web_graph.wasm` and `sinew_web_scalar.wasm` do, `sinew_web.wasm` does not.
     */
    this.hasDqs = limit(12) === 1;
    /**
     * The limits the runtime defines (sinew-host's `limits`): a crossfade's default seconds, the
     * most joints of a model, floats per draw-part vertex, the fewest joints of a palette.
     */
    this.limits = Object.freeze({
      crossfadeSeconds: limit(0),
      maxJoints: limit(1),
      floatsPerVertex: limit(2),
      minPalette: limit(3),
      maxPitch: limit(4),
      nearPerDistance: limit(5),
      farPerDistance: limit(6),
      framing: { yaw: limit(7), pitch: limit(8), fovY: limit(9), distancePerRadius: limit(10) },
    });
    /** A draw part's vertex attributes in order, as `[components, offset in floats]`. */
    this.vertexLayout = [];
    for (let i = 0, a; (a = exports.sinew_vertex_attribute(i)); i++) this.vertexLayout.push([a & 255, a >> 8]);
  }

  /** The floor grid's spacing under a model of `radius`. */
  gridStep(radius) {
    return this.wasm.sinew_grid_step(radius);
  }

  /** The module's memory as bytes (a new view after the memory grew). */
  bytes() {
    return new Uint8Array(this.wasm.memory.buffer);
  }

  /** @returns {string} the module's last text (an error message or a description). */
  text() {
    const w = this.wasm;
    return utf8.decode(new Uint8Array(w.memory.buffer, w.sinew_text_ptr(), w.sinew_text_len()));
  }

  /** Throws the module's last message when `ok` is 0. */
  check(ok) {
    if (!ok) throw new SinewError(this.text());
    return ok;
  }

  /** `length` floats at `address` of the module's memory, viewed in place. */
  floats(address, length) {
    return new Float32Array(this.wasm.memory.buffer, address, length);
  }

  /**
   * Opens a `.sinew` file: its bytes are copied once into the module's memory, which owns
   * them from then on and reads everything in place.
   * @param {Uint8Array|ArrayBuffer} bytes
   * @param {{palette?: number}} [options] joints per draw part at most (parts with more are
   *   split): what the page's uniform budget holds; no limit by default.
   * @returns {Model}
   */
  open(bytes, { palette = 0xffff } = {}) {
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    if (data.length === 0) throw new SinewError('the file is empty');
    const ptr = this.wasm.sinew_alloc(data.length);
    if (!ptr) throw new SinewError(`cannot reserve ${data.length} bytes`);
    this.bytes().set(data, ptr);
    const id = this.check(this.wasm.sinew_model_open(ptr, data.length, palette));
    return new Model(this, id);
  }
}

const bits = new Uint32Array(1);
const asFloat = new Float32Array(bits.buffer);
/** A float the description stores as its IEEE 754 bits. */
function f32(b) {
  bits[0] = b;
  return asFloat[0];
}

/** Model `id`'s description, its floats decoded. */
function describe(sinew, id) {
  sinew.check(sinew.wasm.sinew_model_describe(id));
  const d = JSON.parse(sinew.text());
  for (const c of d.clips) [c.start, c.end] = [f32(c.start), f32(c.end)];
  for (const g of d.graphs) for (const p of g.parameters) p.value = f32(p.value);
  for (const m of d.meshes) for (const p of m.parts) p.color = p.color.map(f32);
  const b = d.bounds;
  [b.center, b.radius, b.floor] = [b.center.map(f32), f32(b.radius), f32(b.floor)];
  return d;
}

/** A loaded model: its skeleton, clips, graphs, meshes and textures. */
export class Model {
  constructor(sinew, id) {
    this.sinew = sinew;
    this.id = id;
    const d = describe(sinew, id);
    /** Number of joints. */
    this.joints = d.joints;
    /** Joint names. */
    this.jointNames = d.jointNames;
    /** Each joint's parent index, -1 for a root. */
    this.parents = d.parents;
    /** Joints per draw part's palette at most. */
    this.palette = d.palette;
    /** Skins: `{joints}` each. */
    this.skins = d.skins;
    /** Clips: `{name, start, end}` each (seconds). */
    this.clips = d.clips;
    /** Graphs: `{name, states, parameters: [{name, kind, value}]}` each. */
    this.graphs = d.graphs;
    /**
     * Meshes: `{name, skin, node, morph, parts}`; each part `{source, vertices, vertexCount,
     * indices, indexCount, joints, map, rigid, color, texture, wrapS, wrapT, mag, min}` where
     * `vertices`, `indices` and `map` are addresses (see `vertexData`, `indexData`, `partMap`).
     */
    this.meshes = d.meshes;
    /** Textures: `{name, width, height, format ('rgba8' or 'rgb565'), texels, length}`. */
    this.textures = d.textures;
    /** Bind-pose bounds: `{center: [x, y, z], radius, floor}`. */
    this.bounds = d.bounds;
  }

  /** Index of a clip by name or decimal index; throws for neither. */
  clipIndex(key) {
    if (typeof key === 'number' && Number.isInteger(key) && key >= 0 && key < this.clips.length) return key;
    const i = this.clips.findIndex((c) => c.name === key);
    if (i >= 0) return i;
    const n = Number(key);
    if (String(key).trim() !== '' && Number.isInteger(n) && n >= 0 && n < this.clips.length) return n;
    throw new SinewError(`no clip named or numbered '${key}'`);
  }

  /** Index of a graph by name or index; throws for neither. */
  graphIndex(key) {
    if (typeof key === 'number' && key >= 0 && key < this.graphs.length) return key;
    const i = this.graphs.findIndex((g) => g.name === key);
    if (i < 0) throw new SinewError(`no graph named '${key}'`);
    return i;
  }

  /** A draw part's interleaved vertices (`limits.floatsPerVertex` floats each: position, normal, joints, weights, uv, color), in place. */
  vertexData(part) {
    return this.sinew.floats(part.vertices, part.vertexCount * this.sinew.limits.floatsPerVertex);
  }

  /** A draw part's 16-bit triangle indices, in place. */
  indexData(part) {
    return new Uint16Array(this.sinew.wasm.memory.buffer, part.indices, part.indexCount);
  }

  /** A draw part's palette: the skin joint of each of its joint indices (empty for a rigid part), in place. */
  partMap(part) {
    return new Uint16Array(this.sinew.wasm.memory.buffer, part.map, part.rigid ? 0 : part.joints);
  }

  /** A texture's texels, in place (RGBA8, or RGB565 little-endian). */
  texels(texture) {
    return new Uint8Array(this.sinew.wasm.memory.buffer, texture.texels, texture.length);
  }

  /**
   * A texture's texels as RGBA8: in place for an RGBA8 texture, a widened copy for an RGB565
   * one (each channel's bits repeated into 8, as the core's `Rgb565::unpack` does).
   */
  rgba(texture) {
    const src = this.texels(texture);
    if (texture.format !== 'rgb565') return src;
    const out = new Uint8Array(texture.width * texture.height * 4);
    for (let i = 0; i < texture.width * texture.height; i++) {
      const c = src[2 * i] | (src[2 * i + 1] << 8);
      const [r, g, b] = [(c >> 11) & 31, (c >> 5) & 63, c & 31];
      out.set([(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2), 255], 4 * i);
    }
    return out;
  }

  /** A new character of this model, playing its first clip. */
  character() {
    return new Character(this, this.sinew.check(this.sinew.wasm.sinew_character_new(this.id)));
  }

  /**
   * A crowd of `count` instances of this model (its first skin, every clip), arranged on a grid
   * on the ground, each at its own clip, phase, speed and heading (sinew-host's `crowd`). With
   * `lod` (default on) instances at the same quantized time share one evaluated pose and far
   * instances update every 2nd, 4th or 8th frame (`Crowd#setCamera` decides which); without it
   * every instance is evaluated every frame. `zUp`: the model's up axis is +Z. Throws in a
   * module without crowds (`Sinew#hasCrowds`) and for a model without a skin or clips.
   * @param {{count: number, lod?: boolean, zUp?: boolean}} options
   * @returns {Crowd}
   */
  crowd({ count, lod = true, zUp = false }) {
    const w = this.sinew.wasm;
    if (!this.sinew.hasCrowds) throw new SinewError('this module has no crowds: load sinew_web_graph.wasm (moduleUrl({ graphs: true }))');
    return new Crowd(this, this.sinew.check(w.sinew_crowd_new(this.id, count, lod ? 1 : 0, zUp ? 1 : 0)));
  }

  /** Releases the model (its characters keep it until they are freed). */
  close() {
    this.sinew.wasm.sinew_model_close(this.id);
  }
}

/** Character `c`'s module's foot placement export `name`; throws in a module without it. */
function feetExport(c, name) {
  if (!c.sinew.hasFeet) throw new SinewError('this module has no foot placement: load sinew_web_graph.wasm (moduleUrl({ graphs: true }))');
  return c.sinew.wasm[name];
}

/** Character `c`'s module's spring bones export `name`; throws in a module without it. */
function springsExport(c, name) {
  if (!c.sinew.hasSprings) throw new SinewError('this module has no spring bones: load sinew_web_graph.wasm (moduleUrl({ graphs: true }))');
  return c.sinew.wasm[name];
}

/** One animated instance of a model. Methods that change playback return the character. */
export class Character {
  constructor(model, id) {
    this.model = model;
    this.sinew = model.sinew;
    this.id = id;
  }

  /** Plays a clip (name or index) alone, from its start; a running graph stops. */
  play(clip) {
    this.sinew.check(this.sinew.wasm.sinew_character_play(this.id, this.model.clipIndex(clip)));
    return this;
  }

  /** Blends a second clip in at `weight` (0 to 1) over the playing one. */
  blend(clip, weight) {
    this.sinew.check(this.sinew.wasm.sinew_character_blend(this.id, this.model.clipIndex(clip), weight));
    return this;
  }

  /**
   * Crossfades to a clip over `seconds` (by default the runtime's `limits.crossfadeSeconds`),
   * linearly or with `curve: 'smoothstep'`; with `sync`, the clip starts at the playing one's
   * phase and they stay in phase through the fade.
   */
  crossfade(clip, seconds = this.sinew.limits.crossfadeSeconds, { curve = 'linear', sync = false } = {}) {
    const flags = (curve === 'smoothstep' ? 1 : 0) | (sync ? 2 : 0);
    this.sinew.check(this.sinew.wasm.sinew_character_crossfade(this.id, this.model.clipIndex(clip), seconds, flags));
    return this;
  }

  /** Moves the playing clip to `time` seconds (on the clip's timeline). */
  seek(time) {
    this.sinew.wasm.sinew_character_seek(this.id, time);
    return this;
  }

  /** Plays or pauses. */
  set playing(on) {
    this.sinew.wasm.sinew_character_set_playing(this.id, on ? 1 : 0);
  }

  /** Speed factor of the clips. */
  set speed(s) {
    this.sinew.wasm.sinew_character_set_speed(this.id, s);
  }

  /** Loop mode: 'loop', 'once' or 'ping-pong'. */
  set loop(mode) {
    if (!(mode in LOOP_MODES)) throw new SinewError(`no loop mode '${mode}' (loop, once, ping-pong)`);
    this.sinew.wasm.sinew_character_set_loop(this.id, LOOP_MODES[mode]);
  }

  /** Index of the playing clip (-1: none, or a graph runs). */
  get clip() {
    return this.sinew.wasm.sinew_character_clip(this.id);
  }

  /** The playing clip's time, in seconds. */
  get time() {
    return this.sinew.wasm.sinew_character_time(this.id);
  }

  /** The second clip's weight. */
  get weight() {
    return this.sinew.wasm.sinew_character_weight(this.id);
  }

  /** Runs one of the file's graphs (name or index) from its initial state; `null` stops it. */
  useGraph(graph) {
    const i = graph === null ? -1 : this.model.graphIndex(graph);
    this.sinew.check(this.sinew.wasm.sinew_character_use_graph(this.id, i));
    this.graphIndex = i;
    return this;
  }

  /** Sets a parameter of the running graph (name or index): a number, or a boolean for flags and triggers. */
  set(parameter, value) {
    const g = this.model.graphs[this.graphIndex ?? -1];
    if (!g) throw new SinewError('no graph is running');
    const p = typeof parameter === 'number' ? parameter : g.parameters.findIndex((x) => x.name === parameter);
    if (p < 0 || p >= g.parameters.length) throw new SinewError(`unknown parameter '${parameter}'`);
    this.sinew.check(this.sinew.wasm.sinew_character_set_parameter(this.id, p, Number(value)));
    return this;
  }

  /** A parameter's current value in the running graph (NaN without one). */
  parameter(p) {
    return this.sinew.wasm.sinew_character_parameter(this.id, p);
  }

  /** The running graph's current state index (-1 without a graph). */
  get graphState() {
    return this.sinew.wasm.sinew_character_graph_state(this.id);
  }

  /** Advances time by `dt` seconds. */
  advance(dt) {
    this.sinew.check(this.sinew.wasm.sinew_character_advance(this.id, dt));
    return this;
  }

  /** Computes the pose, the joints' model matrices and `outputs` (flags of `Outputs`; palettes by default). */
  update(outputs = Outputs.PALETTES) {
    this.sinew.check(this.sinew.wasm.sinew_character_update(this.id, outputs));
    return this;
  }

  /** The joints' model matrices: 16 floats each, column-major, in place. */
  jointMatrices() {
    return this.sinew.floats(this.sinew.wasm.sinew_character_joints(this.id), this.model.joints * 16);
  }

  /** The box of the joints in the pose of the last `update`: `{center: [x, y, z], radius, floor}`. */
  poseBounds() {
    const k = (i) => this.sinew.wasm.sinew_character_bounds(this.id, i);
    return { center: [k(0), k(1), k(2)], radius: k(3), floor: k(4) };
  }

  /** Bone lines: from each joint with a parent to it, 6 floats (two model-space points) each. */
  bones() {
    const m = this.jointMatrices();
    const out = [];
    this.model.parents.forEach((p, j) => {
      if (p >= 0) out.push(m[p * 16 + 12], m[p * 16 + 13], m[p * 16 + 14], m[j * 16 + 12], m[j * 16 + 13], m[j * 16 + 14]);
    });
    return new Float32Array(out);
  }

  /**
   * Sets up foot placement, off: the legs the humanoid naming finds stand on the runtime's ground
   * beside them (a step under one side, a slope under the other). False for a model without legs
   * by name (the reason in `sinew.text()`). Throws in a module without foot placement
   * (`Sinew#hasFeet`).
   */
  setupFeet() {
    return feetExport(this, 'sinew_character_feet_setup')(this.id) === 1;
  }

  /** Turns foot placement on or off: ramped over its blend time as time advances, or `atOnce`. */
  feet(on, atOnce = false) {
    this.sinew.check(feetExport(this, 'sinew_character_feet')(this.id, (on ? 1 : 0) | (atOnce ? 2 : 0)));
    return this;
  }

  /** The weight foot placement applied in the last `update`, 0 (off) to 1 (on); NaN without it. */
  get feetWeight() {
    return this.sinew.hasFeet ? this.sinew.wasm.sinew_character_feet_weight(this.id) : NaN;
  }

  /** The height of the ground foot placement stands the feet on, under (x, z); NaN without it. */
  ground(x, z) {
    return this.sinew.hasFeet ? this.sinew.wasm.sinew_character_ground(this.id, x, z, 0) : NaN;
  }

  /** Sets that ground: the floor's height, the x between the step (below it) and the slope, the step's height, the slope's grade along +Z. */
  setGround(height, edge, step, grade) {
    this.sinew.check(feetExport(this, 'sinew_character_set_ground')(this.id, height, edge, step, grade));
    return this;
  }

  /**
   * Places the character in the world (model space to world space) for the next updates:
   * foot placement asks its ground there, and the spring bones swing as it moves.
   * @param {number[]} translation `[x, y, z]`
   * @param {number[]} [rotation] a quaternion `[x, y, z, w]` (normalized by the runtime)
   * @param {number} [scale] uniform, above 0
   * @returns {Character}
   */
  setWorld(translation, rotation = [0, 0, 0, 1], scale = 1) {
    const w = this.sinew.wasm.sinew_character_set_world;
    if (!w) throw new SinewError('this module has no world placement: load sinew_web_graph.wasm (moduleUrl({ graphs: true }))');
    this.sinew.check(w(this.id, ...translation, ...rotation, scale));
    return this;
  }

  /**
   * Sets up the model's spring bones (its file's spring section), stepped `rate` times a second
   * at most `maxSteps` times an update, on or off. False for a model without spring bones (the
   * reason in `sinew.text()`); throws for bad settings, and in a module without spring bones
   * (`Sinew#hasSprings`).
   * @param {{on?: boolean, rate?: number, maxSteps?: number}} [options] on by default; 60 Hz
   *   and 4 steps by default
   * @returns {boolean}
   */
  setupSprings({ on = true, rate = 60, maxSteps = 4 } = {}) {
    // 1 set up, 2 no spring bones in the file, 0 an error.
    return this.sinew.check(springsExport(this, 'sinew_character_springs_setup')(this.id, rate, maxSteps, on ? 1 : 0)) === 1;
  }

  /** Turns the spring bones on or off (switched on, they start at rest); `reset` puts them at rest in the next update. */
  springs(on, reset = false) {
    this.sinew.check(springsExport(this, 'sinew_character_springs')(this.id, (on ? 1 : 0) | (reset ? 2 : 0)));
    return this;
  }

  /**
   * What the spring bones did in the last `update`: `{on, reset, steps, contacts, dropped,
   * joints, colliders}` (`dropped` in seconds), or null without a set-up (or in a module
   * without spring bones).
   */
  get springFrame() {
    const f = this.sinew.wasm.sinew_character_spring_frame;
    if (!f) return null;
    const k = (i) => f(this.id, i);
    if (Number.isNaN(k(0))) return null;
    return { on: k(0) === 1, reset: k(1) === 1, steps: k(2), contacts: k(3), dropped: k(4), joints: k(5), colliders: k(6) };
  }

  /**
   * The spring joints in the order they run, as `{joint, child}` skeleton indices (`child` -1
   * for a tail without a joint); empty without a set-up.
   */
  springJoints() {
    const f = this.sinew.wasm.sinew_character_spring_joint;
    const out = [];
    for (let i = 0, j; f && (j = f(this.id, i, 0)) >= 0; i++) out.push({ joint: j, child: f(this.id, i, 1) });
    return out;
  }

  /**
   * The spring colliders as wire lines in world space, in the pose of the last `update` and the
   * world as set now: x, y, z per point, two points per line, copied out. Throws without a
   * spring set-up, and in a module without spring bones (`Sinew#hasSprings`).
   * @returns {{outside: Float32Array, inside: Float32Array}} the colliders that keep the tails
   *   out, and those that keep them in
   */
  colliderLines() {
    // Computed once into the module's buffer, then both sets copied out of it.
    this.sinew.check(springsExport(this, 'sinew_character_collider_lines')(this.id));
    const w = this.sinew.wasm;
    const set = (k) => this.sinew.floats(w.sinew_collider_lines_ptr(k), w.sinew_collider_lines_len(k)).slice();
    return { outside: set(0), inside: set(1) };
  }

  /** Skin `skin`'s palette (model × inverse bind): 16 floats per skin joint, column-major, in place. */
  palette(skin = 0) {
    const s = this.model.skins[skin];
    if (!s) throw new SinewError(`no skin ${skin}`);
    return this.sinew.floats(this.sinew.wasm.sinew_character_palette(this.id, skin), s.joints * 16);
  }

  /** A draw part's output `what` (0 LBS rows, 1 DQS rows, 2 morphed vertices), in place. */
  partData(mesh, part, what) {
    const w = this.sinew.wasm;
    const len = w.sinew_character_part_len(this.id, mesh, part, what);
    return len ? this.sinew.floats(w.sinew_character_part_ptr(this.id, mesh, part, what), len) : null;
  }

  /** Frees the character. */
  free() {
    this.sinew.wasm.sinew_character_free(this.id);
  }
}

/**
 * A crowd of one model (`Model#crowd`): its poses evaluated in one batch per frame into a
 * palette laid out as an RGBA float texture, and 16 floats per instance for instanced drawing.
 *
 * The palette texture is `textureSize()` texels; slot texel (x0, y) starts an instance's
 * palette, skin joint `j`'s affine skin matrix in the three texels (x0 + 3j + k, y), k = 0, 1, 2
 * its rows (x, y, z, translation each). The palette holds the whole skin 0 (skin order), so a
 * draw part's local joint indices go through `Model#partMap` first.
 */
export class Crowd {
  constructor(model, id) {
    this.model = model;
    this.sinew = model.sinew;
    this.id = id;
    /** Instances. */
    this.count = this.sinew.wasm.sinew_crowd_len(id);
  }

  /**
   * Sets each instance's level of detail from the radius it projects to, seen from `eye`
   * (`[x, y, z]`, world space) through a lens of `focal` pixels per unit at unit distance (the
   * viewport's height / (2 tan(fovY / 2))). Without levels of detail nothing changes.
   */
  setCamera(eye, focal) {
    this.sinew.check(this.sinew.wasm.sinew_crowd_set_camera(this.id, eye[0], eye[1], eye[2], focal));
    return this;
  }

  /**
   * Advances the crowd by `dt` seconds and evaluates the frame's poses into the palette.
   * @returns {{evaluated: number, shared: number, held: number}} poses evaluated, instances
   *   that shared one of them, instances that kept an earlier frame's pose
   */
  frame(dt) {
    const w = this.sinew.wasm;
    this.sinew.check(w.sinew_crowd_frame(this.id, dt));
    return { evaluated: w.sinew_crowd_stat(this.id, 0), shared: w.sinew_crowd_stat(this.id, 1), held: w.sinew_crowd_stat(this.id, 2) };
  }

  /** The palette texture's texels: RGBA floats row after row (4 × width × height), in place. */
  palette() {
    const w = this.sinew.wasm;
    return this.sinew.floats(w.sinew_crowd_palette_ptr(this.id), w.sinew_crowd_palette_len(this.id));
  }

  /**
   * What a view frames: the center of the placed models' centers and a radius holding the
   * grid's half side plus the model's radius (the host's rule, the desktop viewer's too).
   * @returns {{center: number[], radius: number}}
   */
  bounds() {
    const b = (k) => this.sinew.wasm.sinew_crowd_bounds(this.id, k);
    return { center: [b(0), b(1), b(2)], radius: b(3) };
  }

  /**
   * The palette texture's size in texels, with the palette slots per row and the joints of a
   * slot (three texels each).
   * @returns {{width: number, height: number, perRow: number, joints: number}}
   */
  textureSize() {
    const t = (k) => this.sinew.wasm.sinew_crowd_texture(this.id, k);
    return { width: t(0), height: t(1), perRow: t(2), joints: t(3) };
  }

  /**
   * The texture rows the last `frame` wrote, the part to upload (texSubImage2D of rows
   * `first` to `end - 1`); null when it wrote none.
   * @returns {{first: number, end: number} | null}
   */
  writtenRows() {
    const w = this.sinew.wasm;
    const [first, end] = [w.sinew_crowd_written_rows(this.id, 0), w.sinew_crowd_written_rows(this.id, 1)];
    return end > first ? { first, end } : null;
  }

  /**
   * The instances' rows, 16 floats each, in place: rows 0 to 2 of its placement (model to
   * world; x, y, z, translation each), then the texel where its palette slot starts (column,
   * row) and two zeros. Slots change from frame to frame: read them after each `frame`.
   * @returns {Float32Array}
   */
  instanceRows() {
    const w = this.sinew.wasm;
    const ptr = this.sinew.check(w.sinew_crowd_instance_rows(this.id));
    return this.sinew.floats(ptr, w.sinew_crowd_instance_rows_len(this.id));
  }

  /** Frees the crowd. */
  free() {
    this.sinew.wasm.sinew_crowd_free(this.id);
  }
}
