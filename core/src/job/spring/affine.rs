//! The spring stage's matrix products: a point or a direction through a model matrix, and a
//! matrix through another, computed a column at a time in [`Real::Lanes`] where `f32` lanes are
//! one SIMD register (each lane's operations and their order are those of
//! [`Mat4::transform_point3`], [`Mat4::transform_vector3`] and [`mul_mat4`], so the results
//! are the same bits), and through those scalar functions elsewhere (fixed point, and targets
//! whose lanes are four scalars, where a fourth row would only cost).

use crate::math::mat4::mul_mat4;
use crate::math::{Mat4, Vec3};
use crate::platform::SIMD_LANES;
use crate::real::{Lanes, Real};

/// True when the products run in lanes.
const fn in_lanes<R: Real>() -> bool {
    SIMD_LANES && !R::FIXED_POINT
}

/// `m`'s columns as lanes.
#[inline(always)]
fn cols<R: Real>(m: &Mat4<R>) -> [R::Lanes; 4] {
    m.cols.each_ref().map(R::Lanes::load)
}

/// The first three lanes of `v` as a vector.
#[inline(always)]
fn xyz<R: Real>(v: R::Lanes) -> Vec3<R> {
    let [x, y, z, _] = v.to_array();
    Vec3::new(x, y, z)
}

/// `m × (p, 1)`: [`Mat4::transform_point3`].
#[inline(always)]
pub(super) fn point<R: Real>(m: &Mat4<R>, p: Vec3<R>) -> Vec3<R> {
    if !in_lanes::<R>() {
        return m.transform_point3(p);
    }
    let [c0, c1, c2, c3] = cols(m);
    let s = R::Lanes::splat;
    xyz::<R>(c0 * s(p.x) + c1 * s(p.y) + c2 * s(p.z) + c3)
}

/// `m × (v, 0)`: [`Mat4::transform_vector3`].
#[inline(always)]
pub(super) fn vector<R: Real>(m: &Mat4<R>, v: Vec3<R>) -> Vec3<R> {
    if !in_lanes::<R>() {
        return m.transform_vector3(v);
    }
    let [c0, c1, c2, _] = cols(m);
    let s = R::Lanes::splat;
    xyz::<R>(c0 * s(v.x) + c1 * s(v.y) + c2 * s(v.z))
}

/// `a × b`: [`mul_mat4`].
#[inline(always)]
pub(super) fn product<R: Real>(a: &Mat4<R>, b: &Mat4<R>) -> Mat4<R> {
    if !in_lanes::<R>() {
        return mul_mat4(a, b);
    }
    let [a0, a1, a2, a3] = cols(a);
    let s = R::Lanes::splat;
    // Column by column, written out: `map` over the columns is not always inlined.
    let col = |c: &[R; 4]| (a0 * s(c[0]) + a1 * s(c[1]) + a2 * s(c[2]) + a3 * s(c[3])).to_array();
    let [c0, c1, c2, c3] = &b.cols;
    Mat4 { cols: [col(c0), col(c1), col(c2), col(c3)] }
}

/// `parent × l` for an affine `l` given by its columns (last row `0 0 0 1`), with the
/// operations and their order of [`LocalToModelJob`](crate::job::LocalToModelJob): each column
/// `p₂·l₂ + (p₁·l₁ + p₀·l₀)`, the translation's plus `p₃`.
#[inline(always)]
pub(super) fn affine_product<R: Real>(parent: &Mat4<R>, l: &Mat4<R>) -> Mat4<R> {
    if !in_lanes::<R>() {
        let p = &parent.cols;
        let mut o = Mat4::ZERO;
        for (oc, lc) in o.cols.iter_mut().zip(l.cols.iter()) {
            let (a, b, d) = (lc[0], lc[1], lc[2]);
            for (r, v) in oc.iter_mut().enumerate() {
                *v = p[2][r] * d + (p[1][r] * b + p[0][r] * a);
            }
        }
        for (v, pv) in o.cols[3].iter_mut().zip(p[3]) {
            *v += pv;
        }
        return o;
    }
    let [p0, p1, p2, p3] = cols(parent);
    let s = R::Lanes::splat;
    let col = |c: &[R; 4]| p2 * s(c[2]) + (p1 * s(c[1]) + p0 * s(c[0]));
    let [c0, c1, c2, c3] = &l.cols;
    Mat4 { cols: [col(c0).to_array(), col(c1).to_array(), col(c2).to_array(), (col(c3) + p3).to_array()] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Transform};

    /// A matrix with no structure: every element a different, non-round number.
    fn scrambled(seed: f32) -> Mat4<f32> {
        Mat4::from_cols_array(&core::array::from_fn(|i| ((i as f32 + seed) * 0.739).sin() * 3.1))
    }

    #[test]
    fn lanes_give_the_scalar_bits() {
        let (a, b) = (scrambled(0.3), scrambled(7.9));
        let p = Vec3::new(0.37f32, -1.25, 2.5);
        let bits = |v: Vec3<f32>| [v.x, v.y, v.z].map(f32::to_bits);
        let mat_bits = |m: Mat4<f32>| m.to_cols_array().map(f32::to_bits);
        assert_eq!(bits(point(&a, p)), bits(a.transform_point3(p)));
        assert_eq!(bits(vector(&a, p)), bits(a.transform_vector3(p)));
        assert_eq!(mat_bits(product(&a, &b)), mat_bits(mul_mat4(&a, &b)));
        let local = Transform::new(p, Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.7), Vec3::new(1.5, 0.5, 2.0));
        let l = local.to_mat4();
        let p = &a.cols;
        let mut want = [[0.0f32; 4]; 4];
        for (oc, lc) in want.iter_mut().zip(l.cols.iter()) {
            for (r, v) in oc.iter_mut().enumerate() {
                *v = p[2][r] * lc[2] + (p[1][r] * lc[1] + p[0][r] * lc[0]);
            }
        }
        for (v, pv) in want[3].iter_mut().zip(p[3]) {
            *v += pv;
        }
        assert_eq!(mat_bits(affine_product(&a, &l)), mat_bits(Mat4 { cols: want }));
    }
}
