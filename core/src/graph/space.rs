//! Blend-space weights: piecewise-linear in 1D, gradient band interpolation in 2D.
//!
//! # 2D: gradient band interpolation
//!
//! Johansen's gradient bands (*Automated Semi-Procedural Animation for Character Locomotion*,
//! 2009; Unity's "freeform cartesian" space): each point `pᵢ` gets, for the parameter value `p`,
//!
//! ```text
//! hᵢ = min over j ≠ i of  max(0, 1 − (p − pᵢ)·(pⱼ − pᵢ) / |pⱼ − pᵢ|²),    wᵢ = hᵢ / Σ hₖ
//! ```
//!
//! — one minus the projection of `p` onto each edge from `pᵢ`, so a clip weighs 1 at its own
//! point and 0 at every other. Unlike barycentric weights on a triangulation, it needs nothing
//! built (no triangulation to compute, store or bake), accepts any layout of points (collinear
//! ones, a single row of speeds, points outside the hull of the others), is continuous
//! everywhere including outside the points' hull, and stays cheap for the few clips a space
//! holds (`n²` projections, 64 for eight clips). The nearest point always has `hᵢ ≥ ½`,
//! so the sum never vanishes. Its cost: a clip may take weight from farther than a triangle's
//! corners, which flattens sharp changes between neighbours (acceptable for locomotion).

use super::BlendPoint;
use crate::real::Real;

/// The most points a blend space may have.
pub const MAX_BLEND_POINTS: usize = 8;

/// Writes the weights of a 1D blend space's `points` (positions strictly increasing along
/// `position[0]`) at parameter value `value` into `out[..points.len()]`: the two neighbours of
/// `value` take `1 − f` and `f`, the others 0; outside the range the end point takes 1. A NaN
/// value reads as the first point. Writes nothing when `out` is shorter than `points`.
pub fn weights_1d<R: Real>(points: &[BlendPoint<R>], value: R, out: &mut [R]) {
    let Some(out) = out.get_mut(..points.len()) else { return };
    out.fill(R::ZERO);
    if points.is_empty() {
        return;
    }
    let mut hi = 0;
    while hi < points.len() && points[hi].position[0] < value {
        hi += 1;
    }
    if hi == 0 {
        // At or below the first point (a NaN compares false and lands here too).
        out[0] = R::ONE;
        return;
    }
    if hi == points.len() {
        out[hi - 1] = R::ONE;
        return;
    }
    let (a, b) = (points[hi - 1].position[0], points[hi].position[0]);
    let f = ((value - a) / (b - a)).clamp(R::ZERO, R::ONE);
    out[hi - 1] = R::ONE - f;
    out[hi] = f;
}

/// Writes the gradient-band weights of a 2D blend space's `points` (distinct positions) at
/// parameter value `p` into `out[..points.len()]`; they sum to 1. Writes nothing when `out` is
/// shorter than `points`.
///
/// Johansen's gradient bands: `hᵢ = min over j ≠ i of max(0, 1 − (p − pᵢ)·(pⱼ − pᵢ) / |pⱼ − pᵢ|²)`,
/// `wᵢ = hᵢ / Σ hₖ`. Chosen over barycentric weights on a triangulation: nothing to build or
/// bake, any layout of points (collinear, outside each other's hull), continuous everywhere,
/// 1 at a clip's own point and 0 at the others; weights may spread over more than three clips.
pub fn weights_2d<R: Real>(points: &[BlendPoint<R>], p: [R; 2], out: &mut [R]) {
    let Some(out) = out.get_mut(..points.len()) else { return };
    let mut sum = R::ZERO;
    for (i, (w, pi)) in out.iter_mut().zip(points).enumerate() {
        let d = [p[0] - pi.position[0], p[1] - pi.position[1]];
        let mut h = R::ONE;
        for (j, pj) in points.iter().enumerate() {
            if j == i {
                continue;
            }
            let e = [pj.position[0] - pi.position[0], pj.position[1] - pi.position[1]];
            let len2 = e[0] * e[0] + e[1] * e[1];
            if len2 > R::ZERO {
                let t = R::ONE - (d[0] * e[0] + d[1] * e[1]) / len2;
                h = h.min(t.max(R::ZERO));
            }
        }
        *w = h;
        sum += h;
    }
    if sum > R::ZERO {
        let inv = sum.recip();
        for w in out.iter_mut() {
            *w *= inv;
        }
    } else if let Some(w) = out.first_mut() {
        // Unreachable for distinct positions (the nearest point keeps at least ½).
        *w = R::ONE;
    }
}
