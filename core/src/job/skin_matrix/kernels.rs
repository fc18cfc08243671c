// The matrix palette's lane kernels, written once and compiled once per kernel set:
// `skin_matrix.rs` includes this file in its modules `build` and `v3`, each of which names its
// set with the constant `V3` that the lane operations read (`mul_add_on::<V3>`). The rule is
// `mul_mat4` (the scalar product of microcontrollers); the tests hold these kernels to it.

use super::SkinMatrixJob;
use crate::math::Mat4;
use crate::real::{Lanes, Real};

/// The palette, where lanes are SIMD registers: a column of the product is four lane
/// multiply-adds ([`mul_mat4_lanes`]: the same sums in the same order as `mul_mat4`'s, so the
/// same bits unless this kernel set fuses them), and the loops zip their inputs instead of
/// indexing them (validated: every joint index has its model matrix).
#[inline(always)]
pub(super) fn palette<R: Real>(job: &mut SkinMatrixJob<'_, R>) {
    let pairs = job.output.iter_mut().zip(job.inverse_bind);
    match job.joints {
        Some(joints) => {
            for ((o, ib), &j) in pairs.zip(joints) {
                if let Some(m) = job.model.get(usize::from(j)) {
                    *o = mul_mat4_lanes(m, ib);
                }
            }
        }
        None => pairs.zip(job.model).for_each(|((o, ib), m)| *o = mul_mat4_lanes(m, ib)),
    }
}

/// `a × b` with the columns of `a` in lanes: column `c` of the product is
/// `((a₀·b[c][0] + a₁·b[c][1]) + a₂·b[c][2]) + a₃·b[c][3]`, lane by lane, as `mul_mat4` sums
/// each entry (fused multiply-adds where this kernel set fuses them). The dispatched v3 kernels
/// compute two columns to an eight-lane register (`Lanes::mul_mat4_wide_on`), the same sums in
/// the same order.
#[inline(always)]
pub(super) fn mul_mat4_lanes<R: Real>(a: &Mat4<R>, b: &Mat4<R>) -> Mat4<R> {
    if let Some(cols) = R::Lanes::mul_mat4_wide_on::<V3>(&a.cols, &b.cols) {
        return Mat4 { cols };
    }
    let (ld, s) = (<R::Lanes as Lanes<R>>::load, <R::Lanes as Lanes<R>>::splat);
    let a = [ld(&a.cols[0]), ld(&a.cols[1]), ld(&a.cols[2]), ld(&a.cols[3])];
    let mut o = Mat4::ZERO;
    for (oc, bc) in o.cols.iter_mut().zip(&b.cols) {
        let sum = a[1].mul_add_on::<V3>(s(bc[1]), a[0] * s(bc[0]));
        *oc = a[3].mul_add_on::<V3>(s(bc[3]), a[2].mul_add_on::<V3>(s(bc[2]), sum)).to_array();
    }
    o
}
