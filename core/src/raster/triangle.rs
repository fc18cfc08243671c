//! Triangle setup and coverage: sub-pixel screen positions, face culling, integer edge
//! functions, the top-left rule, and exact per-row spans found by stepping each edge's
//! quotient and remainder.

use super::color::ShadeTable;
use super::fixed::{ceil_div, div_round, floor_div};
use super::target::{Sink, Span};

/// Fractional bits of screen coordinates: vertices snap to 1/16 of a pixel.
pub const SUBPIXEL_BITS: u32 = 4;

/// Which triangles to discard by facing. Front faces are counter-clockwise in normalized
/// device coordinates (y up), as in glTF and OpenGL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cull {
    /// Discard back faces (clockwise).
    #[default]
    Back,
    /// Discard front faces.
    Front,
    /// Draw both.
    None,
}

/// Sub-pixel units per pixel.
const ONE: i64 = 1 << SUBPIXEL_BITS;
/// Offset of a pixel center in sub-pixel units.
const CENTER: i64 = ONE / 2;
/// Half a shade level in the 24-bit fraction of a span shade, so truncation rounds.
const SHADE_BIAS: i64 = 1 << 23;

/// A vertex in screen space: position in sub-pixels ([`SUBPIXEL_BITS`] fractional bits, y
/// down), depth in `0..=DEPTH_MAX`, shade level ×256 (`0..=0xFF00`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScreenVertex {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub s: i32,
}

/// Twice the signed area in sub-pixel units², computed in screen coordinates (y down):
/// positive when the triangle turns clockwise as seen on screen, i.e. for a back face (front
/// faces are counter-clockwise as seen, in NDC and on screen alike).
#[inline(always)]
pub(crate) fn area2(v: &[ScreenVertex; 3]) -> i64 {
    let (ax, ay) = ((v[1].x - v[0].x) as i64, (v[1].y - v[0].y) as i64);
    let (bx, by) = ((v[2].x - v[0].x) as i64, (v[2].y - v[0].y) as i64);
    ax * by - ay * bx
}

/// Applies face culling and reorders the survivors to the winding [`fill_triangle`] expects
/// (positive [`area2`]); `None` for culled or zero-area triangles.
#[inline(always)]
pub(crate) fn orient(v: [ScreenVertex; 3], cull: Cull) -> Option<[ScreenVertex; 3]> {
    orient_by(v, area2(&v), cull)
}

/// [`orient`] of any vertex type, given the triangle's [`area2`] `a`.
#[inline(always)]
pub(crate) fn orient_by<T: Copy>(v: [T; 3], a: i64, cull: Cull) -> Option<[T; 3]> {
    let flipped = [v[0], v[2], v[1]];
    match cull {
        _ if a == 0 => None,
        Cull::Back => (a < 0).then_some(flipped),
        Cull::Front => (a > 0).then_some(v),
        Cull::None => Some(if a > 0 { v } else { flipped }),
    }
}

/// The inclusive pixel rectangle whose centers the triangle's bounding box covers, clipped to
/// the sink's columns and held rows; `None` when empty.
#[inline(always)]
pub(crate) fn pixel_bounds<S: Sink>(sink: &S, v: &[ScreenVertex; 3]) -> Option<(i32, i32, i32, i32)> {
    let (w, _) = sink.frame_size();
    let (r0, r1) = sink.rows();
    let min_y = v[0].y.min(v[1].y).min(v[2].y) as i64;
    let max_y = v[0].y.max(v[1].y).max(v[2].y) as i64;
    let py0 = (ceil_div(min_y - CENTER, ONE) as i32).max(r0);
    let py1 = (floor_div(max_y - CENTER, ONE) as i32).min(r1 - 1);
    if py0 > py1 {
        return None;
    }
    let min_x = v[0].x.min(v[1].x).min(v[2].x) as i64;
    let max_x = v[0].x.max(v[1].x).max(v[2].x) as i64;
    let px0 = (ceil_div(min_x - CENTER, ONE) as i32).max(0);
    let px1 = (floor_div(max_x - CENTER, ONE) as i32).min(w - 1);
    if px0 > px1 {
        return None;
    }
    Some((px0, py0, px1, py1))
}

/// One edge's constraint on the columns of a row: `E + A·k ≥ 0` for bbox column `k`.
#[derive(Clone, Copy)]
enum Bound {
    /// `A > 0`: `k ≥ −q` where `E = q·m + r`, `0 ≤ r < m = A`.
    Lower { q: i64, r: i64, m: i64, qb: i64, rb: i64 },
    /// `A < 0`: `k ≤ q` where `E = q·m + r`, `0 ≤ r < m = −A`.
    Upper { q: i64, r: i64, m: i64, qb: i64, rb: i64 },
    /// `A = 0`: the whole row is inside when `e ≥ 0`; `e` grows by `b` per row.
    Flat { e: i64, b: i64 },
}

impl Bound {
    /// The constraint for an edge whose (biased) value at column 0 of the first row is `e`,
    /// growing by `a` per column and `b` per row.
    #[inline(always)]
    fn new(e: i64, a: i64, b: i64) -> Bound {
        if a == 0 {
            return Bound::Flat { e, b };
        }
        let m = a.abs();
        let (q, r) = (floor_div(e, m), e.rem_euclid(m));
        let (qb, rb) = (floor_div(b, m), b.rem_euclid(m));
        if a > 0 {
            Bound::Lower { q, r, m, qb, rb }
        } else {
            Bound::Upper { q, r, m, qb, rb }
        }
    }

    /// Narrows `[lo, hi]` to this row's inside columns.
    #[inline(always)]
    fn clip(&self, lo: &mut i64, hi: &mut i64) {
        match *self {
            Bound::Lower { q, .. } => *lo = (*lo).max(-q),
            Bound::Upper { q, .. } => *hi = (*hi).min(q),
            Bound::Flat { e, .. } => {
                if e < 0 {
                    *hi = -1;
                }
            }
        }
    }

    /// Moves to the next row.
    #[inline(always)]
    fn step(&mut self) {
        match self {
            Bound::Lower { q, r, m, qb, rb } | Bound::Upper { q, r, m, qb, rb } => {
                *q += *qb;
                *r += *rb;
                if *r >= *m {
                    *r -= *m;
                    *q += 1;
                }
            }
            Bound::Flat { e, b } => *e += *b,
        }
    }
}

/// A linearly interpolated attribute: the value at the first pixel of the bounding box and
/// its steps per column and per row, all with 16 more fractional bits than the attribute.
#[derive(Clone, Copy)]
pub(crate) struct Plane {
    pub start: i64,
    pub dx: i64,
    pub dy: i64,
}

/// The covered pixels of a triangle with positive [`area2`] (see [`orient`]), row by row, and
/// the planes of its attributes.
///
/// Covered pixels are those whose center is inside, or on a top or left edge. Attribute
/// planes ([`Coverage::plane`]) go through the three vertices; the value at every pixel equals
/// `a₀·2¹⁶ + gx·(px − x₀) + gy·(py − y₀)` with gradients rounded once per triangle, whatever
/// rows the sink holds, so a frame drawn in bands matches one drawn whole.
pub(crate) struct Coverage {
    bounds: [Bound; 3],
    /// The pixel bounding box, clipped to the sink.
    px0: i32,
    py0: i32,
    py1: i32,
    px1: i32,
    /// The first bounding-box pixel's center in sub-pixels.
    sx: i64,
    sy: i64,
    area: i64,
    v0: (i64, i64),
    e0: (i64, i64),
    e2: (i64, i64),
}

impl Coverage {
    /// The coverage of `v` in `sink`, `None` when no pixel of the sink can be covered.
    #[inline(always)]
    pub(crate) fn new<S: Sink>(sink: &S, v: &[ScreenVertex; 3]) -> Option<Coverage> {
        let area = area2(v);
        if area <= 0 {
            return None;
        }
        let (px0, py0, px1, py1) = pixel_bounds(sink, v)?;
        let sx = px0 as i64 * ONE + CENTER;
        let sy = py0 as i64 * ONE + CENTER;

        let mut bounds = [Bound::Flat { e: 0, b: 0 }; 3];
        for (i, bound) in bounds.iter_mut().enumerate() {
            let a = v[i];
            let b = v[(i + 1) % 3];
            let (ex, ey) = ((b.x - a.x) as i64, (b.y - a.y) as i64);
            // Inside is E ≥ 0 on top and left edges, E > 0 elsewhere (the triangle turns
            // clockwise as seen on screen, so a top edge runs in +x and a left edge runs up).
            let top_left = ey < 0 || (ey == 0 && ex > 0);
            let e = ex * (sy - a.y as i64) - ey * (sx - a.x as i64) - if top_left { 0 } else { 1 };
            *bound = Bound::new(e, -ey * ONE, ex * ONE);
        }
        // Barycentric weight of v1 is E₂/area (edge v2→v0), of v2 is E₀/area (edge v0→v1).
        let e0 = ((v[1].x - v[0].x) as i64, (v[1].y - v[0].y) as i64);
        let e2 = ((v[0].x - v[2].x) as i64, (v[0].y - v[2].y) as i64);
        Some(Coverage { bounds, px0, py0, py1, px1, sx, sy, area, v0: (v[0].x as i64, v[0].y as i64), e0, e2 })
    }

    /// The plane of an attribute with values `a0`, `a1`, `a2` at the vertices (|differences|
    /// below 2²⁸), with 16 more fractional bits than the attribute.
    #[inline(always)]
    pub(crate) fn plane(&self, a0: i32, a1: i32, a2: i32) -> Plane {
        let (d1, d2) = ((a1 - a0) as i64, (a2 - a0) as i64);
        if d1 == 0 && d2 == 0 {
            return Plane { start: (a0 as i64) << 16, dx: 0, dy: 0 };
        }
        let (ex0, ey0) = self.e0;
        let (ex2, ey2) = self.e2;
        let gx = div_round((-d1 * ey2 - d2 * ey0) << 16, self.area);
        let gy = div_round((d1 * ex2 + d2 * ex0) << 16, self.area);
        let start = ((a0 as i64) << 16)
            .wrapping_add(gx.wrapping_mul(self.sx - self.v0.0))
            .wrapping_add(gy.wrapping_mul(self.sy - self.v0.1));
        Plane { start, dx: gx.wrapping_mul(ONE), dy: gy.wrapping_mul(ONE) }
    }

    /// Calls `row(y, x0, cols)` for every row `y` of the bounding box, top to bottom, where
    /// `x0` is the box's first column and `cols` the covered columns `x0 + lo ..= x0 + hi` as
    /// `Some((lo, hi))` (`lo` is what a plane's row value steps by: `row + dx · lo`), or `None`.
    #[inline(always)]
    pub(crate) fn rows(&mut self, mut row: impl FnMut(i32, i32, Option<(i64, i64)>)) {
        let last = (self.px1 - self.px0) as i64;
        for y in self.py0..=self.py1 {
            let (mut lo, mut hi) = (0i64, last);
            for b in &self.bounds {
                b.clip(&mut lo, &mut hi);
            }
            row(y, self.px0, (lo <= hi).then_some((lo, hi)));
            for b in &mut self.bounds {
                b.step();
            }
        }
    }
}

/// Fills a triangle with positive [`area2`] (see [`orient`]) into `sink`, its depth and shade
/// from the planes through the three vertices (see [`Coverage`]).
pub(crate) fn fill_triangle<S: Sink>(sink: &mut S, v: &[ScreenVertex; 3], table: &ShadeTable<S::Raw>) {
    let Some(mut cov) = Coverage::new(sink, v) else { return };
    let zp = cov.plane(v[0].z, v[1].z, v[2].z);
    let mut sp = cov.plane(v[0].s, v[1].s, v[2].s);
    // Shade values carry 8 fractional bits already: 8 + 16 = 24, plus the rounding bias.
    sp.start = sp.start.wrapping_add(SHADE_BIAS);

    let (mut z_row, mut s_row) = (zp.start, sp.start);
    cov.rows(|y, x0, cols| {
        if let Some((lo, hi)) = cols {
            let span = Span {
                y,
                x0: x0 + lo as i32,
                x1: x0 + hi as i32 + 1,
                z: z_row.wrapping_add(zp.dx.wrapping_mul(lo)),
                dz: zp.dx,
                s: s_row.wrapping_add(sp.dx.wrapping_mul(lo)),
                ds: sp.dx,
            };
            sink.span_shaded(&span, table);
        }
        z_row = z_row.wrapping_add(zp.dy);
        s_row = s_row.wrapping_add(sp.dy);
    });
}
