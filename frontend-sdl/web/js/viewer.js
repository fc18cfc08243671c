// The WebGL 1 viewer: the desktop demo's model view in a page. It runs the same GLSL ES 1.00
// shaders (frontend-sdl/shaders, copied beside the page by build.sh), sizes the palette from
// MAX_VERTEX_UNIFORM_VECTORS (parts with more joints are split by the runtime at load), frames
// the model as `sinew demo` does, and plays it with sinew's runtime in wasm.
//
// URL: ?model=URL&clip=NAME&time=T&paused=1&width=W&height=H&hud=0&skinning=dqs&maxVectors=N&simd=0&feet=1&springs=1&colliders=1
// Keys: S turns the spring bones on and off, O shows and hides their colliders. Shift+drag or
// right-drag moves the character on the ground plane (its world placement: the spring bones
// swing as it moves).
// Test hooks: document.body.dataset.state ('loading', 'ready', 'error: <message>'),
// dataset.parts and dataset.joints, and window.sinewViewer.

import { Sinew, Outputs, moduleUrl, hasSimd } from './sinew.js';
import { framing, viewProj, gridLines, mul } from './camera.js';
import { ATTRIBUTES, shaderSources, program } from './gl.js';

/** The shared shader files the viewer links. */
// skin_dqs.vert is fetched with the first dual-quaternion frame (`Renderer#loadDqs`).
const SHADERS = ['skin_common.vert', 'skin_lbs.vert', 'mesh.frag', 'line.vert', 'line.frag'];

const params = new URLSearchParams(location.search);
const canvas = document.getElementById('view');
const hud = document.getElementById('hud');
const message = document.getElementById('message');

/** Uniform vectors the skinning shaders use besides the palette (shaders.rs RESERVED_VERTEX_VECTORS). */
const RESERVED_VECTORS = 16;
/** Uniform vectors per joint: the dual quaternion and its scale factor (4) bound both shaders. */
const VECTORS_PER_JOINT = 4;
const CLEAR = [0.12, 0.13, 0.16, 1];
const GRID_COLOR = [0.42, 0.45, 0.52, 0.55];
const BONE_COLOR = [1, 0.78, 0.25, 1];
/** The spring colliders that keep the tails out, and those that keep them in (the desktop's). */
const COLLIDER_COLOR = [0.3, 0.9, 1, 0.9];
const INSIDE_COLLIDER_COLOR = [1, 0.45, 0.85, 0.9];
const LIGHT = { direction: normalize3([-1, 1, 1]), ambient: 0.25, diffuse: 0.75 };

function normalize3(v) {
  const l = Math.hypot(...v);
  return v.map((x) => x / l);
}

/**
 * The ground under `bounds` as the floor grid's lines, `step` apart, each cut in eight, every
 * point at the height the runtime's ground answers (`Character.ground`): the step and the slope
 * that foot placement stands the feet on.
 */
function groundLines(character, { center, radius }, step) {
  const half = Math.ceil((radius * 1.5) / step) * step;
  const [cx, cz] = [Math.round(center[0] / step) * step, Math.round(center[2] / step) * step];
  const [n, cut, out] = [Math.round((2 * half) / step), step / 8, []];
  const point = (x, z) => out.push(x, character.ground(x, z), z);
  for (let i = 0; i <= n; i++) {
    for (let k = 0; k < n * 8; k++) {
      const [a, b] = [-half + i * step, -half + k * cut];
      point(cx + a, cz + b);
      point(cx + a, cz + b + cut);
      point(cx + b, cz + a);
      point(cx + b + cut, cz + a);
    }
  }
  return new Float32Array(out);
}

function setState(state) {
  document.body.dataset.state = state;
}

function say(text, error = false) {
  message.textContent = text;
  message.className = error ? 'error' : '';
}

/** The uniforms both skinning programs have, besides their palette rows. */
const SKIN_UNIFORMS = ['u_MVP', 'u_normalMat', 'u_lightDir', 'u_light', 'u_color', 'u_texture'];

/** The GL renderer: programs, the model's buffers and textures, and the frame's draws. */
class Renderer {
  constructor(gl, sources, maxVectors, sinew) {
    const limits = sinew.limits;
    this.sinew = sinew;
    this.gl = gl;
    const budget = Math.min(gl.getParameter(gl.MAX_VERTEX_UNIFORM_VECTORS), maxVectors || Infinity);
    this.joints = Math.min(Math.floor((budget - RESERVED_VECTORS) / VECTORS_PER_JOINT), limits.maxJoints);
    if (this.joints < limits.minPalette) {
      throw new Error(`${budget} vertex uniform vectors leave room for ${this.joints} joints; at least ${limits.minPalette} are needed`);
    }
    this.skin = `#define JOINTS ${this.joints}\n${sources['skin_common.vert']}`;
    this.fragment = sources['mesh.frag'];
    this.lbs = program(gl, this.skin + sources['skin_lbs.vert'], this.fragment, [...SKIN_UNIFORMS, 'u_jointMat']);
    /** The dual-quaternion program, linked by `loadDqs` (null until then: parts draw with `lbs`). */
    this.dqs = null;
    this.lines = program(gl, sources['line.vert'], sources['line.frag'], ['u_MVP', 'u_color']);
    this.white = this.texture(1, 1, new Uint8Array([255, 255, 255, 255]), gl.CLAMP_TO_EDGE, gl.CLAMP_TO_EDGE, gl.NEAREST, gl.NEAREST);
    this.stream = gl.createBuffer();
    this.gpu = null;
  }

  /** Fetches skin_dqs.vert and links the dual-quaternion program, once. */
  async loadDqs() {
    if (this.dqs) return;
    const { 'skin_dqs.vert': vertex } = await shaderSources(['skin_dqs.vert']);
    this.dqs ??= program(this.gl, this.skin + vertex, this.fragment, [...SKIN_UNIFORMS, 'u_jointDQ']);
  }

  texture(width, height, rgba, wrapS, wrapT, mag, min) {
    const gl = this.gl;
    const t = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, t);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, width, height, 0, gl.RGBA, gl.UNSIGNED_BYTE, rgba);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, wrapS);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, wrapT);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, mag);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, min);
    if (min !== gl.NEAREST && min !== gl.LINEAR) gl.generateMipmap(gl.TEXTURE_2D);
    gl.bindTexture(gl.TEXTURE_2D, null);
    return t;
  }

  /** The RGBA texels of texture `t` of `model`, grown to powers of two when the sampler needs it (WebGL 1). */
  texels(model, t, pot) {
    const rgba = model.rgba(t);
    const p2 = (n) => 2 ** Math.ceil(Math.log2(Math.max(n, 1)));
    const [w, h] = pot ? [p2(t.width), p2(t.height)] : [t.width, t.height];
    if (w === t.width && h === t.height) return { w, h, rgba };
    // Resampled on a 2D canvas (bilinear) to the power-of-two size.
    const from = document.createElement('canvas');
    [from.width, from.height] = [t.width, t.height];
    from.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(rgba), t.width, t.height), 0, 0);
    const to = document.createElement('canvas');
    [to.width, to.height] = [w, h];
    const c = to.getContext('2d');
    c.drawImage(from, 0, 0, w, h);
    return { w, h, rgba: new Uint8Array(c.getImageData(0, 0, w, h).data.buffer) };
  }

  /** Uploads every draw part of `model` and its textures; frees the previous model's. */
  upload(model) {
    const gl = this.gl;
    const textures = new Map();
    const meshes = model.meshes.map((mesh) =>
      mesh.parts.map((part) => {
        const vbo = gl.createBuffer();
        gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
        gl.bufferData(gl.ARRAY_BUFFER, model.vertexData(part), gl.STATIC_DRAW);
        const ibo = gl.createBuffer();
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ibo);
        gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, model.indexData(part), gl.STATIC_DRAW);
        let texture = null;
        const t = part.texture === null ? null : model.textures[part.texture];
        if (t) {
          const key = [part.texture, part.wrapS, part.wrapT, part.mag, part.min].join();
          if (!textures.has(key)) {
            const mip = part.min !== gl.NEAREST && part.min !== gl.LINEAR;
            const pot = mip || part.wrapS !== gl.CLAMP_TO_EDGE || part.wrapT !== gl.CLAMP_TO_EDGE;
            const { w, h, rgba } = this.texels(model, t, pot);
            textures.set(key, this.texture(w, h, rgba, part.wrapS, part.wrapT, part.mag, part.min));
          }
          texture = textures.get(key);
        }
        return { part, vbo, ibo, texture };
      }),
    );
    gl.bindBuffer(gl.ARRAY_BUFFER, null);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, null);
    this.free();
    this.gpu = { meshes, textures: [...textures.values()] };
    return meshes.reduce((n, m) => n + m.length, 0);
  }

  free() {
    const gl = this.gl;
    if (!this.gpu) return;
    for (const p of this.gpu.meshes.flat()) {
      gl.deleteBuffer(p.vbo);
      gl.deleteBuffer(p.ibo);
    }
    this.gpu.textures.forEach((t) => gl.deleteTexture(t));
    this.gpu = null;
  }

  bindMeshVertex() {
    const gl = this.gl;
    const stride = this.sinew.limits.floatsPerVertex * 4;
    this.sinew.vertexLayout.forEach(([n, offset], i) => {
      gl.enableVertexAttribArray(i);
      gl.vertexAttribPointer(i, n, gl.FLOAT, false, stride, offset * 4);
    });
  }

  /**
   * Draws one frame of `character` with `method` ('lbs' or 'dqs'), from camera `cam`, over the
   * `grid` lines, with its bones drawn over everything when `bones`, and then its spring
   * `colliders` when given (`Character#colliderLines`, world space).
   */
  draw(character, cam, method, width, height, grid, bones, offset = [0, 0, 0], colliders = null) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, width, height);
    gl.clearColor(...CLEAR);
    gl.depthMask(true);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    const world = viewProj(this.sinew.limits, cam, width / Math.max(height, 1));
    if (grid) this.drawLines(grid, world, GRID_COLOR);
    if (!character || !this.gpu) return;
    // The character where it stands in the world (moved by dragging).
    const vp = mul(world, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, ...offset, 1]);
    const model = character.model;
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.enable(gl.CULL_FACE);
    gl.cullFace(gl.BACK);
    gl.disable(gl.BLEND);
    this.gpu.meshes.forEach((parts, mi) => {
      const morphs = model.meshes[mi].morph;
      parts.forEach((p, pi) => {
        const m = p.part.rigid || method === 'lbs' || !character.sinew.hasDqs || !this.dqs ? 'lbs' : 'dqs';
        const prog = m === 'lbs' ? this.lbs : this.dqs;
        gl.useProgram(prog.program);
        const rows = character.partData(mi, pi, m === 'lbs' ? 0 : 1);
        if (rows) gl.uniform4fv(m === 'lbs' ? prog.u_jointMat : prog.u_jointDQ, rows);
        gl.uniformMatrix4fv(prog.u_MVP, false, vp);
        gl.uniformMatrix3fv(prog.u_normalMat, false, [1, 0, 0, 0, 1, 0, 0, 0, 1]);
        gl.uniform3fv(prog.u_lightDir, LIGHT.direction);
        gl.uniform2f(prog.u_light, LIGHT.ambient, LIGHT.diffuse);
        gl.uniform4fv(prog.u_color, p.part.color);
        gl.activeTexture(gl.TEXTURE0);
        gl.bindTexture(gl.TEXTURE_2D, p.texture || this.white);
        gl.uniform1i(prog.u_texture, 0);
        const morphed = morphs ? character.partData(mi, pi, 2) : null;
        if (morphed) {
          gl.bindBuffer(gl.ARRAY_BUFFER, this.stream);
          gl.bufferData(gl.ARRAY_BUFFER, morphed, gl.STREAM_DRAW);
        } else {
          gl.bindBuffer(gl.ARRAY_BUFFER, p.vbo);
        }
        this.bindMeshVertex();
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, p.ibo);
        gl.drawElements(gl.TRIANGLES, p.part.indexCount, gl.UNSIGNED_SHORT, 0);
      });
    });
    ATTRIBUTES.forEach((_, i) => gl.disableVertexAttribArray(i));
    gl.bindTexture(gl.TEXTURE_2D, null);
    if (bones) this.drawLines(character.bones(), vp, BONE_COLOR, true);
    if (colliders) {
      this.drawLines(colliders.outside, world, COLLIDER_COLOR, true);
      this.drawLines(colliders.inside, world, INSIDE_COLLIDER_COLOR, true);
    }
  }

  /** Draws `points` as line segments in `color`, depth-tested unless `over`. */
  drawLines(points, vp, color, over = false) {
    const gl = this.gl;
    gl[over ? 'disable' : 'enable'](gl.DEPTH_TEST);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(this.lines.program);
    gl.uniformMatrix4fv(this.lines.u_MVP, false, vp);
    gl.uniform4fv(this.lines.u_color, color);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.stream);
    gl.bufferData(gl.ARRAY_BUFFER, points, gl.STREAM_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 12, 0);
    gl.drawArrays(gl.LINES, 0, points.length / 3);
    gl.disableVertexAttribArray(0);
    gl.disable(gl.BLEND);
  }
}

/** The viewer: runtime, renderer, the loaded model, its character and the controls. */
class Viewer {
  constructor(sinew, renderer) {
    this.sinew = sinew;
    this.renderer = renderer;
    this.model = null;
    this.character = null;
    this.playing = params.get('paused') !== '1';
    this.method = params.get('skinning') === 'dqs' ? 'dqs' : 'lbs';
    this.bones = false;
    this.feet = params.get('feet') === '1';
    this.hasFeet = false;
    // Spring bones: on unless `springs=0`, where the module has them (the full one) and the
    // model too; the base module offers the button, which opens the model in the full one.
    this.springs = params.get('springs') !== '0';
    this.hasSprings = false;
    /** Draw the spring colliders (key O; `colliders=1`). */
    this.colliders = params.get('colliders') === '1';
    /** The character's place on the ground plane (its world translation). */
    this.offset = [0, 0, 0];
    this.speed = 1;
    this.camera = framing(sinew.limits, [0, 0, 0], 1);
    this.grid = null;
    this.last = null;
  }

  /**
   * Opens `bytes` named `name` (.sinew, or .glb/.gltf through the importer); a failure keeps
   * the current model. `prepare(character)` runs before the first frame is drawn.
   */
  async loadFile(name, bytes, prepare = null) {
    setState('loading');
    try {
      let data = bytes;
      let notes = [];
      if (/\.fbx$/i.test(name)) throw new Error('FBX is read by the command line (sinew bake model.fbx), not by this page\'s importer');
      if (/\.(glb|gltf|bvh)$/i.test(name)) {
        const { importGltf } = await import('./import.js');
        ({ bytes: data, notes } = await importGltf(bytes, { palette: this.renderer.joints }));
      }
      let model = this.sinew.open(data, { palette: this.renderer.joints });
      // Morph targets are evaluated in the full module: a model with them opens there. Where
      // the engine lacks SIMD or the full module refuses the file, the first module draws it
      // without its morph targets.
      if (!this.sinew.hasMorphs && hasSimd && model.meshes.some((m) => m.morph)) {
        this.fullRuntime ??= await Sinew.load(moduleUrl({ graphs: true }));
        try {
          const full = this.fullRuntime.open(data, { palette: this.renderer.joints });
          model.close();
          [model, this.sinew] = [full, this.fullRuntime];
        } catch (e) {
          say(`${name}: without its morph targets: ${e.message}`, true);
        }
      }
      // The file as given, to open again (through the importer again) in the full module.
      this.source = { name, data: bytes };
      const character = model.character();
      const parts = this.renderer.upload(model);
      this.character?.free();
      this.model?.close();
      [this.model, this.character] = [model, character];
      // A model without meshes (motion capture) shows its bones, framed by its first pose
      // rather than its rest pose.
      const bounds = model.meshes.length ? model.bounds : character.update(0).poseBounds();
      this.bones = params.get('bones') === '1' || model.meshes.length === 0;
      this.camera = framing(this.sinew.limits, bounds.center, bounds.radius);
      // A model with legs by name stands on a ground with a step and a slope, its feet placed
      // on it while `feet` is on (in a module with foot placement).
      this.hasFeet = this.sinew.hasFeet && character.setupFeet();
      if (this.hasFeet && this.feet) character.feet(true, true);
      this.hasSprings = this.sinew.hasSprings && character.setupSprings({ on: this.springs });
      if (this.sinew.hasSprings) character.setWorld(this.offset);
      const step = this.sinew.gridStep(bounds.radius);
      this.grid = this.hasFeet ? groundLines(character, bounds, step) : gridLines(bounds, step);
      document.body.dataset.parts = String(parts);
      document.body.dataset.joints = String(this.renderer.joints);
      this.character.playing = this.playing;
      this.buildControls();
      prepare?.(character);
      const note = notes.length ? `; ${notes[0]}${notes.length > 1 ? ` (+${notes.length - 1} notes)` : ''}` : '';
      say(`loaded ${name} (${model.joints} joints, ${model.clips.length} clips, ${parts} mesh parts)${note}`);
      this.frame();
      setState('ready');
      return true;
    } catch (e) {
      say(`${name}: ${e.message}`, true);
      setState(`error: ${name}: ${e.message}`);
      this.frame();
      return false;
    }
  }

  /**
   * Opens the model again in the full module (`sinew_web_graph.wasm`: the graphs' state
   * machines, foot placement, spring bones, morph targets and dual-quaternion rows), fetched the
   * first time, with the playing clip, its time and
   * the speed carried over, then `prepare(character)`. The full module checks the file in full
   * (the first module reads only what it lists); a file it refuses stays open in the first, its
   * clips playing, the error said. Whether the model is open in the full module.
   */
  async reopenFull(prepare = null) {
    if (this.sinew === this.fullRuntime) return true;
    this.fullRuntime ??= await Sinew.load(moduleUrl({ graphs: true }));
    const [clip, time] = [this.character.clip, this.character.time];
    const speed = Number(document.getElementById('speed').value);
    const first = this.sinew;
    this.sinew = this.fullRuntime;
    const opened = await this.loadFile(this.source.name, this.source.data, (c) => {
      if (clip >= 0) c.play(clip).seek(time);
      c.speed = speed;
      prepare?.(c);
    });
    if (this.model?.sinew !== this.fullRuntime) this.sinew = first;
    return opened;
  }

  /**
   * Runs graph `i` of the model (-1: back to the clips). The state machines are in the full
   * module: the first time, the model is opened again in it (`reopenFull`).
   */
  async useGraph(i) {
    if (i >= 0 && this.sinew !== this.fullRuntime) {
      const opened = await this.reopenFull((c) => c.useGraph(i));
      if (!opened) {
        document.getElementById('graph').value = this.character?.graphIndex ?? -1;
        return;
      }
    } else {
      this.character.useGraph(i < 0 ? null : i);
    }
    document.getElementById('graph').value = i;
    this.buildParameters(this.model.graphs[i]);
  }

  /**
   * Switches between linear-blend and dual-quaternion skinning. The first switch to
   * dual quaternions fetches their shader (`Renderer#loadDqs`); their rows are computed in the
   * full module, so in the base module it opens the model again there (`reopenFull`). Where
   * either fails, the skinning stays linear.
   */
  async toggleMethod() {
    this.method = this.method === 'lbs' ? 'dqs' : 'lbs';
    if (this.method === 'dqs') {
      try {
        await this.renderer.loadDqs();
        if (!this.sinew.hasDqs && !(await this.reopenFull())) this.method = 'lbs';
      } catch (e) {
        this.method = 'lbs';
        throw e;
      } finally {
        this.frame();
      }
    } else {
      this.frame();
    }
  }

  /**
   * Turns foot placement on or off: paused at once, playing ramped. In a module without it, on
   * by opening the model again in the full module (`reopenFull`), where `loadFile` sets it up.
   */
  async toggleFeet() {
    if (!this.sinew.hasFeet) {
      this.feet = true;
      try {
        if (!(await this.reopenFull())) this.feet = false;
        else if (!this.hasFeet) say('no foot placement: the model has no legs by the humanoid naming', true);
      } catch (e) {
        this.feet = false;
        throw e;
      } finally {
        this.syncControls();
      }
      return;
    }
    try {
      this.character.feet((this.feet = !this.feet), !this.playing);
    } catch (e) {
      say(e.message, true);
    }
    this.frame();
  }

  /**
   * Turns the spring bones (`what` 'springs'; switched on, they start at rest in the current
   * pose) or the drawing of their colliders ('colliders') on or off. In a module without spring
   * bones, on by opening the model again in the full module (`reopenFull`), where `loadFile`
   * sets them up.
   */
  async toggleSprings(what = 'springs') {
    if (!this.sinew.hasSprings) {
      this[what] = true;
      try {
        if (!(await this.reopenFull())) this[what] = false;
        else if (!this.hasSprings) say('no spring bones: the file has no spring section', true);
      } finally {
        this.syncControls();
      }
      return;
    }
    this[what] = !this[what];
    try {
      if (what === 'springs') this.character.springs(this.springs);
    } catch (e) {
      say(e.message, true);
    }
    this.frame();
  }

  /** Moves the character by `dx`, `dz` on the ground plane (its world placement). */
  move(dx, dz) {
    this.offset[0] += dx;
    this.offset[2] += dz;
    if (this.sinew.hasSprings) this.character?.setWorld(this.offset);
    if (!this.playing) this.frame();
    else this.render();
  }

  async loadUrl(url, prepare = null) {
    const name = decodeURIComponent(url.split('/').pop().split('?')[0]);
    let bytes;
    try {
      const r = await fetch(url);
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      bytes = new Uint8Array(await r.arrayBuffer());
    } catch (e) {
      say(`${name}: ${e.message}`, true);
      setState(`error: ${name}: ${e.message}`);
      return false;
    }
    return this.loadFile(name, bytes, prepare);
  }

  clipNames() {
    return this.model ? this.model.clips.map((c) => c.name) : [];
  }

  palette(skin = 0) {
    return this.character ? new Float32Array(this.character.palette(skin)) : new Float32Array();
  }

  /** Computes the pose and draws it. */
  frame() {
    // Rigid parts take linear-blend rows in either method.
    const dqs = this.method === 'dqs' ? Outputs.DQS_ROWS : 0;
    const outputs = Outputs.PALETTES | Outputs.LBS_ROWS | dqs | Outputs.MORPHS;
    this.character?.update(outputs);
    this.render();
    this.syncControls();
  }

  render() {
    const colliders = this.colliders && this.hasSprings ? this.character.colliderLines() : null;
    this.renderer.draw(this.character, this.camera, this.method, canvas.width, canvas.height, this.grid, this.bones, this.offset, colliders);
  }

  tick(now) {
    // Paused, spring bones that are on swing on (the character holds its clip).
    const swinging = this.hasSprings && this.springs;
    if (this.last !== null && this.character && (this.playing || swinging)) {
      const dt = Math.min((now - this.last) / 1000, 0.25);
      try {
        this.character.advance(dt * this.speed);
      } catch (e) {
        say(`graph stopped: ${e.message}`, true);
        this.character.useGraph(null);
      }
      this.frame();
    }
    this.last = now;
    requestAnimationFrame((t) => this.tick(t));
  }

  buildControls() {
    const m = this.model;
    const clips = document.getElementById('clip');
    clips.replaceChildren(...m.clips.map((c, i) => new Option(c.name || `clip${i}`, i)));
    const graphs = document.getElementById('graph');
    graphs.replaceChildren(new Option('clips', -1), ...m.graphs.map((g, i) => new Option(`graph ${g.name}`, i)));
    graphs.parentElement.hidden = m.graphs.length === 0;
    document.getElementById('params').replaceChildren();
  }

  buildParameters(g) {
    const box = document.getElementById('params');
    box.replaceChildren(
      ...(g ? g.parameters : []).map((p, i) => {
        const label = document.createElement('label');
        label.textContent = `${p.name} `;
        const input = document.createElement('input');
        if (p.kind === 'float') {
          Object.assign(input, { type: 'number', step: 0.1, value: p.value });
          input.oninput = () => this.set(i, Number(input.value));
        } else if (p.kind === 'bool') {
          Object.assign(input, { type: 'checkbox', checked: p.value !== 0 });
          input.onchange = () => this.set(i, input.checked ? 1 : 0);
        } else {
          Object.assign(input, { type: 'button', value: 'fire' });
          input.onclick = () => this.set(i, 1);
        }
        label.append(input);
        return label;
      }),
    );
  }

  set(p, value) {
    try {
      this.character.set(p, value);
    } catch (e) {
      say(e.message, true);
    }
  }

  syncControls() {
    const c = this.character;
    if (!c || hud.hidden) return;
    const m = this.model;
    const clip = m.clips[c.clip];
    const scrub = document.getElementById('scrub');
    if (clip) {
      [scrub.min, scrub.max, scrub.disabled] = [clip.start, clip.end, false];
      scrub.value = c.time;
      document.getElementById('clip').value = c.clip;
    } else {
      scrub.disabled = true;
    }
    document.getElementById('time').textContent = clip ? `${c.time.toFixed(2)} s` : c.graphState >= 0 ? m.graphs[c.graphIndex].states[c.graphState] : '';
    document.getElementById('play').textContent = this.playing ? 'pause' : 'play';
    document.getElementById('method').textContent = this.method.toUpperCase();
    document.getElementById('bones').textContent = this.bones ? 'hide bones' : 'bones';
    const feet = document.getElementById('feet');
    // A module without foot placement offers the button: it opens the model in the full one.
    feet.hidden = this.sinew.hasFeet && !this.hasFeet;
    feet.textContent = `feet: ${this.feet ? 'on' : 'off'}`;
    const springs = document.getElementById('springs');
    springs.hidden = this.sinew.hasSprings && !this.hasSprings;
    springs.textContent = `springs: ${this.hasSprings && this.springs ? 'on' : 'off'}`;
    const colliders = document.getElementById('colliders');
    colliders.hidden = springs.hidden;
    colliders.textContent = `colliders: ${this.hasSprings && this.colliders ? 'on' : 'off'}`;
    const f = this.hasSprings ? c.springFrame : null;
    document.getElementById('spring-info').textContent = f?.on ? `${f.joints} joints, ${f.contacts} contacts` : '';
  }

  wireControls() {
    const on = (id, ev, f) => document.getElementById(id).addEventListener(ev, f);
    const guard = (f) => () => {
      try {
        f();
      } catch (e) {
        say(e.message, true);
      }
      this.frame();
    };
    on('clip', 'change', guard(() => this.character.play(Number(document.getElementById('clip').value))));
    on('fade', 'click', guard(() => this.character.crossfade(Number(document.getElementById('clip').value))));
    on('play', 'click', guard(() => {
      this.playing = !this.playing;
      this.character.playing = this.playing;
    }));
    on('scrub', 'input', guard(() => this.character.seek(Number(document.getElementById('scrub').value))));
    on('method', 'click', () => this.toggleMethod().catch((e) => say(e.message, true)));
    on('bones', 'click', guard(() => (this.bones = !this.bones)));
    on('feet', 'click', () => this.toggleFeet().catch((e) => say(e.message, true)));
    const toggle = (what) => this.toggleSprings(what).catch((e) => say(e.message, true));
    on('springs', 'click', () => toggle('springs'));
    on('colliders', 'click', () => toggle('colliders'));
    addEventListener('keydown', (e) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      const what = { s: 'springs', o: 'colliders' }[e.key.toLowerCase()];
      if (what) toggle(what);
    });
    on('speed', 'input', guard(() => (this.character.speed = Number(document.getElementById('speed').value))));
    on('graph', 'change', () =>
      this.useGraph(Number(document.getElementById('graph').value)).catch((e) => say(e.message, true)),
    );
    // Drag-and-drop of .sinew, .glb, .gltf and .bvh files.
    for (const t of [canvas, document.body]) {
      t.addEventListener('dragover', (e) => e.preventDefault());
      t.addEventListener('drop', async (e) => {
        e.preventDefault();
        e.stopPropagation();
        const file = e.dataTransfer?.files?.[0];
        if (file) await this.loadFile(file.name, new Uint8Array(await file.arrayBuffer()));
      });
    }
    // Orbit with the mouse, zoom with the wheel; shift+drag or right-drag moves the character
    // on the ground plane, a pixel a pixel's width at the camera's target.
    let drag = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => (drag = [e.clientX, e.clientY, e.shiftKey || e.button === 2]));
    addEventListener('pointerup', () => (drag = null));
    addEventListener('pointermove', (e) => {
      if (!drag) return;
      const [dx, dy] = [e.clientX - drag[0], e.clientY - drag[1]];
      if (drag[2]) {
        const c = this.camera;
        const k = (2 * c.distance * Math.tan(c.fovY / 2)) / Math.max(canvas.clientHeight, 1);
        const [sy, cy] = [Math.sin(c.yaw), Math.cos(c.yaw)];
        // Screen right is (cos yaw, 0, −sin yaw) on the ground; screen down comes toward the eye.
        this.move(k * (dx * cy + dy * sy), k * (dy * cy - dx * sy));
        drag = [e.clientX, e.clientY, true];
        return;
      }
      this.camera.yaw -= (e.clientX - drag[0]) * 0.01;
      const max = this.sinew.limits.maxPitch;
      this.camera.pitch = Math.min(max, Math.max(-max, this.camera.pitch + (e.clientY - drag[1]) * 0.01));
      drag = [e.clientX, e.clientY];
      this.render();
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.camera.distance *= Math.exp(e.deltaY * 0.001);
      this.render();
    }, { passive: false });
  }
}

async function main() {
  const width = Number(params.get('width')) || innerWidth;
  const height = Number(params.get('height')) || innerHeight;
  [canvas.width, canvas.height] = [width, height];
  hud.hidden = params.get('hud') === '0';
  const gl = canvas.getContext('webgl', { antialias: false, preserveDrawingBuffer: true });
  if (!gl) throw new Error('this browser gives no WebGL 1 context');
  // `feet=1`, `springs=1`, `colliders=1` or `skinning=dqs` starts on the full module (foot
  // placement, spring bones and dual-quaternion rows are in it; it needs SIMD); otherwise the
  // base module, which the feet, springs, colliders and skinning buttons, the graphs and a model
  // with morph targets leave for the full one when used.
  const full = (['feet', 'springs', 'colliders'].some((k) => params.get(k) === '1') || params.get('skinning') === 'dqs') && hasSimd;
  const runtime = moduleUrl({ graphs: full, simd: params.get('simd') !== '0' });
  const [sinew, sources] = await Promise.all([Sinew.load(runtime), shaderSources(SHADERS)]);
  const renderer = new Renderer(gl, sources, Number(params.get('maxVectors')) || 0, sinew);
  if (params.get('skinning') === 'dqs') await renderer.loadDqs();
  const viewer = new Viewer(sinew, renderer);
  if (full) viewer.fullRuntime = sinew;
  window.sinewViewer = viewer;
  viewer.wireControls();
  await viewer.loadUrl(params.get('model') || 'models/character.sinew', (character) => {
    if (params.has('clip')) character.play(params.get('clip'));
    if (params.has('time')) {
      // As `sinew demo --time T`: the clip advanced from its start by T seconds.
      character.playing = true;
      character.advance(Number(params.get('time')));
      character.playing = viewer.playing;
    }
  });
  requestAnimationFrame((t) => viewer.tick(t));
}

main().catch((e) => {
  say(e.message, true);
  setState(`error: ${e.message}`);
});
