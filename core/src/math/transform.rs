//! Translation / rotation / scale transforms.

use super::mat4::Mat4;
use super::quat::Quat;
use super::vec::Vec3;
use crate::real::Real;

/// A local joint transform: scale, then rotate, then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Transform<R> {
    /// Translation.
    pub translation: Vec3<R>,
    /// Rotation, a unit quaternion.
    pub rotation: Quat<R>,
    /// Scale per axis (non-uniform allowed).
    pub scale: Vec3<R>,
}

impl<R: Real> Default for Transform<R> {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl<R: Real> Transform<R> {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Self = Transform { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    /// A transform from its parts.
    #[inline(always)]
    #[must_use]
    pub const fn new(translation: Vec3<R>, rotation: Quat<R>, scale: Vec3<R>) -> Self {
        Transform { translation, rotation, scale }
    }
    /// The affine matrix `T · R · S`.
    #[inline]
    #[must_use]
    pub fn to_mat4(&self) -> Mat4<R> {
        Mat4::from_trs(self.translation, self.rotation, self.scale)
    }
    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() & self.rotation.is_finite() & self.scale.is_finite()
    }
}
