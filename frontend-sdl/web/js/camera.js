// The orbit camera and floor grid of every viewer (sinew-host's camera.rs), so the pages frame a
// model as `sinew demo` does: the bind-pose bounds whole from a slightly raised front view, a
// grid on the floor. The constants are the runtime's (`Sinew.limits`); the matrices are the
// usual OpenGL ones.

/** An orbit camera framing a sphere: `{target, yaw, pitch, distance, fovY}`. */
export function framing(limits, center, radius) {
  const { yaw, pitch, fovY, distancePerRadius } = limits.framing;
  const r = Number.isFinite(radius) && radius > 0 ? radius : 1;
  return { target: [...center], yaw, pitch, distance: r * distancePerRadius, fovY };
}

/** The camera's eye position. */
export function eye(c) {
  const [sp, cp, sy, cy] = [Math.sin(c.pitch), Math.cos(c.pitch), Math.sin(c.yaw), Math.cos(c.yaw)];
  return [c.target[0] + cp * sy * c.distance, c.target[1] + sp * c.distance, c.target[2] + cp * cy * c.distance];
}

const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const normalize = (a) => {
  const l = Math.hypot(a[0], a[1], a[2]);
  return l > 0 ? [a[0] / l, a[1] / l, a[2] / l] : [0, 0, 0];
};

/** Column-major 4×4 product `a × b`. */
export function mul(a, b) {
  const out = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = s;
    }
  }
  return out;
}

/** The near and far planes of camera `c`. */
export function clipPlanes(limits, c) {
  return [c.distance * limits.nearPerDistance, c.distance * limits.farPerDistance];
}

/** Projection × view for a viewport `aspect` wide (OpenGL clip conventions, right-handed). */
export function viewProj(limits, c, aspect) {
  const e = eye(c);
  const f = normalize(sub(c.target, e));
  const s = normalize(cross(f, [0, 1, 0]));
  const u = cross(s, f);
  const view = [s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, -dot(s, e), -dot(u, e), dot(f, e), 1];
  const [near, far] = clipPlanes(limits, c);
  const a = Number.isFinite(aspect) && aspect > 0 ? aspect : 1;
  const t = Math.cos(c.fovY * 0.5) / Math.sin(c.fovY * 0.5);
  const nf = 1 / (near - far);
  const proj = [t / a, 0, 0, 0, 0, t, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  return mul(proj, view);
}

/** The floor grid under bounds `{center, radius, floor}`, lines `step` apart (`Sinew.gridStep`), as line-segment endpoints (x, y, z each). */
export function gridLines({ center, radius, floor }, step) {
  const half = Math.ceil((radius * 1.5) / step) * step;
  const cx = Math.round(center[0] / step) * step;
  const cz = Math.round(center[2] / step) * step;
  const [x0, x1, z0, z1] = [cx - half, cx + half, cz - half, cz + half];
  const out = [];
  const n = Math.round((x1 - x0) / step);
  for (let i = 0; i <= n; i++) out.push(x0 + i * step, floor, z0, x0 + i * step, floor, z1);
  const m = Math.round((z1 - z0) / step);
  for (let i = 0; i <= m; i++) out.push(x0, floor, z0 + i * step, x1, floor, z0 + i * step);
  return new Float32Array(out);
}
