// What the WebGL 1 pages share: the shared GLSL ES 1.00 files fetched from the site's shaders/
// folder (frontend-sdl/shaders, the desktop's copy), and programs linked from them.

/** The vertex attributes of a draw part's interleaved vertex, at locations 0 to 5. */
export const ATTRIBUTES = ['a_position', 'a_normal', 'a_jointIndices', 'a_jointWeights', 'a_uv', 'a_color'];

/** `shaders/NAME.glsl` of each of `names`, as `{ NAME: text }`. */
export async function shaderSources(names) {
  const base = new URL('shaders/', import.meta.url);
  const texts = await Promise.all(
    names.map(async (n) => {
      const r = await fetch(new URL(`${n}.glsl`, base));
      if (!r.ok) throw new Error(`shaders/${n}.glsl: HTTP ${r.status}`);
      return r.text();
    }),
  );
  return Object.fromEntries(names.map((n, i) => [n, texts[i]]));
}

function compile(gl, type, source) {
  const s = gl.createShader(type);
  gl.shaderSource(s, source);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(s)}`);
  return s;
}

/**
 * The program of `vertex` and `fragment` (GLSL ES 1.00 without the version line), `attributes`
 * bound to locations 0, 1, …, as `{ program, [uniform]: location }` for each of `uniforms`.
 */
export function program(gl, vertex, fragment, uniforms, attributes = ATTRIBUTES) {
  const p = gl.createProgram();
  gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, `#version 100\n${vertex}`));
  gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, `#version 100\nprecision mediump float;\n${fragment}`));
  attributes.forEach((a, i) => gl.bindAttribLocation(p, i, a));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`link: ${gl.getProgramInfoLog(p)}`);
  const u = { program: p };
  for (const name of uniforms) u[name] = gl.getUniformLocation(p, name);
  return u;
}
