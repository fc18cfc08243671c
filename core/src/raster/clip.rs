//! Clip space: plane tests, Sutherland–Hodgman polygon clipping, Liang–Barsky segment
//! clipping, and the perspective divide with viewport mapping.
//!
//! Besides the near and far planes (`−w ≤ z ≤ w`, OpenGL convention), primitives are clipped
//! against a guard band: `|x|, |y| ≤ g·w` with `g` chosen per axis so that screen coordinates
//! stay within ±[`GUARD_PX`] pixels. Triangles that only poke out of the screen but stay
//! inside the guard band are not clipped geometrically; the raster stage clips them per pixel.

use super::depth::{DEPTH_BITS, DEPTH_MAX};
use super::fixed::to_fixed;
use super::triangle::{ScreenVertex, SUBPIXEL_BITS};
use crate::math::{Mat4, Vec3, Vec4};
use crate::real::Real;

/// Screen coordinates are kept within ±`GUARD_PX` pixels, which bounds every product of the
/// raster stage well inside `i64`.
pub(crate) const GUARD_PX: i32 = 8191;
/// [`GUARD_PX`] in sub-pixels.
const GUARD_SUB: i64 = (GUARD_PX as i64) << SUBPIXEL_BITS;

/// Outcode bits: which planes a clip-space point is outside of.
pub(crate) const OUT_LEFT: u8 = 1;
pub(crate) const OUT_RIGHT: u8 = 2;
pub(crate) const OUT_BOTTOM: u8 = 4;
pub(crate) const OUT_TOP: u8 = 8;
pub(crate) const OUT_NEAR: u8 = 16;
pub(crate) const OUT_FAR: u8 = 32;
/// Not a finite point; such a vertex's primitives are dropped.
pub(crate) const OUT_INVALID: u8 = 64;

/// Most vertices a triangle has after clipping against the six planes.
const MAX_POLY: usize = 9;

/// Viewport mapping and guard-band factors for one frame size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Viewport<R> {
    half_w: R,
    half_h: R,
    gx: R,
    gy: R,
}

impl<R: Real> Viewport<R> {
    /// The viewport of a `width × height` frame (both in `1..=MAX_DIMENSION`).
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let (w, h) = (width.max(1) as i32, height.max(1) as i32);
        // x_px = (x_ndc + 1)·W/2 ∈ [W − GUARD_PX, GUARD_PX] for |x_ndc| ≤ 2·GUARD_PX/W − 1.
        Viewport {
            half_w: R::ratio(w, 2),
            half_h: R::ratio(h, 2),
            gx: R::ratio(2 * GUARD_PX - w, w),
            gy: R::ratio(2 * GUARD_PX - h, h),
        }
    }

    /// Signed distance-like value of `c` to plane `bit`: inside when ≥ 0.
    #[inline(always)]
    fn dist(&self, c: &Vec4<R>, bit: u8) -> R {
        match bit {
            OUT_LEFT => self.gx * c.w + c.x,
            OUT_RIGHT => self.gx * c.w - c.x,
            OUT_BOTTOM => self.gy * c.w + c.y,
            OUT_TOP => self.gy * c.w - c.y,
            OUT_NEAR => c.w + c.z,
            _ => c.w - c.z,
        }
    }

    /// The planes `c` is outside of.
    #[inline]
    pub(crate) fn outcode(&self, c: &Vec4<R>) -> u8 {
        if !c.is_finite() {
            return OUT_INVALID;
        }
        let mut out = 0;
        for bit in [OUT_LEFT, OUT_RIGHT, OUT_BOTTOM, OUT_TOP, OUT_NEAR, OUT_FAR] {
            if self.dist(c, bit) < R::ZERO {
                out |= bit;
            }
        }
        out
    }

    /// Perspective divide and viewport mapping of a point inside the clip volume: sub-pixel
    /// x and y (y down) and depth in `0..=DEPTH_MAX`. Results are clamped into the guard band
    /// and the depth range, so rounding in the clipper cannot break the raster stage's bounds.
    #[inline]
    pub(crate) fn project(&self, c: &Vec4<R>, s: i32) -> ScreenVertex {
        let (xn, yn, zn) = (c.x / c.w, c.y / c.w, c.z / c.w);
        let x = (xn + R::ONE) * self.half_w;
        let y = (R::ONE - yn) * self.half_h;
        let z = (zn + R::ONE) * R::HALF;
        ScreenVertex {
            x: to_fixed(x, SUBPIXEL_BITS).clamp(-GUARD_SUB, GUARD_SUB) as i32,
            y: to_fixed(y, SUBPIXEL_BITS).clamp(-GUARD_SUB, GUARD_SUB) as i32,
            z: to_fixed(z, DEPTH_BITS).clamp(0, DEPTH_MAX as i64) as i32,
            s,
        }
    }
}

/// `view_proj × model`, then a point of it.
#[inline(always)]
pub(crate) fn to_clip<R: Real>(mvp: &Mat4<R>, p: Vec3<R>) -> Vec4<R> {
    let c = &mvp.cols;
    Vec4::new(
        c[0][0] * p.x + c[1][0] * p.y + c[2][0] * p.z + c[3][0],
        c[0][1] * p.x + c[1][1] * p.y + c[2][1] * p.z + c[3][1],
        c[0][2] * p.x + c[1][2] * p.y + c[2][2] * p.z + c[3][2],
        c[0][3] * p.x + c[1][3] * p.y + c[2][3] * p.z + c[3][3],
    )
}

/// Vertex attributes the clipper carries besides the position and the shade, interpolated
/// linearly in clip space (so perspective-correctly).
pub(crate) trait Attributes<R>: Copy + Default {
    /// The attributes at parameter `t` (0 at `self`, 1 at `other`); `tf` is `t` with 16
    /// fractional bits, clamped into `0..=1 << 16`.
    fn lerp(&self, other: &Self, t: R, tf: i64) -> Self;
}

impl<R> Attributes<R> for () {
    #[inline(always)]
    fn lerp(&self, _: &Self, _: R, _: i64) -> Self {}
}

/// A clip-space vertex with its shade (level ×256) and other attributes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClipVertex<R, A = ()> {
    pub c: Vec4<R>,
    pub s: i32,
    pub a: A,
}

/// Point at parameter `t` (0 at `a`, 1 at `b`).
#[inline]
fn lerp<R: Real, A: Attributes<R>>(a: &ClipVertex<R, A>, b: &ClipVertex<R, A>, t: R) -> ClipVertex<R, A> {
    let d = Vec4::new(b.c.x - a.c.x, b.c.y - a.c.y, b.c.z - a.c.z, b.c.w - a.c.w);
    let c = Vec4::new(a.c.x + d.x * t, a.c.y + d.y * t, a.c.z + d.z * t, a.c.w + d.w * t);
    let tf = to_fixed(t, 16).clamp(0, 1 << 16);
    let s = a.s as i64 + ((((b.s - a.s) as i64) * tf) >> 16);
    ClipVertex { c, s: s as i32, a: a.a.lerp(&b.a, t, tf) }
}

/// A convex polygon of up to [`MAX_POLY`] clip-space vertices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polygon<R, A = ()> {
    pub v: [ClipVertex<R, A>; MAX_POLY],
    pub n: usize,
}

impl<R: Real, A: Attributes<R>> Polygon<R, A> {
    /// The vertices.
    #[inline]
    pub(crate) fn vertices(&self) -> &[ClipVertex<R, A>] {
        &self.v[..self.n.min(MAX_POLY)]
    }
}

/// Clips triangle `tri` against the planes in `planes` (an outcode mask), keeping the part
/// inside. The result may have fewer than 3 vertices (nothing left).
pub(crate) fn clip_triangle<R: Real, A: Attributes<R>>(
    vp: &Viewport<R>,
    tri: [ClipVertex<R, A>; 3],
    planes: u8,
) -> Polygon<R, A> {
    let mut cur = Polygon { v: [ClipVertex::default(); MAX_POLY], n: 3 };
    cur.v[..3].copy_from_slice(&tri);
    for bit in [OUT_NEAR, OUT_FAR, OUT_LEFT, OUT_RIGHT, OUT_BOTTOM, OUT_TOP] {
        if planes & bit == 0 {
            continue;
        }
        let mut next = Polygon { v: [ClipVertex::default(); MAX_POLY], n: 0 };
        let src = cur.vertices();
        for (i, a) in src.iter().enumerate() {
            let b = &src[(i + 1) % src.len()];
            let (da, db) = (vp.dist(&a.c, bit), vp.dist(&b.c, bit));
            let (ina, inb) = (da >= R::ZERO, db >= R::ZERO);
            if ina {
                push(&mut next, *a);
            }
            if ina != inb {
                push(&mut next, lerp(a, b, da / (da - db)));
            }
        }
        cur = next;
        if cur.n < 3 {
            cur.n = 0;
            break;
        }
    }
    cur
}

/// Appends a vertex (a convex polygon clipped by six planes never exceeds [`MAX_POLY`]).
#[inline(always)]
fn push<R: Real, A: Attributes<R>>(p: &mut Polygon<R, A>, v: ClipVertex<R, A>) {
    if let Some(slot) = p.v.get_mut(p.n) {
        *slot = v;
        p.n += 1;
    }
}

/// Clips segment `a`–`b` against all six planes (Liang–Barsky); the parameters of the part
/// inside, or `None` when nothing is.
pub(crate) fn clip_segment<R: Real>(vp: &Viewport<R>, a: &Vec4<R>, b: &Vec4<R>) -> Option<(R, R)> {
    let (mut t0, mut t1) = (R::ZERO, R::ONE);
    for bit in [OUT_NEAR, OUT_FAR, OUT_LEFT, OUT_RIGHT, OUT_BOTTOM, OUT_TOP] {
        let (da, db) = (vp.dist(a, bit), vp.dist(b, bit));
        if da < R::ZERO && db < R::ZERO {
            return None;
        }
        if da < R::ZERO {
            t0 = t0.max(da / (da - db));
        } else if db < R::ZERO {
            t1 = t1.min(da / (da - db));
        }
    }
    (t0 <= t1).then_some((t0, t1))
}

/// Point at parameter `t` of segment `a`–`b`.
#[inline]
pub(crate) fn lerp4<R: Real>(a: &Vec4<R>, b: &Vec4<R>, t: R) -> Vec4<R> {
    Vec4::new(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t, a.w + (b.w - a.w) * t)
}
