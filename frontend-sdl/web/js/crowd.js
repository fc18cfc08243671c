// The crowd page (crowd.html): N instances of one model evaluated by sinew's runtime in one batch
// per frame (`Model#crowd`) and drawn with WebGL 1.
//
// Drawing: where the context has OES_texture_float, ANGLE_instanced_arrays and vertex texture
// units (and the palette texture fits MAX_TEXTURE_SIZE), one instanced draw per draw part with
// the shared shaders skin_common.vert.glsl + skin_crowd.vert.glsl: the palette in a float
// texture (only the rows a frame wrote are uploaded again, texSubImage2D), each instance's
// placement and palette texel as instanced attributes. Otherwise, or with `instanced=0`, each
// instance's parts are drawn one by one with the uniform-palette shader (skin_lbs.vert.glsl),
// their rows taken from the crowd's palette, and the page says so once.
//
// URL: ?model=URL.sinew&n=N&lod=0|1&instanced=0&paused=1&time=T&width=W&height=H&hud=0&maxVectors=N
//   paused=1: one frame of T seconds (default 0.5) is evaluated and drawn, then nothing moves;
//   maxVectors caps the vertex uniform vectors of the uniform-palette path.
// Bench mode, when `gltf=URL.glb` is given: nothing is drawn on either side; the crowd's CPU time
// per frame (frame, instance rows, the written rows' texels to upload), then three.js's for the
// same N (a SkeletonUtils clone, an AnimationMixer playing the instance's clip at its phase and
// speed per instance, mixer.update, scene.updateMatrixWorld, skeleton.update per skinned mesh),
// both after a warm-up, in this page load; `ms=M` times each side for at least M milliseconds
// (default 1000 for sinew, at least 240 frames; 2000 for three.js, at least 8). `document.body.dataset.result` gets the lines
//   sinew-web crowd-frame NAME n N ms X evaluated E draws D
//   three.js crowd-frame NAME n N ms X draws D
// (E the mean poses evaluated per frame; D the draw calls each side's renderer issues for a
// frame: one per part instanced, one per part and instance otherwise, one per skinned mesh and
// clone for three.js).
// Test hooks: document.body.dataset.state ('loading', 'ready', 'error: <message>'),
// dataset.mode ('instanced' or 'uniforms'), dataset.draws, dataset.notice, window.sinewCrowd.

import { Sinew, moduleUrl } from './sinew.js';
import { framing, eye, viewProj } from './camera.js';
import { fetchBytes } from './fetch-bytes.js';
import { ATTRIBUTES, shaderSources, program as linkProgram } from './gl.js';

const params = new URLSearchParams(location.search);
const canvas = document.getElementById('view');
const stats = document.getElementById('stats');
const message = document.getElementById('message');

const INSTANCE_ATTRIBUTES = ['a_instance0', 'a_instance1', 'a_instance2', 'a_instanceSlot'];

/** A program with the part's attributes at locations 0 to 5 and the instance's at 6 to 9. */
function program(gl, vertex, fragment, uniforms) {
  return linkProgram(gl, vertex, fragment, uniforms, [...ATTRIBUTES, ...INSTANCE_ATTRIBUTES]);
}

/** Floats per instance of `Crowd#instanceRows`. */
const INSTANCE_FLOATS = 16;
/** Uniform vectors the uniform-palette shader uses besides the palette. */
const RESERVED_VECTORS = 16;
/** Uniform vectors per joint of the uniform-palette shader: three affine rows. */
const VECTORS_PER_JOINT = 3;
const CLEAR = [0.12, 0.13, 0.16, 1];
const LIGHT = { direction: normalize3([-1, 1, 1]), ambient: 0.25, diffuse: 0.75 };
const IDENTITY3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];
/** Seconds per frame of the bench and of a paused page's clock. */
const DT = 1 / 60;
/** The viewport the bench's levels of detail are set for (pixels). */
const BENCH_VIEW = [1024, 768];

function normalize3(v) {
  const l = Math.hypot(...v);
  return v.map((x) => x / l);
}

function setState(state) {
  document.body.dataset.state = state;
}

function say(text, error = false) {
  message.textContent = text;
  message.className = error ? 'error' : '';
}

/** The file stem of a URL (`models/Fox.sinew` → `Fox`). */
function stem(url) {
  return decodeURIComponent(url.split('/').pop().split('?')[0]).replace(/\.[^.]*$/, '');
}

/**
 * What instanced drawing needs that `gl` lacks (an empty list: nothing), for a palette texture
 * `width` texels wide.
 */
function missingForInstancing(gl, width) {
  const missing = [];
  if (!gl.getExtension('OES_texture_float')) missing.push('OES_texture_float');
  if (!gl.getExtension('ANGLE_instanced_arrays')) missing.push('ANGLE_instanced_arrays');
  if (!(gl.getParameter(gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS) > 0)) missing.push('vertex texture units');
  if (gl.getParameter(gl.MAX_VERTEX_ATTRIBS) < ATTRIBUTES.length + INSTANCE_ATTRIBUTES.length) missing.push('10 vertex attributes');
  if (gl.getParameter(gl.MAX_TEXTURE_SIZE) < width) missing.push(`a ${width}-texel-wide texture`);
  return missing;
}

/** The joints of a uniform palette the context's vertex uniforms hold (`cap`: at most that many vectors). */
function uniformJoints(gl, limits, cap) {
  const budget = Math.min(gl.getParameter(gl.MAX_VERTEX_UNIFORM_VECTORS), cap || Infinity);
  const joints = Math.min(Math.floor((budget - RESERVED_VECTORS) / VECTORS_PER_JOINT), limits.maxJoints);
  if (joints < limits.minPalette) {
    throw new Error(`${budget} vertex uniform vectors leave room for ${joints} joints; at least ${limits.minPalette} are needed`);
  }
  return joints;
}

/**
 * The parts the crowd draws: every draw part of the meshes of skin 0 (the crowd's palette is
 * that skin's), with their vertices' joint indices turned from the part's palette to the skin's
 * when `skinIndexed` (what skin_crowd.vert.glsl reads).
 */
function crowdParts(model, skinIndexed) {
  const parts = [];
  const floats = model.sinew.limits.floatsPerVertex;
  model.meshes.forEach((mesh) => {
    if (mesh.skin !== 0) return;
    for (const part of mesh.parts) {
      if (part.rigid) continue;
      let vertices = model.vertexData(part);
      if (skinIndexed) {
        const map = model.partMap(part);
        vertices = vertices.slice();
        for (let v = 0; v < part.vertexCount; v++) {
          for (let k = 6; k < 10; k++) vertices[v * floats + k] = map[vertices[v * floats + k]] ?? 0;
        }
      }
      parts.push({ part, vertices, indices: model.indexData(part), map: model.partMap(part).slice() });
    }
  });
  return parts;
}

/** Pixels per unit at unit distance of a view `height` pixels high through camera `cam`. */
function focal(cam, height) {
  return height / (2 * Math.tan(cam.fovY / 2));
}

/** The crowd's renderer: instanced, or instance by instance with uniform palettes. */
class CrowdRenderer {
  constructor(gl, sources, model, crowd, { instanced, joints }) {
    this.gl = gl;
    this.model = model;
    this.crowd = crowd;
    this.size = crowd.textureSize();
    const limits = model.sinew.limits;
    const common = ['u_MVP', 'u_normalMat', 'u_lightDir', 'u_light', 'u_color', 'u_texture'];
    this.instanced = instanced;
    if (instanced) {
      this.ext = gl.getExtension('ANGLE_instanced_arrays');
      gl.getExtension('OES_texture_float');
      const vertex = `#define JOINTS ${limits.minPalette}\n${sources['skin_common.vert']}${sources['skin_crowd.vert']}`;
      this.prog = program(gl, vertex, sources['mesh.frag'], [...common, 'u_palette', 'u_paletteSize']);
      this.palette = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, this.palette);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, this.size.width, this.size.height, 0, gl.RGBA, gl.FLOAT, null);
      gl.bindTexture(gl.TEXTURE_2D, null);
      this.instances = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
      gl.bufferData(gl.ARRAY_BUFFER, crowd.count * INSTANCE_FLOATS * 4, gl.DYNAMIC_DRAW);
    } else {
      this.joints = joints;
      this.prog = program(gl, `#define JOINTS ${joints}\n${sources['skin_common.vert']}${sources['skin_lbs.vert']}`, sources['mesh.frag'], [
        ...common,
        'u_jointMat',
      ]);
      this.rows = new Float32Array(joints * 12);
    }
    this.white = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.white);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, 1, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array([255, 255, 255, 255]));
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.bindTexture(gl.TEXTURE_2D, null);
    this.parts = crowdParts(model, instanced).map((p) => {
      const vbo = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
      gl.bufferData(gl.ARRAY_BUFFER, p.vertices, gl.STATIC_DRAW);
      const ibo = gl.createBuffer();
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ibo);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, p.indices, gl.STATIC_DRAW);
      return { ...p, vbo, ibo, texture: this.texture(p.part) };
    });
    gl.bindBuffer(gl.ARRAY_BUFFER, null);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, null);
  }

  /** The part's base-color texture (clamped, linear: the crowd page does without mipmaps). */
  texture(part) {
    const gl = this.gl;
    const t = part.texture === null ? null : this.model.textures[part.texture];
    if (!t) return null;
    const tex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, t.width, t.height, 0, gl.RGBA, gl.UNSIGNED_BYTE, this.model.rgba(t));
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.bindTexture(gl.TEXTURE_2D, null);
    return tex;
  }

  /** Draw calls a frame takes. */
  get draws() {
    return this.instanced ? this.parts.length : this.parts.length * this.crowd.count;
  }

  /**
   * Uploads what the last crowd frame changed: the palette rows it wrote and the instance rows
   * (instanced), or nothing (the uniform path reads the palette as it draws).
   */
  upload() {
    if (!this.instanced) return;
    const gl = this.gl;
    const written = this.crowd.writtenRows();
    if (written) {
      const w = this.size.width * 4;
      const texels = this.crowd.palette().subarray(written.first * w, written.end * w);
      gl.bindTexture(gl.TEXTURE_2D, this.palette);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, written.first, this.size.width, written.end - written.first, gl.RGBA, gl.FLOAT, texels);
      gl.bindTexture(gl.TEXTURE_2D, null);
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
    gl.bufferSubData(gl.ARRAY_BUFFER, 0, this.crowd.instanceRows());
  }

  bindVertex() {
    const gl = this.gl;
    const stride = this.model.sinew.limits.floatsPerVertex * 4;
    this.model.sinew.vertexLayout.forEach(([n, offset], i) => {
      gl.enableVertexAttribArray(i);
      gl.vertexAttribPointer(i, n, gl.FLOAT, false, stride, offset * 4);
    });
  }

  /** Draws the crowd from camera `cam` into a `width` × `height` viewport. */
  draw(cam, width, height) {
    const gl = this.gl;
    gl.viewport(0, 0, width, height);
    gl.clearColor(...CLEAR);
    gl.depthMask(true);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.enable(gl.CULL_FACE);
    gl.cullFace(gl.BACK);
    const world = viewProj(this.model.sinew.limits, cam, width / Math.max(height, 1));
    const p = this.prog;
    gl.useProgram(p.program);
    gl.uniform3fv(p.u_lightDir, LIGHT.direction);
    gl.uniform2f(p.u_light, LIGHT.ambient, LIGHT.diffuse);
    gl.uniform1i(p.u_texture, 0);
    if (this.instanced) this.drawInstanced(world);
    else this.drawOneByOne(world);
    for (let i = 0; i < ATTRIBUTES.length + INSTANCE_ATTRIBUTES.length; i++) gl.disableVertexAttribArray(i);
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, null);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, null);
  }

  drawInstanced(world) {
    const { gl, ext, prog: p } = this;
    gl.uniformMatrix4fv(p.u_MVP, false, world);
    gl.uniformMatrix3fv(p.u_normalMat, false, IDENTITY3);
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, this.palette);
    gl.uniform1i(p.u_palette, 1);
    gl.uniform2f(p.u_paletteSize, this.size.width, this.size.height);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
    INSTANCE_ATTRIBUTES.forEach((_, k) => {
      const at = ATTRIBUTES.length + k;
      gl.enableVertexAttribArray(at);
      gl.vertexAttribPointer(at, 4, gl.FLOAT, false, INSTANCE_FLOATS * 4, k * 16);
      ext.vertexAttribDivisorANGLE(at, 1);
    });
    gl.activeTexture(gl.TEXTURE0);
    for (const part of this.parts) {
      gl.uniform4fv(p.u_color, part.part.color);
      gl.bindTexture(gl.TEXTURE_2D, part.texture || this.white);
      gl.bindBuffer(gl.ARRAY_BUFFER, part.vbo);
      this.bindVertex();
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, part.ibo);
      ext.drawElementsInstancedANGLE(gl.TRIANGLES, part.part.indexCount, gl.UNSIGNED_SHORT, 0, this.crowd.count);
    }
    INSTANCE_ATTRIBUTES.forEach((_, k) => ext.vertexAttribDivisorANGLE(ATTRIBUTES.length + k, 0));
  }

  /** Each instance's parts on their own: u_MVP places the instance, u_jointMat holds its part's rows from the crowd's palette. */
  drawOneByOne(world) {
    const { gl, prog: p } = this;
    const rows = this.crowd.instanceRows();
    const palette = this.crowd.palette();
    const width = this.size.width;
    const placement = new Float32Array(16);
    placement[15] = 1;
    const normal = new Float32Array(9);
    gl.activeTexture(gl.TEXTURE0);
    for (const part of this.parts) {
      gl.uniform4fv(p.u_color, part.part.color);
      gl.bindTexture(gl.TEXTURE_2D, part.texture || this.white);
      gl.bindBuffer(gl.ARRAY_BUFFER, part.vbo);
      this.bindVertex();
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, part.ibo);
      const local = this.rows.subarray(0, part.map.length * 12);
      for (let i = 0; i < this.crowd.count; i++) {
        const r = i * INSTANCE_FLOATS;
        // The placement's rows as a column-major 4×4, and its 3×3 for the normals.
        for (let row = 0; row < 3; row++) {
          for (let col = 0; col < 4; col++) placement[col * 4 + row] = rows[r + row * 4 + col];
          for (let col = 0; col < 3; col++) normal[col * 3 + row] = rows[r + row * 4 + col];
        }
        const start = (rows[r + 13] * width + rows[r + 12]) * 4;
        part.map.forEach((joint, j) => local.set(palette.subarray(start + joint * 12, start + joint * 12 + 12), j * 12));
        gl.uniformMatrix4fv(p.u_MVP, false, mulPlaced(world, placement));
        gl.uniformMatrix3fv(p.u_normalMat, false, normal);
        gl.uniform4fv(p.u_jointMat, local);
        gl.drawElements(gl.TRIANGLES, part.part.indexCount, gl.UNSIGNED_SHORT, 0);
      }
    }
  }
}

/** Column-major `a × b`. */
function mulPlaced(a, b) {
  const out = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) out[c * 4 + r] = a[r] * b[c * 4] + a[4 + r] * b[c * 4 + 1] + a[8 + r] * b[c * 4 + 2] + a[12 + r] * b[c * 4 + 3];
  }
  return out;
}

/** The crowd's setting from the URL. */
function settings() {
  return {
    url: params.get('model') || 'models/character.sinew',
    n: Math.max(1, Math.floor(Number(params.get('n'))) || 100),
    lod: params.get('lod') !== '0',
  };
}

/** The viewer: the crowd drawn every animation frame, the HUD's counts and CPU time. */
async function viewer() {
  const { url, n, lod } = settings();
  const width = Number(params.get('width')) || innerWidth;
  const height = Number(params.get('height')) || innerHeight;
  [canvas.width, canvas.height] = [width, height];
  if (params.get('hud') === '0') document.getElementById('hud').hidden = true;
  const gl = canvas.getContext('webgl', { antialias: false, preserveDrawingBuffer: true });
  if (!gl) throw new Error('this browser has no WebGL 1');
  const [sinew, bytes] = await Promise.all([Sinew.load(moduleUrl({ graphs: true })), fetchBytes(url)]);
  const cap = Number(params.get('maxVectors')) || 0;
  const joints = uniformJoints(gl, sinew.limits, cap);
  const model = sinew.open(bytes, { palette: joints });
  const crowd = model.crowd({ count: n, lod });
  let instanced = params.get('instanced') !== '0';
  const notes = [];
  if (!instanced) notes.push('instanced drawing is off (instanced=0)');
  const missing = missingForInstancing(gl, crowd.textureSize().width);
  if (instanced && missing.length) {
    instanced = false;
    notes.push(`this context lacks ${missing.join(', ')}`);
  }
  const names = ['skin_common.vert', instanced ? 'skin_crowd.vert' : 'skin_lbs.vert', 'mesh.frag'];
  const sources = await shaderSources(names);
  const renderer = new CrowdRenderer(gl, sources, model, crowd, { instanced, joints });
  if (!instanced) {
    // Said once.
    const notice = `${notes.join('; ')}: each instance is drawn on its own with a uniform palette of ${joints} joints`;
    document.body.dataset.notice = notice;
    console.info(`crowd: ${notice}`);
  }
  document.body.dataset.mode = instanced ? 'instanced' : 'uniforms';
  document.body.dataset.draws = String(renderer.draws);
  const cam = framing(sinew.limits, ...Object.values(crowd.bounds()));
  const place = () => crowd.setCamera(eye(cam), focal(cam, height));
  place();
  const paused = params.get('paused') === '1';
  let last = null;
  let cpu = [];
  let counts = { evaluated: 0, shared: 0, held: 0 };
  const hud = () => {
    const ms = cpu.length ? cpu.reduce((a, b) => a + b, 0) / cpu.length : 0;
    stats.textContent = `${stem(url)} · N ${n} · evaluated ${counts.evaluated} shared ${counts.shared} held ${counts.held} · ` +
      `draws ${renderer.draws} (${instanced ? 'instanced' : 'one by one'}) · CPU ${ms.toFixed(2)} ms/frame`;
    say(document.body.dataset.notice ?? '');
  };
  const step = (dt) => {
    const t0 = performance.now();
    counts = crowd.frame(dt);
    renderer.upload();
    renderer.draw(cam, width, height);
    cpu.push(performance.now() - t0);
    if (cpu.length > 30) cpu = cpu.slice(-30);
  };
  // Drag orbits, the wheel moves the camera in and out.
  let drag = null;
  canvas.addEventListener('pointerdown', (e) => (drag = [e.clientX, e.clientY]));
  addEventListener('pointerup', () => (drag = null));
  addEventListener('pointermove', (e) => {
    if (!drag) return;
    cam.yaw -= (e.clientX - drag[0]) * 0.01;
    cam.pitch = Math.max(-sinew.limits.maxPitch, Math.min(sinew.limits.maxPitch, cam.pitch + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
    place();
    if (paused) renderer.draw(cam, width, height);
  });
  canvas.addEventListener('wheel', (e) => {
    cam.distance *= Math.exp(e.deltaY * 0.001);
    place();
    if (paused) renderer.draw(cam, width, height);
  }, { passive: true });
  if (paused) {
    step(Number(params.get('time') ?? 0.5));
    hud();
  } else {
    const tick = (t) => {
      step(last === null ? 0 : Math.min((t - last) / 1000, 0.1));
      last = t;
      hud();
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }
  window.sinewCrowd = { sinew, model, crowd, renderer, camera: cam, step };
  setState('ready');
}

/** Instance `i`'s clip, phase (a fraction of the clip) and speed: sinew-host's crowd arrangement. */
function arrangement(i, clips) {
  const frac = (x) => x - Math.floor(x);
  const clip = Math.min(Math.floor(frac(i * 0.754877666) * clips), clips - 1);
  return { clip, phase: frac(i * 0.618033988), speed: 0.8 + 0.4 * frac(i * 0.569840291) };
}

/** Runs `frame` at least `frames` times and `ms` milliseconds; mean milliseconds per frame. */
function time(frame, frames, ms) {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (count < frames || elapsed < ms) {
    frame();
    count++;
    elapsed = performance.now() - start;
  }
  return elapsed / count;
}

/** The bench: sinew's crowd, then three.js's, same N, same page load, nothing drawn. */
async function bench() {
  document.getElementById('hud').hidden = true;
  canvas.hidden = true;
  const out = document.getElementById('out');
  out.hidden = false;
  const show = (text) => (out.textContent = text);
  setState('running');
  const { url, n, lod } = settings();
  const gltfUrl = params.get('gltf');
  const name = stem(url);
  const THREE = await import('three');
  const { GLTFLoader } = await import('three/addons/loaders/GLTFLoader.js');
  const SkeletonUtils = await import('three/addons/utils/SkeletonUtils.js');
  const [sinew, bytes, gltf] = await Promise.all([Sinew.load(moduleUrl({ graphs: true })), fetchBytes(url), new GLTFLoader().loadAsync(gltfUrl)]);

  // sinew: the crowd's frame, its instance rows and the written rows' texels (what the
  // instanced renderer uploads), framed as the viewer frames it in a BENCH_VIEW viewport.
  const gl = document.createElement('canvas').getContext('webgl');
  const model = sinew.open(bytes, { palette: gl ? uniformJoints(gl, sinew.limits, 0) : 0xffff });
  const crowd = model.crowd({ count: n, lod });
  const instanced = gl !== null && missingForInstancing(gl, crowd.textureSize().width).length === 0;
  const parts = crowdParts(model, false).length;
  const cam = framing(sinew.limits, ...Object.values(crowd.bounds()));
  crowd.setCamera(eye(cam), focal(cam, BENCH_VIEW[1]));
  const width = crowd.textureSize().width * 4;
  let evaluated = 0;
  let frames = 0;
  let sink = 0;
  const sinewFrame = () => {
    const s = crowd.frame(DT);
    evaluated += s.evaluated;
    frames++;
    const w = crowd.writtenRows();
    const texels = w ? crowd.palette().subarray(w.first * width, w.end * width) : null;
    sink += crowd.instanceRows().length + (texels ? texels.length : 0);
  };
  show(`${name}: sinew-web, ${n} instances, lod=${lod ? 1 : 0}; warming up`);
  await new Promise((r) => setTimeout(r));
  for (let f = 0; f < 64; f++) sinewFrame();
  [evaluated, frames] = [0, 0];
  const minMs = Number(params.get('ms')) || 0;
  const sinewMs = time(sinewFrame, 240, minMs || 1000);
  const meanEvaluated = Math.round(evaluated / frames);
  const sinewDraws = instanced ? parts : parts * n;
  crowd.free();

  // three.js: its usual crowd, one skinned scene per instance.
  show(`${name}: three.js, ${n} instances; cloning`);
  await new Promise((r) => setTimeout(r));
  const clipNames = model.clips.map((c) => c.name);
  const clips = clipNames.map((c, i) => THREE.AnimationClip.findByName(gltf.animations, c) ?? gltf.animations[i]);
  if (clips.some((c) => !c)) throw new Error(`${gltfUrl}: the clips ${clipNames.join(', ')} are not all there`);
  const scene = new THREE.Scene();
  const mixers = [];
  const skeletons = [];
  let meshes = 0;
  for (let i = 0; i < n; i++) {
    const root = SkeletonUtils.clone(gltf.scene);
    const a = arrangement(i, clips.length);
    const mixer = new THREE.AnimationMixer(root);
    const action = mixer.clipAction(clips[a.clip]);
    action.timeScale = a.speed;
    action.time = a.phase * clips[a.clip].duration;
    action.play();
    mixers.push(mixer);
    root.traverse((o) => {
      if (!o.isSkinnedMesh) return;
      meshes++;
      skeletons.push(o.skeleton);
    });
    scene.add(root);
  }
  const threeFrame = () => {
    for (const m of mixers) m.update(DT);
    scene.updateMatrixWorld();
    for (const s of skeletons) s.update();
  };
  show(`${name}: three.js, ${n} instances; warming up`);
  await new Promise((r) => setTimeout(r));
  for (let f = 0; f < 3; f++) threeFrame();
  const threeMs = time(threeFrame, 8, minMs || 2000);

  const ms = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(3));
  const result = [
    `sinew-web crowd-frame ${name} n ${n} ms ${ms(sinewMs)} evaluated ${meanEvaluated} draws ${sinewDraws}`,
    `three.js crowd-frame ${name} n ${n} ms ${ms(threeMs)} draws ${meshes}`,
  ].join('\n');
  show(`${result}\n(nothing drawn on either side; lod=${lod ? 1 : 0}; ${sink} floats read)`);
  document.body.dataset.result = result;
  setState('done');
}

(params.has('gltf') ? bench() : viewer()).catch((e) => {
  say(`error: ${e.message}`, true);
  const out = document.getElementById('out');
  if (!out.hidden) out.textContent = `error: ${e.message}`;
  setState(`error: ${e.message}`);
  console.error(e);
});
