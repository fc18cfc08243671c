//! Structure-of-arrays types: four joints per element, one `[R; 4]` lane array per component.
//!
//! A [`SoaTransform`] holds the local transforms of four consecutive joints; with `f32` each
//! component is one 16-byte SIMD register. Joint `j` lives in element `j / 4`, lane `j % 4`.
//! Lane loops are written so that the compiler vectorizes them; no `unsafe` is involved.

use super::quat::Quat;
use super::transform::Transform;
use super::vec::Vec3;
use crate::real::Real;

/// Four 3-vectors, one per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct SoaVec3<R> {
    /// X of lanes 0..4.
    pub x: [R; 4],
    /// Y of lanes 0..4.
    pub y: [R; 4],
    /// Z of lanes 0..4.
    pub z: [R; 4],
}

/// Four quaternions, one per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct SoaQuat<R> {
    /// X of lanes 0..4.
    pub x: [R; 4],
    /// Y of lanes 0..4.
    pub y: [R; 4],
    /// Z of lanes 0..4.
    pub z: [R; 4],
    /// W of lanes 0..4.
    pub w: [R; 4],
}

/// The local transforms of four joints.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct SoaTransform<R> {
    /// Translations.
    pub translation: SoaVec3<R>,
    /// Rotations (unit quaternions).
    pub rotation: SoaQuat<R>,
    /// Scales.
    pub scale: SoaVec3<R>,
}

impl<R: Real> SoaVec3<R> {
    /// All lanes zero.
    pub const ZERO: Self = SoaVec3 { x: [R::ZERO; 4], y: [R::ZERO; 4], z: [R::ZERO; 4] };
    /// All lanes (1, 1, 1).
    pub const ONE: Self = SoaVec3 { x: [R::ONE; 4], y: [R::ONE; 4], z: [R::ONE; 4] };

    /// Lane `i` (0..4; taken modulo 4).
    #[inline(always)]
    #[must_use]
    pub fn lane(&self, i: usize) -> Vec3<R> {
        let i = i & 3;
        Vec3::new(self.x[i], self.y[i], self.z[i])
    }
    /// Sets lane `i` (0..4; taken modulo 4).
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, v: Vec3<R>) {
        let i = i & 3;
        self.x[i] = v.x;
        self.y[i] = v.y;
        self.z[i] = v.z;
    }
    /// True when every lane is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        (0..4).all(|i| self.lane(i).is_finite())
    }
}

impl<R: Real> SoaQuat<R> {
    /// All lanes identity.
    pub const IDENTITY: Self = SoaQuat { x: [R::ZERO; 4], y: [R::ZERO; 4], z: [R::ZERO; 4], w: [R::ONE; 4] };

    /// Lane `i` (0..4; taken modulo 4).
    #[inline(always)]
    #[must_use]
    pub fn lane(&self, i: usize) -> Quat<R> {
        let i = i & 3;
        Quat::new(self.x[i], self.y[i], self.z[i], self.w[i])
    }
    /// Sets lane `i` (0..4; taken modulo 4).
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, q: Quat<R>) {
        let i = i & 3;
        self.x[i] = q.x;
        self.y[i] = q.y;
        self.z[i] = q.z;
        self.w[i] = q.w;
    }
}

impl<R: Real> Default for SoaTransform<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<R: Real> SoaTransform<R> {
    /// Four identity transforms.
    pub const IDENTITY: Self =
        SoaTransform { translation: SoaVec3::ZERO, rotation: SoaQuat::IDENTITY, scale: SoaVec3::ONE };

    /// Packs four transforms.
    #[must_use]
    pub fn from_transforms(t: [Transform<R>; 4]) -> Self {
        let mut s = Self::IDENTITY;
        for (i, t) in t.iter().enumerate() {
            s.set_lane(i, t);
        }
        s
    }
    /// Lane `i` (0..4; taken modulo 4) as a transform.
    #[inline(always)]
    #[must_use]
    pub fn lane(&self, i: usize) -> Transform<R> {
        Transform { translation: self.translation.lane(i), rotation: self.rotation.lane(i), scale: self.scale.lane(i) }
    }
    /// Sets lane `i` (0..4; taken modulo 4).
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, t: &Transform<R>) {
        self.translation.set_lane(i, t.translation);
        self.rotation.set_lane(i, t.rotation);
        self.scale.set_lane(i, t.scale);
    }
    /// The affine matrices of the four lanes, in SoA form: `m[c][r]` is row `r` (0..3) of
    /// column `c` (0..4) for all four lanes. Rows 3 are implicitly (0, 0, 0, 1).
    #[inline(always)]
    #[must_use]
    pub fn to_affine_soa(&self) -> [[[R; 4]; 3]; 4] {
        let q = &self.rotation;
        let s = &self.scale;
        let t = &self.translation;
        let mut m = [[[R::ZERO; 4]; 3]; 4];
        for l in 0..4 {
            let (x, y, z, w) = (q.x[l], q.y[l], q.z[l], q.w[l]);
            let (x2, y2, z2) = (x + x, y + y, z + z);
            let (xx, yy, zz) = (x * x2, y * y2, z * z2);
            let (xy, xz, yz) = (x * y2, x * z2, y * z2);
            let (wx, wy, wz) = (w * x2, w * y2, w * z2);
            m[0][0][l] = (R::ONE - (yy + zz)) * s.x[l];
            m[0][1][l] = (xy + wz) * s.x[l];
            m[0][2][l] = (xz - wy) * s.x[l];
            m[1][0][l] = (xy - wz) * s.y[l];
            m[1][1][l] = (R::ONE - (xx + zz)) * s.y[l];
            m[1][2][l] = (yz + wx) * s.y[l];
            m[2][0][l] = (xz + wy) * s.z[l];
            m[2][1][l] = (yz - wx) * s.z[l];
            m[2][2][l] = (R::ONE - (xx + yy)) * s.z[l];
            m[3][0][l] = t.x[l];
            m[3][1][l] = t.y[l];
            m[3][2][l] = t.z[l];
        }
        m
    }
}

/// Fixed-capacity buffers of SoA transforms start at the identity.
impl<R: Real> crate::capacity::Element for SoaTransform<R> {
    const INIT: Self = SoaTransform::IDENTITY;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Mat4;

    #[test]
    fn lanes_roundtrip_and_match_aos_matrices() {
        let ts: [Transform<f32>; 4] = core::array::from_fn(|i| {
            let a = i as f32;
            Transform::new(
                Vec3::new(a, -a, 2.0 * a),
                Quat::from_axis_angle(Vec3::new(0.0, 0.6, 0.8), 0.4 * a),
                Vec3::new(1.0 + a, 1.0, 0.5),
            )
        });
        let s = SoaTransform::from_transforms(ts);
        let m = s.to_affine_soa();
        for (l, t) in ts.iter().enumerate() {
            assert_eq!(s.lane(l), *t);
            let e: Mat4<f32> = t.to_mat4();
            for c in 0..4 {
                for r in 0..3 {
                    assert_eq!(m[c][r][l], e.cols[c][r]);
                }
            }
        }
    }
}
