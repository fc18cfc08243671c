//! Symmetric 3×3 matrices and the polar decomposition `A = R·P` of an affine matrix's 3×3 part
//! into a rotation `R` and a symmetric scale/shear factor `P`, the split that dual-quaternion
//! skinning with scale blends (rotation and translation as dual quaternions, `P` linearly).

use core::ops::{Add, Mul};

use super::quat::Quat;
use super::vec::Vec3;
use crate::real::Real;

/// A symmetric 3×3 matrix: the scale/shear factor `P` of a polar decomposition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymMat3<R> {
    /// Row 0, column 0.
    pub xx: R,
    /// Row 1, column 1.
    pub yy: R,
    /// Row 2, column 2.
    pub zz: R,
    /// Rows 0 and 1 (both off-diagonal entries).
    pub xy: R,
    /// Rows 0 and 2.
    pub xz: R,
    /// Rows 1 and 2.
    pub yz: R,
}

impl<R: Real> Default for SymMat3<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<R: Real> SymMat3<R> {
    /// The identity: no scale, no shear.
    pub const IDENTITY: Self = SymMat3 { xx: R::ONE, yy: R::ONE, zz: R::ONE, xy: R::ZERO, xz: R::ZERO, yz: R::ZERO };
    /// The zero matrix.
    pub const ZERO: Self = SymMat3 { xx: R::ZERO, yy: R::ZERO, zz: R::ZERO, xy: R::ZERO, xz: R::ZERO, yz: R::ZERO };

    /// The uniform scale `s·I`.
    #[inline]
    #[must_use]
    pub const fn uniform(s: R) -> Self {
        SymMat3 { xx: s, yy: s, zz: s, xy: R::ZERO, xz: R::ZERO, yz: R::ZERO }
    }
    /// The six entries `[xx, yy, zz, xy, xz, yz]`.
    #[inline]
    #[must_use]
    pub const fn to_array(self) -> [R; 6] {
        [self.xx, self.yy, self.zz, self.xy, self.xz, self.yz]
    }
    /// From `[xx, yy, zz, xy, xz, yz]`.
    #[inline]
    #[must_use]
    pub const fn from_array(a: [R; 6]) -> Self {
        SymMat3 { xx: a[0], yy: a[1], zz: a[2], xy: a[3], xz: a[4], yz: a[5] }
    }
    /// True for the exact identity (what [`polar_decompose`]-based palettes store for rigid
    /// joints).
    #[inline]
    #[must_use]
    pub fn is_identity(&self) -> bool {
        *self == Self::IDENTITY
    }
    /// `P · v`.
    #[inline(always)]
    #[must_use]
    pub fn mul_vec3(&self, v: Vec3<R>) -> Vec3<R> {
        Vec3::new(
            self.xx * v.x + self.xy * v.y + self.xz * v.z,
            self.xy * v.x + self.yy * v.y + self.yz * v.z,
            self.xz * v.x + self.yz * v.y + self.zz * v.z,
        )
    }
    /// The adjugate (transposed cofactor matrix, symmetric here): `adj(P) = det(P) · P⁻¹`.
    #[inline(always)]
    #[must_use]
    pub fn adjugate(&self) -> Self {
        let (a, b, c, d, e, f) = (self.xx, self.yy, self.zz, self.xy, self.xz, self.yz);
        SymMat3 {
            xx: b * c - f * f,
            yy: a * c - e * e,
            zz: a * b - d * d,
            xy: e * f - d * c,
            xz: d * f - b * e,
            yz: d * e - a * f,
        }
    }
    /// The determinant.
    #[inline]
    #[must_use]
    pub fn determinant(&self) -> R {
        let adj = self.adjugate();
        self.xx * adj.xx + self.xy * adj.xy + self.xz * adj.xz
    }
    /// The largest diagonal magnitude: the scale of a definite matrix, whose off-diagonal
    /// entries are smaller.
    #[inline]
    #[must_use]
    pub fn max_diagonal(&self) -> R {
        self.xx.abs().max(self.yy.abs()).max(self.zz.abs())
    }
}

impl<R: Real> Add for SymMat3<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        SymMat3 {
            xx: self.xx + o.xx,
            yy: self.yy + o.yy,
            zz: self.zz + o.zz,
            xy: self.xy + o.xy,
            xz: self.xz + o.xz,
            yz: self.yz + o.yz,
        }
    }
}

impl<R: Real> Mul<R> for SymMat3<R> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: R) -> Self {
        SymMat3 { xx: self.xx * s, yy: self.yy * s, zz: self.zz * s, xy: self.xy * s, xz: self.xz * s, yz: self.yz * s }
    }
}

/// The most Newton iterations [`polar_decompose`] runs; scaled Newton reaches `f32` precision
/// in at most 9 for the condition numbers its tests cover (scales 10⁻³ to 10³ with shear).
pub const POLAR_MAX_ITERATIONS: usize = 16;

/// True when the columns are orthonormal within `2⁻¹⁴` in `f32`, `2⁻¹⁰` in `Q16` (every
/// pairwise dot product within that of 0 or 1): a rigid joint, whose scale factor is taken as
/// exactly the identity. The bounds sit well above the rounding of a composed rigid chain
/// (about `10⁻⁶` in `f32`, `10⁻⁴` in `Q16`) and below any scale an artist sets (a scale of
/// `1 ± 3·10⁻⁵` in `f32` is the largest taken as rigid).
#[inline]
#[must_use]
pub fn is_orthonormal<R: Real>(c: &[Vec3<R>; 3]) -> bool {
    let tol = if R::FIXED_POINT { R::ratio(1, 1 << 10) } else { R::ratio(1, 1 << 14) };
    let near = |v: R, target: R| (v - target).abs() <= tol;
    near(c[0].dot(c[0]), R::ONE)
        && near(c[1].dot(c[1]), R::ONE)
        && near(c[2].dot(c[2]), R::ONE)
        && near(c[0].dot(c[1]), R::ZERO)
        && near(c[0].dot(c[2]), R::ZERO)
        && near(c[1].dot(c[2]), R::ZERO)
}

/// The polar decomposition `A = R·P` of the 3×3 matrix with columns `a`: `R` a rotation (as a
/// unit quaternion), `P = Rᵀ·A` symmetrized. `P` is positive definite for `det A > 0`;
/// for a mirroring `A` (`det A < 0`) it is negative definite (`R` stays a rotation, which a dual
/// quaternion can hold).
///
/// Method: Higham's Newton iteration with Frobenius-norm scaling,
/// `X ← ½(γ·X + X⁻ᵀ/γ)`, `γ = (‖X⁻¹‖_F / ‖X‖_F)^½`, started from `±A / s` (`s` the longest
/// column, so fixed point stays well inside its range), with `X⁻ᵀ` from cross products of the
/// columns; it stops when no entry moves by more than 8 steps of the scalar's precision, or
/// after [`POLAR_MAX_ITERATIONS`]. A matrix too close to singular for the inverse (normalized
/// determinant below 2⁻²⁰ in `f32`, 2⁻¹⁰ in `Q16`) takes the rotation of its normalized
/// columns instead (as [`DualQuat::from_mat4_rigid`](crate::math::DualQuat::from_mat4_rigid));
/// a zero matrix gives the identity rotation and `P = 0`.
#[must_use]
pub fn polar_decompose<R: Real>(a: [Vec3<R>; 3]) -> (Quat<R>, SymMat3<R>) {
    let longest = a[0].length_squared().max(a[1].length_squared()).max(a[2].length_squared());
    if longest <= R::ZERO || !longest.is_finite() {
        return (Quat::IDENTITY, SymMat3::ZERO);
    }
    let inv_s = longest.sqrt().recip();
    let mut x = a.map(|c| c * inv_s);
    let det = x[0].dot(x[1].cross(x[2]));
    let singular = if R::FIXED_POINT { R::ratio(1, 1 << 10) } else { R::ratio(1, 1 << 20) };
    let rotation = if det.abs() < singular {
        Quat::from_mat3_cols(a.map(Vec3::normalize_or_zero))
    } else {
        if det < R::ZERO {
            x = x.map(|c| -c);
        }
        let tol = R::EPSILON * R::from_i32(8);
        for _ in 0..POLAR_MAX_ITERATIONS {
            // X⁻ᵀ = cof(X) / det(X), the cofactor columns being cross products of X's columns.
            let cof = [x[1].cross(x[2]), x[2].cross(x[0]), x[0].cross(x[1])];
            let det = x[0].dot(cof[0]);
            if det <= R::ZERO || !det.is_finite() {
                break;
            }
            let fx = x[0].length_squared() + x[1].length_squared() + x[2].length_squared();
            let fc = cof[0].length_squared() + cof[1].length_squared() + cof[2].length_squared();
            // γ⁴ = ‖X⁻¹‖²_F / ‖X‖²_F = ‖cof‖² / (det² · ‖X‖²).
            let g4 = fc / (det * det * fx);
            let gamma = if g4 > R::ZERO && g4.is_finite() { g4.sqrt().sqrt() } else { R::ONE };
            let inv = (gamma * det).recip();
            let next = [0, 1, 2].map(|i| (x[i] * gamma + cof[i] * inv) * R::HALF);
            let moved = (0..3).map(|i| (next[i] - x[i]).max_abs()).fold(R::ZERO, R::max);
            x = next;
            if moved <= tol {
                break;
            }
        }
        Quat::from_mat3_cols(x)
    };
    // P = Rᵀ·A with R the quaternion's own matrix, so R·P reproduces A to rounding.
    let r = [Vec3::X, Vec3::Y, Vec3::Z].map(|e| rotation.rotate(e));
    let pij = |i: usize, j: usize| r[i].dot(a[j]);
    let p = SymMat3 {
        xx: pij(0, 0),
        yy: pij(1, 1),
        zz: pij(2, 2),
        xy: (pij(0, 1) + pij(1, 0)) * R::HALF,
        xz: (pij(0, 2) + pij(2, 0)) * R::HALF,
        yz: (pij(1, 2) + pij(2, 1)) * R::HALF,
    };
    (rotation, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Mat4;
    use crate::real::Q16;

    fn cols<R: Real>(m: &Mat4<R>) -> [Vec3<R>; 3] {
        [0, 1, 2].map(|c| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2]))
    }

    /// `R·P·v` against `A·v` for a sheared, scaled and a mirrored matrix.
    fn reproduces<R: Real>(tol: f32) {
        let q = Quat::from_axis_angle(Vec3::new(R::ratio(3, 5), R::ZERO, R::ratio(4, 5)), R::ratio(7, 10));
        let q2 = Quat::from_axis_angle(Vec3::new(R::ZERO, R::ONE, R::ZERO), R::ratio(-3, 10));
        let s = Vec3::new(R::ratio(1, 100), R::ratio(3, 100), R::ratio(2, 100));
        // rotation · non-uniform scale · rotation: a symmetric factor off the axes.
        let m = Mat4::from_trs(Vec3::ZERO, q, Vec3::ONE)
            * Mat4::from_trs(Vec3::ZERO, Quat::IDENTITY, s)
            * Mat4::from_trs(Vec3::ZERO, q2, Vec3::ONE);
        let mirrored = m * Mat4::from_trs(Vec3::ZERO, Quat::IDENTITY, Vec3::new(-R::ONE, R::ONE, R::ONE));
        let hundred = Mat4::from_trs(Vec3::ZERO, q, Vec3::new(R::from_i32(100), R::from_i32(100), R::from_i32(100)));
        for (m, unit) in [(m, R::from_i32(100)), (mirrored, R::from_i32(100)), (hundred, R::ratio(1, 100))] {
            let (r, p) = polar_decompose(cols(&m));
            let v = Vec3::new(R::ratio(1, 3), R::from_i32(-2), R::ratio(5, 4)) * unit;
            let want = m.transform_vector3(v);
            let got = r.rotate(p.mul_vec3(v));
            let err = (got - want).max_abs().to_f32() / want.max_abs().to_f32();
            assert!(err < tol, "relative error {err}");
            let det = (p * p.max_diagonal().recip()).determinant();
            assert_eq!(det < R::ZERO, m == mirrored);
        }
    }

    #[test]
    fn reproduces_scaled_sheared_and_mirrored_matrices() {
        reproduces::<f32>(2.0e-6);
        reproduces::<Q16>(2.0e-3);
    }

    #[test]
    fn orthogonal_columns_give_the_column_lengths() {
        let q = Quat::from_axis_angle(Vec3::new(0.0f32, 0.6, 0.8), 1.1);
        let m = Mat4::from_trs(Vec3::ZERO, q, Vec3::new(0.01, 0.01, 0.01));
        let (r, p) = polar_decompose(cols(&m));
        assert!((r.dot(q).abs() - 1.0).abs() < 1.0e-6);
        assert!((p.xx - 0.01).abs() < 1.0e-8 && p.xy.abs() < 1.0e-8);
        assert!(is_orthonormal(&cols(&Mat4::from_trs(Vec3::ZERO, q, Vec3::ONE))));
        assert!(!is_orthonormal(&cols(&m)));
        assert_eq!(polar_decompose([Vec3::<f32>::ZERO; 3]), (Quat::IDENTITY, SymMat3::ZERO));
    }

    #[test]
    fn adjugate_is_det_times_inverse() {
        let p = SymMat3 { xx: 2.0f32, yy: 3.0, zz: 4.0, xy: 0.5, xz: -0.25, yz: 1.0 };
        let v = Vec3::new(0.3, -0.7, 1.1);
        let back = p.adjugate().mul_vec3(p.mul_vec3(v)) * p.determinant().recip();
        assert!((back - v).max_abs() < 1.0e-5);
    }
}
