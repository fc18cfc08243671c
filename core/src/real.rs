//! The scalar type of a pipeline: [`Real`], implemented for `f32` and for the Q16.16 fixed-point
//! [`Q16`].
//!
//! Every math type and job is generic over `Real`, so an FPU-less microcontroller runs the same
//! code in integers. Transcendental functions are written once, generically, in
//! [`crate::math::ops`]; a type supplies only arithmetic, square roots and a few constants.
//!
//! Constants inside generic code come from [`Real::ratio`] (a quotient of two integers, folded at
//! compile time once inlined), never from a float literal, so the Q16.16 path never touches a
//! soft-float routine.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

use fixed::types::I16F16;

/// A scalar the pipeline computes in: `f32` or [`Q16`].
///
/// Arithmetic on `Q16` saturates instead of wrapping or panicking, so hostile values degrade
/// into clamped results, never into undefined behaviour or a crash.
pub trait Real:
    Copy
    + Clone
    + fmt::Debug
    + Default
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + Send
    + Sync
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// 0.5.
    const HALF: Self;
    /// 2.
    const TWO: Self;
    /// π.
    const PI: Self;
    /// π / 2.
    const FRAC_PI_2: Self;
    /// π / 4.
    const FRAC_PI_4: Self;
    /// 2 / π.
    const FRAC_2_PI: Self;
    /// π/2 rounded to a value whose small multiples are exact (for argument reduction).
    const FRAC_PI_2_HI: Self;
    /// π/2 − `FRAC_PI_2_HI` (0 for `Q16`, whose products are exact anyway).
    const FRAC_PI_2_LO: Self;
    /// The smallest positive step of the type's precision near 1 (`f32::EPSILON`, or 2⁻¹⁶).
    const EPSILON: Self;
    /// The largest finite value.
    const MAX: Self;
    /// `−MAX`: for `f32` the lowest finite value, for [`Q16`] one step above its lowest.
    const MIN: Self;
    /// True for fixed-point types, whose `1/√x` loses relative precision for large `x`: code
    /// that normalizes divides by `√x` instead of multiplying by `1/√x`.
    const FIXED_POINT: bool;
    /// Four lanes of the type, as one SIMD value where the target has one (see [`crate::lanes`]).
    type Lanes: crate::lanes::Lanes<Self>;

    /// Converts an integer (saturating where it does not fit).
    fn from_i32(v: i32) -> Self;
    /// `num / den`, computed in the type itself. With constant arguments it folds at compile
    /// time; this is how generic code writes literals. `den` must not be 0.
    fn ratio(num: i32, den: i32) -> Self;
    /// A fixed-point value `bits / 2^frac_bits` (quantized key data), converted without floats
    /// on the Q16.16 path. `frac_bits` must be at most 31.
    fn from_fixed_bits(bits: i32, frac_bits: u32) -> Self;
    /// Converts from `f32` (saturating for `Q16`; NaN becomes 0). On a target without an FPU
    /// this is a soft-float call for `Q16`: use it at load time, not per frame.
    fn from_f32(v: f32) -> Self;
    /// Converts to `f32`.
    fn to_f32(self) -> f32;

    /// Square root; 0 for inputs ≤ 0. Relative error of a few ulp for `f32`.
    fn sqrt(self) -> Self;
    /// 1 / √x; the type's largest value for inputs ≤ 0.
    fn inv_sqrt(self) -> Self;
    /// 1 / √x for a positive, finite `x`, without the checks of [`Real::inv_sqrt`] (so lane
    /// loops vectorize). Other inputs give an unspecified value, never a panic.
    #[inline(always)]
    fn inv_sqrt_positive(self) -> Self {
        self.inv_sqrt()
    }
    /// Absolute value.
    fn abs(self) -> Self;
    /// The smaller of two values.
    fn min(self, other: Self) -> Self;
    /// The larger of two values.
    fn max(self, other: Self) -> Self;
    /// True for every value but NaN and ±∞ (always true for `Q16`).
    fn is_finite(self) -> bool;
    /// Rounds towards zero to an integer (saturating).
    fn trunc_i32(self) -> i32;

    /// `self` clamped into `[lo, hi]`.
    #[inline(always)]
    fn clamp(self, lo: Self, hi: Self) -> Self {
        self.max(lo).min(hi)
    }
    /// 1 / `self`.
    #[inline(always)]
    fn recip(self) -> Self {
        Self::ONE / self
    }
    /// `self * self`.
    #[inline(always)]
    fn sq(self) -> Self {
        self * self
    }
}

// -------------------------------------------------------------------------------------------------
// f32
// -------------------------------------------------------------------------------------------------

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const HALF: Self = 0.5;
    const TWO: Self = 2.0;
    const PI: Self = core::f32::consts::PI;
    const FRAC_PI_2: Self = core::f32::consts::FRAC_PI_2;
    const FRAC_PI_4: Self = core::f32::consts::FRAC_PI_4;
    const FRAC_2_PI: Self = core::f32::consts::FRAC_2_PI;
    // 0x3FC9_0000: the low 12 mantissa bits are zero, so k · HI is exact for |k| < 4096.
    const FRAC_PI_2_HI: Self = 1.570_312_5;
    const FRAC_PI_2_LO: Self = 4.838_268e-4;
    const EPSILON: Self = f32::EPSILON;
    const MAX: Self = f32::MAX;
    const MIN: Self = f32::MIN;
    const FIXED_POINT: bool = false;
    type Lanes = crate::lanes::F32x4;

    #[inline(always)]
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    #[inline(always)]
    fn ratio(num: i32, den: i32) -> Self {
        num as f32 / den as f32
    }
    #[inline(always)]
    fn from_fixed_bits(bits: i32, frac_bits: u32) -> Self {
        bits as f32 * f32::from_bits((127 - frac_bits.min(31)) << 23)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn sqrt(self) -> Self {
        if self > 0.0 {
            // √x = x · (1/√x); one more Newton step on the product removes the last bias.
            let s = self * self.inv_sqrt();
            0.5 * (s + self / s)
        } else {
            0.0
        }
    }
    #[inline]
    fn inv_sqrt(self) -> Self {
        if self > 0.0 {
            if self == f32::INFINITY {
                return 0.0;
            }
            // micromath's bit-trick estimate (about 5 % off), refined by three Newton steps:
            // 5e-2 → 3.8e-3 → 2.1e-5 → below f32 rounding.
            let mut y = micromath::F32(self).invsqrt().0;
            let h = 0.5 * self;
            y *= 1.5 - h * y * y;
            y *= 1.5 - h * y * y;
            y *= 1.5 - h * y * y;
            y
        } else {
            f32::MAX
        }
    }
    #[inline(always)]
    fn inv_sqrt_positive(self) -> Self {
        // The same seed and Newton steps as `inv_sqrt`, without branches.
        let mut y = f32::from_bits(0x5f37_5a86_u32.wrapping_sub(self.to_bits() >> 1));
        let h = 0.5 * self;
        y *= 1.5 - h * y * y;
        y *= 1.5 - h * y * y;
        y *= 1.5 - h * y * y;
        y
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        f32::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        f32::max(self, other)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn trunc_i32(self) -> i32 {
        self as i32
    }
}

// -------------------------------------------------------------------------------------------------
// Q16.16
// -------------------------------------------------------------------------------------------------

/// A Q16.16 fixed-point number (range ±32768, step 2⁻¹⁶ ≈ 1.5e-5) with saturating arithmetic.
///
/// It wraps [`fixed::types::I16F16`]; `+`, `-` and `*` saturate at the range limits and `/` by
/// zero gives the limit of the dividend's sign, so no value can make the pipeline panic.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Q16(pub I16F16);

impl Q16 {
    /// Builds a value from its raw bits (`bits / 65536`).
    #[inline(always)]
    pub const fn from_bits(bits: i32) -> Self {
        Q16(I16F16::from_bits(bits))
    }
    /// The raw bits (`value × 65536`).
    #[inline(always)]
    pub const fn to_bits(self) -> i32 {
        self.0.to_bits()
    }
}

impl fmt::Debug for Q16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Display for Q16 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl Add for Q16 {
    type Output = Q16;
    #[inline(always)]
    fn add(self, rhs: Q16) -> Q16 {
        Q16(self.0.saturating_add(rhs.0))
    }
}
impl Sub for Q16 {
    type Output = Q16;
    #[inline(always)]
    fn sub(self, rhs: Q16) -> Q16 {
        Q16(self.0.saturating_sub(rhs.0))
    }
}
impl Mul for Q16 {
    type Output = Q16;
    #[inline(always)]
    fn mul(self, rhs: Q16) -> Q16 {
        // Rounded to nearest: (a·b + 2^15) >> 16, saturated.
        let p = (self.to_bits() as i64 * rhs.to_bits() as i64 + (1 << 15)) >> 16;
        Q16::from_bits(sat_i32(p))
    }
}
impl Div for Q16 {
    type Output = Q16;
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline]
    fn div(self, rhs: Q16) -> Q16 {
        Q16::from_bits(div_round((self.to_bits() as i64) << 16, rhs.to_bits() as i64))
    }
}

/// `n / d` rounded to nearest (ties away from zero), saturated to i32; a zero divisor gives the
/// limit of the dividend's sign.
#[inline]
fn div_round(n: i64, d: i64) -> i32 {
    if d == 0 {
        return if n >= 0 { i32::MAX } else { -i32::MAX };
    }
    let mut q = n / d;
    let r = n % d;
    if 2 * r.unsigned_abs() >= d.unsigned_abs() {
        q += if (n < 0) == (d < 0) { 1 } else { -1 };
    }
    sat_i32(q)
}

impl Neg for Q16 {
    type Output = Q16;
    #[inline(always)]
    fn neg(self) -> Q16 {
        Q16(self.0.saturating_neg())
    }
}
impl AddAssign for Q16 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Q16) {
        *self = *self + rhs;
    }
}
impl SubAssign for Q16 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Q16) {
        *self = *self - rhs;
    }
}
impl MulAssign for Q16 {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Q16) {
        *self = *self * rhs;
    }
}

#[inline(always)]
fn sat_i32(v: i64) -> i32 {
    if v > i32::MAX as i64 {
        i32::MAX
    } else if v < i32::MIN as i64 {
        i32::MIN
    } else {
        v as i32
    }
}

/// Integer square root of a u64 (floor), bit by bit: no division, no floats.
#[inline]
fn isqrt_u64(v: u64) -> u64 {
    let mut rem = v;
    let mut root = 0u64;
    let mut bit = 1u64 << 62;
    while bit > rem {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}

/// Integer square root rounded to nearest.
#[inline]
fn isqrt_round(v: u64) -> u64 {
    let r = isqrt_u64(v);
    // (r + ½)² = r² + r + ¼: round up when the remainder exceeds r.
    if v - r * r > r {
        r + 1
    } else {
        r
    }
}

impl Real for Q16 {
    const ZERO: Self = Q16::from_bits(0);
    const ONE: Self = Q16::from_bits(1 << 16);
    const HALF: Self = Q16::from_bits(1 << 15);
    const TWO: Self = Q16::from_bits(2 << 16);
    // Rounded values of π·2^16 and its fractions.
    const PI: Self = Q16::from_bits(205_887);
    const FRAC_PI_2: Self = Q16::from_bits(102_944);
    const FRAC_PI_4: Self = Q16::from_bits(51_472);
    const FRAC_2_PI: Self = Q16::from_bits(41_722);
    const FRAC_PI_2_HI: Self = Q16::from_bits(102_944);
    const FRAC_PI_2_LO: Self = Q16::from_bits(0);
    const EPSILON: Self = Q16::from_bits(1);
    const MAX: Self = Q16::from_bits(i32::MAX);
    const MIN: Self = Q16::from_bits(-i32::MAX);
    const FIXED_POINT: bool = true;
    type Lanes = crate::lanes::Q16x4;

    #[inline(always)]
    fn from_i32(v: i32) -> Self {
        Q16::from_bits(sat_i32((v as i64) << 16))
    }
    #[inline(always)]
    fn ratio(num: i32, den: i32) -> Self {
        Q16::from_bits(div_round((num as i64) << 16, den as i64))
    }
    #[inline(always)]
    fn from_fixed_bits(bits: i32, frac_bits: u32) -> Self {
        let f = frac_bits.min(31);
        if f >= 16 {
            let shift = f - 16;
            // Round to nearest.
            let r = if shift == 0 { bits as i64 } else { (bits as i64 + (1i64 << (shift - 1))) >> shift };
            Q16::from_bits(sat_i32(r))
        } else {
            Q16::from_bits(sat_i32((bits as i64) << (16 - f)))
        }
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        // Decoded from the IEEE-754 bits with integer operations only, so an FPU-less target
        // converts stored f32 data without soft-float routines. Rounds to nearest.
        let b = v.to_bits();
        let negative = b >> 31 != 0;
        let exp = ((b >> 23) & 0xff) as i32;
        let man = (b & 0x7f_ffff) as i64;
        let magnitude: i64 = if exp == 0xff {
            if man != 0 {
                return Q16::ZERO; // NaN
            }
            i64::MAX
        } else if exp == 0 {
            0 // zero and subnormals (below 2^-126) round to 0
        } else {
            // value = (2^23 + man) · 2^(exp − 150); bits = value · 2^16 = m · 2^(exp − 134).
            let m = man | 0x80_0000;
            let shift = exp - 134;
            if shift >= 0 {
                if shift > 16 {
                    i64::MAX
                } else {
                    m << shift
                }
            } else if shift < -40 {
                0
            } else {
                let s = -shift;
                (m + (1 << (s - 1))) >> s
            }
        };
        let signed = if negative { -magnitude.min(i32::MAX as i64 + 1) } else { magnitude.min(i32::MAX as i64) };
        Q16::from_bits(sat_i32(signed))
    }
    #[inline]
    fn to_f32(self) -> f32 {
        // Integer-only conversion (see `from_f32`); exact up to 24 significant bits, then
        // rounded to nearest.
        let b = self.to_bits();
        if b == 0 {
            return 0.0;
        }
        let sign = if b < 0 { 1u32 << 31 } else { 0 };
        let mut m = b.unsigned_abs();
        let lz = m.leading_zeros();
        // value = m · 2^-16, with the leading one at bit 31 − lz.
        let mut exp = 127 + (31 - lz as i32) - 16;
        let top = 31 - lz; // bit index of the leading one
        let mut mant = if top > 23 {
            let s = top - 23;
            let half = 1u32 << (s - 1);
            let rounded = (m as u64 + half as u64) >> s;
            m = rounded as u32;
            if m >> 24 != 0 {
                m >>= 1;
                exp += 1;
            }
            m
        } else {
            m << (23 - top)
        };
        mant &= 0x7f_ffff;
        f32::from_bits(sign | ((exp as u32) << 23) | mant)
    }
    #[inline]
    fn sqrt(self) -> Self {
        if self.to_bits() <= 0 {
            return Q16::ZERO;
        }
        // √(b / 2^16) · 2^16 = √(b · 2^16).
        Q16::from_bits(isqrt_round((self.to_bits() as u64) << 16).min(i32::MAX as u64) as i32)
    }
    #[inline]
    fn inv_sqrt(self) -> Self {
        if self.to_bits() <= 0 {
            return Q16::MAX;
        }
        // 2^16 / √(b / 2^16) = √(2^48 / b), rounded down.
        let v = isqrt_round((1u64 << 48) / self.to_bits() as u64);
        Q16::from_bits(v.min(i32::MAX as u64) as i32)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Q16(self.0.saturating_abs())
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Ord::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Ord::max(self, other)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        true
    }
    #[inline(always)]
    fn trunc_i32(self) -> i32 {
        let b = self.to_bits();
        if b >= 0 {
            b >> 16
        } else {
            -((-(b as i64)) >> 16) as i32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_sqrt_and_inv_sqrt_are_accurate() {
        let mut worst_s = 0.0f64;
        let mut worst_i = 0.0f64;
        let mut x = 1.0e-6f32;
        while x < 1.0e6 {
            let s = Real::sqrt(x) as f64;
            let i = Real::inv_sqrt(x) as f64;
            let e = (x as f64).sqrt();
            worst_s = worst_s.max((s - e).abs() / e);
            worst_i = worst_i.max((i - 1.0 / e).abs() * e);
            x *= 1.0137;
        }
        assert!(worst_s < 2.5e-7, "sqrt relative error {worst_s:e}");
        assert!(worst_i < 4.0e-7, "inv_sqrt relative error {worst_i:e}");
        assert_eq!(Real::sqrt(0.0f32), 0.0);
        assert_eq!(Real::sqrt(-1.0f32), 0.0);
        assert_eq!(Real::sqrt(4.0f32), 2.0);
        assert_eq!(Real::inv_sqrt(0.0f32), f32::MAX);
    }

    #[test]
    fn inv_sqrt_positive_matches_inv_sqrt() {
        let mut x = 1.0e-6f32;
        while x < 1.0e6 {
            assert_eq!(x.inv_sqrt_positive(), Real::inv_sqrt(x), "x = {x}");
            x *= 1.37;
        }
        let q = Q16::from_i32(9);
        assert_eq!(q.inv_sqrt_positive(), Real::inv_sqrt(q));
    }

    #[test]
    fn f32_from_fixed_bits() {
        assert_eq!(f32::from_fixed_bits(3 << 15, 16), 1.5);
        assert_eq!(f32::from_fixed_bits(-1, 0), -1.0);
        assert_eq!(f32::from_fixed_bits(1, 31), 1.0 / 2147483648.0);
    }

    #[test]
    fn q16_arithmetic_saturates_and_rounds() {
        let a = Q16::from_i32(3);
        let b = Q16::ratio(1, 2);
        assert_eq!((a * b).to_f32(), 1.5);
        assert_eq!((a / b).to_f32(), 6.0);
        assert_eq!(Q16::MAX + Q16::ONE, Q16::MAX);
        assert_eq!((-Q16::MAX) - Q16::TWO, Q16::from_bits(i32::MIN));
        assert_eq!(Q16::from_i32(30000) * Q16::from_i32(30000), Q16::MAX);
        assert_eq!(Q16::ONE / Q16::ZERO, Q16::MAX);
        assert!((Q16::ONE.neg() / Q16::ZERO).to_bits() < 0);
        assert_eq!(Q16::ratio(1, 3).to_bits(), 21845);
        assert_eq!(Q16::ratio(-1, 3).to_bits(), -21845);
        assert_eq!(Q16::ratio(2, 3).to_bits(), 43691);
        assert_eq!(Q16::from_fixed_bits(3 << 14, 15).to_f32(), 1.5);
        assert_eq!(Q16::from_fixed_bits(3, 1).to_f32(), 1.5);
        assert_eq!(Q16::from_f32(f32::NAN), Q16::ZERO);
        assert_eq!(Q16::from_f32(f32::INFINITY), Q16::MAX);
        assert_eq!(Q16::from_f32(f32::NEG_INFINITY).to_bits(), i32::MIN);
        assert_eq!(Q16::from_f32(1.0e-30), Q16::ZERO);
        assert_eq!(Q16::from_f32(1.0e9), Q16::MAX);
        assert_eq!(Q16::from_f32(-2.75).trunc_i32(), -2);
        assert_eq!(Q16::from_f32(2.75).trunc_i32(), 2);
    }

    #[test]
    fn q16_sqrt_is_exact_to_one_step() {
        for bits in (1..i32::MAX).step_by(9_999_991) {
            let q = Q16::from_bits(bits);
            let e = (q.to_bits() as f64 / 65536.0).sqrt();
            assert!((Real::sqrt(q).to_f32() as f64 - e).abs() <= 8.0e-6, "sqrt({q})");
            if q.to_f32() > 0.01 {
                let ie = 1.0 / e;
                assert!((Real::inv_sqrt(q).to_f32() as f64 - ie).abs() <= 1.6e-5, "inv_sqrt({q})");
            }
        }
        assert_eq!(Real::sqrt(Q16::from_i32(4)), Q16::from_i32(2));
        assert_eq!(Real::inv_sqrt(Q16::from_i32(4)), Q16::HALF);
        assert_eq!(Real::sqrt(-Q16::ONE), Q16::ZERO);
    }

    #[test]
    fn q16_f32_conversions_match_the_fixed_crate() {
        let mut x = 1.0e-7f32;
        while x < 40_000.0 {
            for v in [x, -x] {
                let ours = Q16::from_f32(v);
                let theirs = I16F16::saturating_from_num(v);
                assert!((ours.to_bits() as i64 - theirs.to_bits() as i64).abs() <= 1, "from_f32({v})");
                assert_eq!(ours.to_f32(), ours.0.to_num::<f32>(), "to_f32({v})");
            }
            x *= if cfg!(miri) { 1.03 } else { 1.000_37 };
        }
        for bits in [1, -1, i32::MAX, i32::MIN, 0x1_0000, -0x1_0000, 0x7fff_ffc0, 12345678] {
            let q = Q16::from_bits(bits);
            assert_eq!(q.to_f32(), q.0.to_num::<f32>(), "to_f32 of bits {bits}");
        }
    }

    #[test]
    fn q16_constants() {
        assert!((Q16::PI.to_f32() - core::f32::consts::PI).abs() < 1.0e-5);
        assert!((Q16::FRAC_PI_2.to_f32() - core::f32::consts::FRAC_PI_2).abs() < 1.0e-5);
        assert!((Q16::FRAC_PI_4.to_f32() - core::f32::consts::FRAC_PI_4).abs() < 1.0e-5);
    }
}
