//! Conversions between sinew's types and the `f64` reference types.
//!
//! Going to `f64` is exact for both scalars ([`ExactF64`]): every `f32` and every Q16.16 value
//! is an `f64`. Going from `f64` rounds to the nearest value of the scalar (for `Q16`, the
//! nearest multiple of 2⁻¹⁶, saturating); tests feed the rounded values back to the reference
//! so that both sides see the same input.

use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, Transform, Vec3, Vec4};
use sinew::{Real, Q16};

use crate::reference::{DualQuatd, Mat4d, Quatd, Trsd, Vec3d, Vec4d};

/// A [`Real`] with exact conversions to `f64` and correctly rounded ones from it.
///
/// `Real::to_f32` is not enough for `Q16`: a Q16.16 value above 256 has more significant bits
/// than an `f32` holds.
pub trait ExactF64: Real {
    /// The exact value.
    fn to_f64(self) -> f64;
    /// The nearest value (saturating for `Q16`; NaN gives 0).
    fn from_f64(v: f64) -> Self;
}

impl ExactF64 for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl ExactF64 for Q16 {
    fn to_f64(self) -> f64 {
        f64::from(self.to_bits()) / 65536.0
    }
    fn from_f64(v: f64) -> Self {
        // `as` saturates at the i32 range and maps NaN to 0.
        Q16::from_bits((v * 65536.0).round() as i32)
    }
}

/// A scalar to `f64`.
#[must_use]
pub fn real_to_f64<R: ExactF64>(v: R) -> f64 {
    v.to_f64()
}

/// An `f64` to the nearest `R`.
#[must_use]
pub fn real_from_f64<R: ExactF64>(v: f64) -> R {
    R::from_f64(v)
}

/// A sinew vector to `f64`.
#[must_use]
pub fn vec3_to_f64<R: ExactF64>(v: Vec3<R>) -> Vec3d {
    Vec3d::new(real_to_f64(v.x), real_to_f64(v.y), real_to_f64(v.z))
}

/// An `f64` vector to sinew.
#[must_use]
pub fn vec3_from_f64<R: ExactF64>(v: Vec3d) -> Vec3<R> {
    Vec3::new(real_from_f64(v.x), real_from_f64(v.y), real_from_f64(v.z))
}

/// A sinew 4-vector to `f64`.
#[must_use]
pub fn vec4_to_f64<R: ExactF64>(v: Vec4<R>) -> Vec4d {
    Vec4d::new(real_to_f64(v.x), real_to_f64(v.y), real_to_f64(v.z), real_to_f64(v.w))
}

/// An `f64` 4-vector to sinew.
#[must_use]
pub fn vec4_from_f64<R: ExactF64>(v: Vec4d) -> Vec4<R> {
    Vec4::new(real_from_f64(v.x), real_from_f64(v.y), real_from_f64(v.z), real_from_f64(v.w))
}

/// A sinew quaternion to `f64`.
#[must_use]
pub fn quat_to_f64<R: ExactF64>(q: Quat<R>) -> Quatd {
    Quatd::new(real_to_f64(q.x), real_to_f64(q.y), real_to_f64(q.z), real_to_f64(q.w))
}

/// An `f64` quaternion to sinew (component-wise rounding; not renormalized).
#[must_use]
pub fn quat_from_f64<R: ExactF64>(q: Quatd) -> Quat<R> {
    Quat::new(real_from_f64(q.x), real_from_f64(q.y), real_from_f64(q.z), real_from_f64(q.w))
}

/// A sinew matrix to `f64`.
#[must_use]
pub fn mat4_to_f64<R: ExactF64>(m: &Mat4<R>) -> Mat4d {
    Mat4d { cols: m.cols.map(|c| c.map(real_to_f64)) }
}

/// An `f64` matrix to sinew.
#[must_use]
pub fn mat4_from_f64<R: ExactF64>(m: &Mat4d) -> Mat4<R> {
    Mat4 { cols: m.cols.map(|c| c.map(real_from_f64)) }
}

/// A sinew dual quaternion to `f64`.
#[must_use]
pub fn dual_quat_to_f64<R: ExactF64>(d: &DualQuat<R>) -> DualQuatd {
    DualQuatd { real: quat_to_f64(d.real), dual: quat_to_f64(d.dual) }
}

/// A sinew transform to `f64`.
#[must_use]
pub fn transform_to_f64<R: ExactF64>(t: &Transform<R>) -> Trsd {
    Trsd { translation: vec3_to_f64(t.translation), rotation: quat_to_f64(t.rotation), scale: vec3_to_f64(t.scale) }
}

/// An `f64` transform to sinew.
#[must_use]
pub fn transform_from_f64<R: ExactF64>(t: &Trsd) -> Transform<R> {
    Transform::new(vec3_from_f64(t.translation), quat_from_f64(t.rotation), vec3_from_f64(t.scale))
}

/// Packs transforms four per [`SoaTransform`]; lanes past the end hold identity.
#[must_use]
pub fn pack_soa<R: ExactF64>(transforms: &[Transform<R>]) -> Vec<SoaTransform<R>> {
    transforms
        .chunks(4)
        .map(|chunk| {
            let mut s = SoaTransform::IDENTITY;
            for (lane, t) in chunk.iter().enumerate() {
                s.set_lane(lane, t);
            }
            s
        })
        .collect()
}
