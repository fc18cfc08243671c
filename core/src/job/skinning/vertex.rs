//! Per-vertex streams: optional input and output streams mapped vertex by vertex, and
//! directions (normals, tangents' xyz) scaled back to unit length, one at a time or four.

use crate::math::{Vec3, Vec4};
use crate::real::{Lanes, Real};

/// The lanes of one vector component.
type V<R> = <R as Real>::Lanes;

/// `out[v] = f(src[v])` where the job has the stream (both slices) and `v` is in both.
#[inline(always)]
pub(super) fn map_vertex<S: Copy, D>(src: Option<&[S]>, out: Option<&mut [D]>, v: usize, f: impl FnOnce(S) -> D) {
    if let (Some(s), Some(d)) = (src.and_then(|s| s.get(v)), out.and_then(|o| o.get_mut(v))) {
        *d = f(*s);
    }
}

/// An optional input stream and its optional output.
pub(super) type Stream<'s, T> = (Option<&'s [T]>, Option<&'s mut [T]>);

/// Vertex `v`'s normal and tangent, where the job has them, through `f` (a tangent's xyz; its
/// w is kept).
#[inline(always)]
pub(super) fn directions<R: Real>(
    v: usize,
    (nrm, out_n): Stream<'_, Vec3<R>>,
    (tan, out_t): Stream<'_, Vec4<R>>,
    f: impl Fn(Vec3<R>) -> Vec3<R>,
) {
    map_vertex(nrm, out_n, v, &f);
    map_vertex(tan, out_t, v, |t| f(t.truncate()).extend(t.w));
}

/// `v` scaled to unit length; zero stays zero.
///
/// In `f32`, branch-free: the squared length, [`Real::inv_sqrt_positive`] (a bit-level seed
/// and three Newton steps, no division, the same bits on every target) and three
/// multiplications; a zero vector meets the seed's large finite value and stays zero (inputs
/// are finite, as the job requires). `Q16` first divides by the largest component, so a short
/// vector (a normal under a 0.01 joint scale, whose squared length has only a few bits) keeps
/// its direction's precision, and a long one (scale 100) does not overflow.
#[inline(always)]
pub(super) fn unit<R: Real>(v: Vec3<R>) -> Vec3<R> {
    if R::FIXED_POINT {
        let m = v.max_abs();
        if m <= R::ZERO {
            return Vec3::ZERO;
        }
        (v * m.recip()).normalize_or_zero()
    } else {
        v * v.length_squared().inv_sqrt_positive()
    }
}

/// Every vector of `v` scaled to unit length ([`unit`]), four at a time in floating point: the
/// squared lengths summed as [`unit`] sums them, then, four at once, the lanes' bit-level seed
/// and Newton steps (the scalar ones), so the same bits as [`unit`] vector by vector. The
/// groups of four do not depend on each other, so the Newton steps' dependency chains overlap
/// (one chain per vertex inside the skinning loop would hold up the vertices after it).
#[inline(always)]
pub(super) fn renormalize<R: Real>(v: &mut [Vec3<R>]) {
    renormalize_by(v, |v| *v, |v, u| *v = u);
}

/// The xyz of every vector of `v` scaled to unit length, as [`renormalize`]; w is kept.
#[inline(always)]
pub(super) fn renormalize_xyz<R: Real>(v: &mut [Vec4<R>]) {
    renormalize_by(v, |t| t.truncate(), |t, u| *t = u.extend(t.w));
}

/// [`renormalize`] of the vectors `get` reads from `v`'s elements and `set` writes back.
#[inline(always)]
pub(super) fn renormalize_by<R: Real, T>(v: &mut [T], get: impl Fn(&T) -> Vec3<R>, set: impl Fn(&mut T, Vec3<R>)) {
    let mut groups = v.chunks_exact_mut(4);
    for g in groups.by_ref() {
        if let [a, b, c, d] = g {
            let l2 = V::<R>::load(&[&*a, &*b, &*c, &*d].map(|x| get(x).length_squared()));
            for (x, s) in [a, b, c, d].into_iter().zip(l2.inv_sqrt_positive().to_array()) {
                set(x, get(x) * s);
            }
        }
    }
    for x in groups.into_remainder() {
        set(x, unit(get(x)));
    }
}
