//! 3- and 4-component vectors.

use core::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use crate::real::Real;

/// A 3-component vector (a point, a direction, a scale).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Vec3<R> {
    /// X component.
    pub x: R,
    /// Y component.
    pub y: R,
    /// Z component.
    pub z: R,
}

/// A 4-component vector (a tangent with its handedness in `w`, a homogeneous point).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Vec4<R> {
    /// X component.
    pub x: R,
    /// Y component.
    pub y: R,
    /// Z component.
    pub z: R,
    /// W component.
    pub w: R,
}

impl<R: Real> Vec3<R> {
    /// (0, 0, 0).
    pub const ZERO: Self = Vec3 { x: R::ZERO, y: R::ZERO, z: R::ZERO };
    /// (1, 1, 1).
    pub const ONE: Self = Vec3 { x: R::ONE, y: R::ONE, z: R::ONE };
    /// (1, 0, 0).
    pub const X: Self = Vec3 { x: R::ONE, y: R::ZERO, z: R::ZERO };
    /// (0, 1, 0).
    pub const Y: Self = Vec3 { x: R::ZERO, y: R::ONE, z: R::ZERO };
    /// (0, 0, 1).
    pub const Z: Self = Vec3 { x: R::ZERO, y: R::ZERO, z: R::ONE };

    /// A vector from its components.
    #[inline(always)]
    #[must_use]
    pub const fn new(x: R, y: R, z: R) -> Self {
        Vec3 { x, y, z }
    }
    /// All three components set to `v`.
    #[inline(always)]
    #[must_use]
    pub const fn splat(v: R) -> Self {
        Vec3 { x: v, y: v, z: v }
    }
    /// From an `[x, y, z]` array.
    #[inline(always)]
    #[must_use]
    pub const fn from_array(a: [R; 3]) -> Self {
        Vec3 { x: a[0], y: a[1], z: a[2] }
    }
    /// As an `[x, y, z]` array.
    #[inline(always)]
    #[must_use]
    pub const fn to_array(self) -> [R; 3] {
        [self.x, self.y, self.z]
    }
    /// Dot product.
    #[inline(always)]
    #[must_use]
    pub fn dot(self, o: Self) -> R {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Cross product `self × o`.
    #[inline(always)]
    #[must_use]
    pub fn cross(self, o: Self) -> Self {
        Vec3 { x: self.y * o.z - self.z * o.y, y: self.z * o.x - self.x * o.z, z: self.x * o.y - self.y * o.x }
    }
    /// Component-wise product.
    #[inline(always)]
    #[must_use]
    pub fn mul_elem(self, o: Self) -> Self {
        Vec3 { x: self.x * o.x, y: self.y * o.y, z: self.z * o.z }
    }
    /// Squared length.
    #[inline(always)]
    #[must_use]
    pub fn length_squared(self) -> R {
        self.dot(self)
    }
    /// Length.
    #[inline]
    #[must_use]
    pub fn length(self) -> R {
        self.length_squared().sqrt()
    }
    /// The unit vector in the same direction, or `None` for a zero-length or non-finite vector.
    #[inline]
    #[must_use]
    pub fn try_normalize(self) -> Option<Self> {
        let l2 = self.length_squared();
        if l2 > R::ZERO && l2.is_finite() {
            if R::FIXED_POINT {
                let l = l2.sqrt();
                Some(Vec3::new(self.x / l, self.y / l, self.z / l))
            } else {
                Some(self * l2.inv_sqrt())
            }
        } else {
            None
        }
    }
    /// The unit vector in the same direction, or zero for a zero-length vector.
    #[inline]
    #[must_use]
    pub fn normalize_or_zero(self) -> Self {
        self.try_normalize().unwrap_or(Self::ZERO)
    }
    /// Linear interpolation: `self` at `t = 0`, `o` at `t = 1`.
    #[inline(always)]
    #[must_use]
    pub fn lerp(self, o: Self, t: R) -> Self {
        self + (o - self) * t
    }
    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() & self.y.is_finite() & self.z.is_finite()
    }
    /// Largest absolute component.
    #[inline]
    #[must_use]
    pub fn max_abs(self) -> R {
        self.x.abs().max(self.y.abs()).max(self.z.abs())
    }
    /// Component-wise minimum.
    #[inline]
    #[must_use]
    pub fn min(self, o: Self) -> Self {
        Vec3 { x: self.x.min(o.x), y: self.y.min(o.y), z: self.z.min(o.z) }
    }
    /// Component-wise maximum.
    #[inline]
    #[must_use]
    pub fn max(self, o: Self) -> Self {
        Vec3 { x: self.x.max(o.x), y: self.y.max(o.y), z: self.z.max(o.z) }
    }
    /// Extends to a [`Vec4`] with the given `w`.
    #[inline(always)]
    #[must_use]
    pub const fn extend(self, w: R) -> Vec4<R> {
        Vec4 { x: self.x, y: self.y, z: self.z, w }
    }
}

impl<R: Real> Add for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Vec3 { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}
impl<R: Real> Sub for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Vec3 { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}
impl<R: Real> Mul<R> for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: R) -> Self {
        Vec3 { x: self.x * s, y: self.y * s, z: self.z * s }
    }
}
impl<R: Real> Neg for Vec3<R> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Vec3 { x: -self.x, y: -self.y, z: -self.z }
    }
}
impl<R: Real> AddAssign for Vec3<R> {
    #[inline(always)]
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl<R: Real> SubAssign for Vec3<R> {
    #[inline(always)]
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}

impl<R: Real> Vec4<R> {
    /// (0, 0, 0, 0).
    pub const ZERO: Self = Vec4 { x: R::ZERO, y: R::ZERO, z: R::ZERO, w: R::ZERO };

    /// A vector from its components.
    #[inline(always)]
    #[must_use]
    pub const fn new(x: R, y: R, z: R, w: R) -> Self {
        Vec4 { x, y, z, w }
    }
    /// From an `[x, y, z, w]` array.
    #[inline(always)]
    #[must_use]
    pub const fn from_array(a: [R; 4]) -> Self {
        Vec4 { x: a[0], y: a[1], z: a[2], w: a[3] }
    }
    /// As an `[x, y, z, w]` array.
    #[inline(always)]
    #[must_use]
    pub const fn to_array(self) -> [R; 4] {
        [self.x, self.y, self.z, self.w]
    }
    /// The first three components.
    #[inline(always)]
    #[must_use]
    pub const fn truncate(self) -> Vec3<R> {
        Vec3 { x: self.x, y: self.y, z: self.z }
    }
    /// True when every component is finite.
    #[inline]
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() & self.y.is_finite() & self.z.is_finite() & self.w.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_error_is_below_1e6() {
        let mut worst = 0.0f64;
        let mut s = 0x1234_5678u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f64 / u32::MAX as f64) * 2.0 - 1.0
        };
        for i in 0..if cfg!(miri) { 1_000 } else { 100_000 } {
            let scale = [1.0e-3, 1.0, 1.0e3][i % 3];
            let v = Vec3::new((next() * scale) as f32, (next() * scale) as f32, (next() * scale) as f32);
            let Some(n) = v.try_normalize() else { continue };
            let (x, y, z) = (v.x as f64, v.y as f64, v.z as f64);
            let l = (x * x + y * y + z * z).sqrt();
            let e = ((n.x as f64 - x / l).powi(2) + (n.y as f64 - y / l).powi(2) + (n.z as f64 - z / l).powi(2)).sqrt();
            worst = worst.max(e);
        }
        assert!(worst <= 1.0e-6, "normalize error {worst:e}");
        assert_eq!(Vec3::<f32>::ZERO.try_normalize(), None);
        assert_eq!(Vec3::new(f32::NAN, 0.0, 0.0).try_normalize(), None);
    }

    #[test]
    fn cross_follows_right_hand_rule() {
        assert_eq!(Vec3::<f32>::X.cross(Vec3::Y), Vec3::Z);
        assert_eq!(Vec3::<f32>::Y.cross(Vec3::Z), Vec3::X);
    }
}
