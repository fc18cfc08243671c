//! Unit dual quaternions: rigid transforms that blend without collapsing volume.

use core::ops::{Add, Mul};

use super::mat4::Mat4;
use super::polar::{is_orthonormal, polar_decompose, SymMat3};
use super::quat::Quat;
use super::vec::Vec3;
use crate::real::Real;

/// A dual quaternion `real + ε·dual`. A unit dual quaternion is a rigid transform: rotation
/// `real`, translation `2 · dual · conj(real)`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct DualQuat<R> {
    /// The rotation part.
    pub real: Quat<R>,
    /// The translation part, `½ · (t, 0) · real`.
    pub dual: Quat<R>,
}

impl<R: Real> Default for DualQuat<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<R: Real> DualQuat<R> {
    /// The identity transform.
    pub const IDENTITY: Self =
        DualQuat { real: Quat::IDENTITY, dual: Quat { x: R::ZERO, y: R::ZERO, z: R::ZERO, w: R::ZERO } };

    /// The rigid transform "rotate by `r`, then translate by `t`".
    #[inline]
    #[must_use]
    pub fn from_rotation_translation(r: Quat<R>, t: Vec3<R>) -> Self {
        let tq = Quat::new(t.x, t.y, t.z, R::ZERO);
        DualQuat { real: r, dual: (tq * r) * R::HALF }
    }
    /// The rigid part of an affine matrix: its rotation (columns normalized first, so a scaled
    /// joint keeps its orientation) and translation. Scale and shear are dropped: dual-quaternion
    /// skinning is rigid by construction.
    #[must_use]
    pub fn from_mat4_rigid(m: &Mat4<R>) -> Self {
        let c = [
            Vec3::new(m.cols[0][0], m.cols[0][1], m.cols[0][2]).normalize_or_zero(),
            Vec3::new(m.cols[1][0], m.cols[1][1], m.cols[1][2]).normalize_or_zero(),
            Vec3::new(m.cols[2][0], m.cols[2][1], m.cols[2][2]).normalize_or_zero(),
        ];
        Self::from_rotation_translation(Quat::from_mat3_cols(c), m.translation())
    }
    /// The split of an affine matrix `[A | t]` that dual-quaternion skinning with scale blends:
    /// `A = R·P` with `R` a rotation and `P` symmetric (the polar decomposition, see
    /// [`polar_decompose`]), returned as the rigid transform `(R, t)` and `P`, so that
    /// `m · v = dq.transform_point3(P · v)`.
    ///
    /// A rigid joint (the 3×3 part orthonormal, see [`is_orthonormal`]) gives
    /// exactly [`from_mat4_rigid`](Self::from_mat4_rigid) and [`SymMat3::IDENTITY`].
    #[must_use]
    pub fn from_mat4_scaled(m: &Mat4<R>) -> (Self, SymMat3<R>) {
        let a = [0, 1, 2].map(|c| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2]));
        if is_orthonormal(&a) {
            return (Self::from_mat4_rigid(m), SymMat3::IDENTITY);
        }
        let (r, p) = polar_decompose(a);
        (Self::from_rotation_translation(r, m.translation()), p)
    }
    /// The translation of a unit dual quaternion.
    #[inline]
    #[must_use]
    pub fn translation(&self) -> Vec3<R> {
        ((self.dual * R::TWO) * self.real.conjugate()).xyz()
    }
    /// Divides both parts by the norm of `real`, or gives identity when it is zero.
    #[inline]
    #[must_use]
    pub fn normalize(self) -> Self {
        let l2 = self.real.length_squared();
        if l2 > R::ZERO && l2.is_finite() {
            let inv = l2.inv_sqrt();
            DualQuat { real: self.real * inv, dual: self.dual * inv }
        } else {
            Self::IDENTITY
        }
    }
    /// Applies a normalized dual quaternion to a point.
    #[inline(always)]
    #[must_use]
    pub fn transform_point3(&self, p: Vec3<R>) -> Vec3<R> {
        // t = 2 (w_r·d − w_d·r + r × d) with r, d the vector parts.
        let (r, d) = (self.real.xyz(), self.dual.xyz());
        let t = (d * self.real.w - r * self.dual.w + r.cross(d)) * R::TWO;
        self.real.rotate(p) + t
    }
    /// Applies the rotation of a normalized dual quaternion to a direction.
    #[inline(always)]
    #[must_use]
    pub fn transform_vector3(&self, v: Vec3<R>) -> Vec3<R> {
        self.real.rotate(v)
    }
    /// The matrix of a normalized dual quaternion.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4<R> {
        Mat4::from_trs(self.translation(), self.real, Vec3::ONE)
    }
}

impl<R: Real> Mul<R> for DualQuat<R> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: R) -> Self {
        DualQuat { real: self.real * s, dual: self.dual * s }
    }
}
impl<R: Real> Add for DualQuat<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        DualQuat { real: self.real + o.real, dual: self.dual + o.dual }
    }
}
impl<R: Real> Mul for DualQuat<R> {
    type Output = Self;
    /// Composition: `(a * b).transform_point3(p) == a.transform_point3(b.transform_point3(p))`.
    #[inline]
    fn mul(self, b: Self) -> Self {
        DualQuat { real: self.real * b.real, dual: self.real * b.dual + self.dual * b.real }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_matrix_for_rigid_transforms() {
        let q = Quat::from_axis_angle(Vec3::new(0.0f32, 0.6, 0.8), 2.2);
        let t = Vec3::new(0.3, -4.0, 1.5);
        let m = Mat4::from_trs(t, q, Vec3::ONE);
        let dq = DualQuat::from_mat4_rigid(&m);
        let p = Vec3::new(1.0, 2.0, -0.5);
        assert!((dq.transform_point3(p) - m.transform_point3(p)).max_abs() < 1.0e-5);
        assert!((dq.translation() - t).max_abs() < 1.0e-5);
        let composed = dq * dq;
        let mm = m * m;
        assert!((composed.transform_point3(p) - mm.transform_point3(p)).max_abs() < 1.0e-4);
        // Scale is dropped, rotation kept.
        let ms = Mat4::from_trs(t, q, Vec3::new(2.0, 3.0, 0.5));
        let dqs = DualQuat::from_mat4_rigid(&ms);
        assert!((dqs.transform_point3(p) - dq.transform_point3(p)).max_abs() < 1.0e-5);
        // With the scale factor the matrix is reproduced; rigid matrices give the rigid split.
        let (d, s) = DualQuat::from_mat4_scaled(&ms);
        assert!((d.transform_point3(s.mul_vec3(p)) - ms.transform_point3(p)).max_abs() < 1.0e-5);
        assert_eq!(DualQuat::from_mat4_scaled(&m), (dq, SymMat3::IDENTITY));
    }
}
