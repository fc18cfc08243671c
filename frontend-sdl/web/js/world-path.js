// The scripted world path the spring bones' checks move a character on (the one of
// frontend-sdl/offline/tests/springs/three_springs.mjs, the cross-check against three-vrm): at
// time t seconds, with A = `amplitude` (file units) and Θ = `turn` (radians),
//   world(t) = T(A·sin(2π·0.5·t), 0, 0.5·A·sin(2π·0.8·t)) · Ry(Θ·sin(2π·0.3·t)) · Rz(0.5·Θ·sin(2π·0.7·t))
// (world(0) is the identity). Used by the springs benchmark and the browser tests; it depends on
// nothing, so Node imports it as it is.

/**
 * The path's placement at time `t`: `translation` `[x, y, z]` and `rotation`, the quaternion
 * `[x, y, z, w]` of Ry(yaw)·Rz(roll), in doubles.
 * @param {number} t seconds
 * @param {number} amplitude the sway, in file units
 * @param {number} turn the largest yaw, in radians (the roll is half of it)
 * @returns {{translation: number[], rotation: number[]}}
 */
export function scriptedWorld(t, amplitude, turn) {
  const tau = 2 * Math.PI;
  const translation = [amplitude * Math.sin(tau * 0.5 * t), 0, 0.5 * amplitude * Math.sin(tau * 0.8 * t)];
  const yaw = turn * Math.sin(tau * 0.3 * t);
  const roll = 0.5 * turn * Math.sin(tau * 0.7 * t);
  const [sy, cy, sz, cz] = [Math.sin(yaw / 2), Math.cos(yaw / 2), Math.sin(roll / 2), Math.cos(roll / 2)];
  // (0, sy, 0, cy)·(0, 0, sz, cz)
  return { translation, rotation: [sy * sz, sy * cz, cy * sz, cy * cz] };
}
