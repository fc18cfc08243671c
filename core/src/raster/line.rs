//! Lines and points, for overlays such as a skeleton's bones and joints.

use super::clip::{clip_segment, lerp4, to_clip, Viewport};
use super::color::Rgb;
use super::error::RasterError;
use super::fixed::{ceil_div, div_round, floor_div};
use super::mesh::Indices;
use super::target::{Sink, Span};
use super::triangle::SUBPIXEL_BITS;
use crate::math::{Mat4, Vec3};
use crate::real::Real;

/// A line list: one-pixel-wide segments between pairs of points.
///
/// A segment is clipped in clip space (near, far, guard band), its ends snap to the pixels
/// that contain them, and it covers, along its major axis, every pixel from one end to the
/// other inclusive, with the minor coordinate rounded to nearest (ties toward +∞). The same
/// pixels are drawn whichever way round a pair of indices is listed.
#[derive(Clone, Copy, Debug)]
pub struct Lines<'a, R> {
    /// Points in model space.
    pub positions: &'a [Vec3<R>],
    /// Two indices per segment, each below `positions.len()`.
    pub indices: Indices<'a>,
    /// Model-to-world matrix.
    pub model: Mat4<R>,
    /// Line color (unlit).
    pub color: Rgb,
    /// Depth-test (and write depth) against the target's depth buffer. Off draws over
    /// everything drawn before.
    pub depth_test: bool,
}

impl<R: Real> Lines<'_, R> {
    /// Checks the indices.
    ///
    /// # Errors
    ///
    /// [`RasterError::IndexCountMismatch`] when the index count is odd;
    /// [`RasterError::IndexOutOfRange`] when an index is not below `positions.len()`.
    pub fn validate(&self) -> Result<(), RasterError> {
        if self.indices.len() % 2 != 0 {
            return Err(RasterError::IndexCountMismatch);
        }
        if self.indices.max().is_some_and(|m| m >= self.positions.len()) {
            return Err(RasterError::IndexOutOfRange);
        }
        Ok(())
    }
}

/// Points drawn as squares of `size × size` pixels, such as joints.
///
/// A point is dropped when it is outside the near or far plane or the guard band; otherwise
/// its square covers `size` pixels per axis starting `size / 2` pixels before the pixel that
/// contains it (so odd sizes are centered).
#[derive(Clone, Copy, Debug)]
pub struct Points<'a, R> {
    /// Points in model space.
    pub positions: &'a [Vec3<R>],
    /// Model-to-world matrix.
    pub model: Mat4<R>,
    /// Color (unlit).
    pub color: Rgb,
    /// Side of the square in pixels (0 draws nothing).
    pub size: u8,
    /// Depth-test (and write depth) against the target's depth buffer. Off draws over
    /// everything drawn before.
    pub depth_test: bool,
}

/// A segment end in screen space: pixel coordinates and depth.
#[derive(Clone, Copy, Debug)]
struct End {
    x: i64,
    y: i64,
    z: i64,
}

/// Draws every segment of a validated line list.
pub(crate) fn draw_lines<R: Real, S: Sink>(sink: &mut S, lines: &Lines<'_, R>, view_proj: &Mat4<R>, vp: &Viewport<R>) {
    let mvp = *view_proj * lines.model;
    let color = S::pack(lines.color);
    for k in 0..lines.indices.len() / 2 {
        let (Some(i), Some(j)) = (lines.indices.get(2 * k), lines.indices.get(2 * k + 1)) else { continue };
        // The same computation whichever way round the pair is listed.
        let (i, j) = (i.min(j), i.max(j));
        let (Some(&pa), Some(&pb)) = (lines.positions.get(i), lines.positions.get(j)) else { continue };
        let (ca, cb) = (to_clip(&mvp, pa), to_clip(&mvp, pb));
        if !ca.is_finite() || !cb.is_finite() {
            continue;
        }
        let Some((t0, t1)) = clip_segment(vp, &ca, &cb) else { continue };
        let (a, b) = (vp.project(&lerp4(&ca, &cb, t0), 0), vp.project(&lerp4(&ca, &cb, t1), 0));
        let end = |x: i32, y: i32, z: i32| End {
            x: (x >> SUBPIXEL_BITS) as i64,
            y: (y >> SUBPIXEL_BITS) as i64,
            z: z as i64,
        };
        segment(sink, end(a.x, a.y, a.z), end(b.x, b.y, b.z), color, lines.depth_test);
    }
}

/// Draws the pixels of segment `a`–`b` (pixel coordinates, inclusive) that the sink holds.
fn segment<S: Sink>(sink: &mut S, a: End, b: End, color: S::Raw, depth_test: bool) {
    let (w, _) = sink.frame_size();
    let (r0, r1) = sink.rows();
    let x_major = (b.x - a.x).abs() >= (b.y - a.y).abs();
    // Walk along the major axis `u`, with minor axis `v`, in increasing `u` (ties broken by
    // `v`) so that both directions give the same pixels.
    let (ua, va, ub, vb) = if x_major { (a.x, a.y, b.x, b.y) } else { (a.y, a.x, b.y, b.x) };
    let ((ua, va, za), (ub, vb, zb)) =
        if (ua, va) <= (ub, vb) { ((ua, va, a.z), (ub, vb, b.z)) } else { ((ub, vb, b.z), (ua, va, a.z)) };
    let (du, dv) = (ub - ua, vb - va);
    // Limits of the sink along u and v.
    let (u_lim, v_lim) = if x_major {
        ((0, w as i64 - 1), (r0 as i64, r1 as i64 - 1))
    } else {
        ((r0 as i64, r1 as i64 - 1), (0, w as i64 - 1))
    };
    let plot = |sink: &mut S, u: i64, v: i64, z: i64| {
        let (x, y) = if x_major { (u, v) } else { (v, u) };
        let span = Span { y: y as i32, x0: x as i32, x1: x as i32 + 1, z, dz: 0, s: 0, ds: 0 };
        sink.span_solid(&span, color, depth_test);
    };
    if du == 0 {
        if (u_lim.0..=u_lim.1).contains(&ua) && (v_lim.0..=v_lim.1).contains(&va) {
            plot(sink, ua, va, za << 16);
        }
        return;
    }
    // v(k) = va + m(k), m(k) = ⌊(2k·dv + du) / 2du⌋ for k = u − ua. m is monotonic in k, so the
    // range of k inside the v limits is found by division (each pixel is still checked).
    let mut k0 = (u_lim.0 - ua).max(0);
    let mut k1 = (u_lim.1 - ua).min(du);
    if dv > 0 {
        let (lo, hi) = (v_lim.0 - va, v_lim.1 - va);
        // m(k) ≥ lo ⇔ 2k·dv + du ≥ 2du·lo; m(k) ≤ hi ⇔ 2k·dv + du < 2du·(hi + 1).
        k0 = k0.max(ceil_div(2 * du * lo - du, 2 * dv));
        k1 = k1.min(ceil_div(2 * du * (hi + 1) - du, 2 * dv) - 1);
    } else if dv < 0 {
        let (lo, hi) = (v_lim.0 - va, v_lim.1 - va);
        // With e = −dv: m(k) ≥ lo ⇔ du − 2k·e ≥ 2du·lo; m(k) ≤ hi ⇔ du − 2k·e < 2du·(hi + 1).
        k0 = k0.max(floor_div(du - 2 * du * (hi + 1), -2 * dv) + 1);
        k1 = k1.min(floor_div(du - 2 * du * lo, -2 * dv));
    } else if !(v_lim.0..=v_lim.1).contains(&va) {
        return;
    }
    if k0 > k1 {
        return;
    }
    let dd = 2 * du;
    let n = 2 * k0 * dv + du;
    let mut v = va + floor_div(n, dd);
    let mut r = n.rem_euclid(dd);
    let gz = div_round((zb - za) << 16, du);
    let mut z = (za << 16) + gz * k0;
    for k in k0..=k1 {
        if v >= v_lim.0 && v <= v_lim.1 {
            plot(sink, ua + k, v, z);
        }
        r += 2 * dv;
        if r >= dd {
            r -= dd;
            v += 1;
        } else if r < 0 {
            r += dd;
            v -= 1;
        }
        z += gz;
    }
}

/// Draws every point of a point list.
pub(crate) fn draw_points<R: Real, S: Sink>(
    sink: &mut S,
    points: &Points<'_, R>,
    view_proj: &Mat4<R>,
    vp: &Viewport<R>,
) {
    if points.size == 0 {
        return;
    }
    let mvp = *view_proj * points.model;
    let color = S::pack(points.color);
    let (w, _) = sink.frame_size();
    let (r0, r1) = sink.rows();
    let size = points.size as i32;
    for &p in points.positions {
        let c = to_clip(&mvp, p);
        if vp.outcode(&c) != 0 {
            continue;
        }
        let s = vp.project(&c, 0);
        let (px, py) = (s.x >> SUBPIXEL_BITS, s.y >> SUBPIXEL_BITS);
        let (x0, y0) = (px - size / 2, py - size / 2);
        let (x1, y1) = ((x0 + size).min(w), (y0 + size).min(r1));
        let x0 = x0.max(0);
        for y in y0.max(r0)..y1 {
            let span = Span { y, x0, x1, z: (s.z as i64) << 16, dz: 0, s: 0, ds: 0 };
            if x0 < x1 {
                sink.span_solid(&span, color, points.depth_test);
            }
        }
    }
}
