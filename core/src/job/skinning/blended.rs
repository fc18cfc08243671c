// A blended matrix as lane vectors ([`Blended`]) and the affine transforms of lane vectors
// that LBS and DQS share, so that both give the same bits for the same matrix.

use crate::math::Vec3;
use crate::platform::fma;
use crate::real::{Lanes, Real};

/// The lanes of one matrix column.
pub(crate) type V<R> = <R as Real>::Lanes;

/// A matrix as lane vectors: columns 0 to 2 and the translation (lanes 0 to 2 of each matter).
#[derive(Clone, Copy)]
pub(crate) struct Blended<R: Real> {
    pub(crate) cols: [V<R>; 3],
    pub(crate) translation: V<R>,
}

impl<R: Real> Blended<R> {
    /// The lanes of a column-major matrix.
    #[inline(always)]
    pub(crate) fn columns(m: &[[R; 4]; 4]) -> Self {
        Blended {
            cols: [V::<R>::load(&m[0]), V::<R>::load(&m[1]), V::<R>::load(&m[2])],
            translation: V::<R>::load(&m[3]),
        }
    }

    /// `m · (v, 1)`: `((c₀·x + c₁·y) + c₂·z) + t`, lane by lane; with FMA three fused
    /// multiply-adds starting from the translation, `((t + c₀·x) + c₁·y) + c₂·z`.
    #[inline(always)]
    pub(crate) fn point(&self, v: Vec3<R>) -> Vec3<R> {
        vec3(self.point_lanes(v))
    }

    /// [`point`](Self::point) in lanes 0 to 2.
    #[inline(always)]
    pub(crate) fn point_lanes(&self, v: Vec3<R>) -> V<R> {
        let s = V::<R>::splat;
        affine_point::<R>(self.cols, self.translation, [s(v.x), s(v.y), s(v.z)])
    }

    /// `m · (v, 0)`: `(c₀·x + c₁·y) + c₂·z`, lane by lane.
    #[inline(always)]
    pub(crate) fn direction(&self, v: Vec3<R>) -> Vec3<R> {
        vec3(self.linear(v))
    }

    #[inline(always)]
    pub(crate) fn linear(&self, v: Vec3<R>) -> V<R> {
        let s = V::<R>::splat;
        affine_linear::<R>(self.cols, [s(v.x), s(v.y), s(v.z)])
    }
}

/// `c₀·x + c₁·y + c₂·z + t` lane by lane: with FMA three fused multiply-adds from `t`,
/// `((t + c₀·x) + c₁·y) + c₂·z`; otherwise [`affine_linear`] then `+ t`. One set of operations
/// for a matrix's columns against a vector's broadcast components ([`Blended`]) and for four
/// matrices' rows against four vectors' components (DQS), so the two give the same bits.
#[inline(always)]
pub(crate) fn affine_point<R: Real>([c0, c1, c2]: [V<R>; 3], t: V<R>, [x, y, z]: [V<R>; 3]) -> V<R> {
    if fma(V3) {
        return c2.mul_add_whole_on::<V3>(z, c1.mul_add_whole_on::<V3>(y, c0.mul_add_whole_on::<V3>(x, t)));
    }
    affine_linear::<R>([c0, c1, c2], [x, y, z]) + t
}

/// `(c₀·x + c₁·y) + c₂·z` lane by lane (see [`affine_point`]).
#[inline(always)]
pub(crate) fn affine_linear<R: Real>([c0, c1, c2]: [V<R>; 3], [x, y, z]: [V<R>; 3]) -> V<R> {
    c2.mul_add_whole_on::<V3>(z, c1.mul_add_whole_on::<V3>(y, c0 * x))
}

/// The first three lanes of `o`.
#[inline(always)]
pub(crate) fn vec3<R: Real>(o: V<R>) -> Vec3<R> {
    let a = o.to_array();
    Vec3::new(a[0], a[1], a[2])
}
