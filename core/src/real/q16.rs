//! [`Q16`], the Q16.16 fixed-point scalar with saturating arithmetic, as a [`Real`], and its
//! lanes [`Q16x4`] (four scalars). Every operation is integer-only, so an FPU-less target runs
//! it without soft-float routines.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

use fixed::types::I16F16;

use super::{Lanes, Real};

/// A Q16.16 fixed-point number (range ±32768, step 2⁻¹⁶ ≈ 1.5e-5) with saturating arithmetic.
///
/// It wraps [`fixed::types::I16F16`]; `+`, `-` and `*` saturate at the range limits and `/` by
/// zero gives the limit of the dividend's sign, so no value can make the pipeline panic.
///
/// # Examples
///
/// ```
/// use sinew::{Real, Q16};
///
/// let third = Q16::ratio(1, 3); // constants from integers: no float on the way
/// assert!((third.to_f32() - 1.0 / 3.0).abs() < 1e-5);
/// assert_eq!(Q16::from_i32(30_000) + Q16::from_i32(30_000), Q16::MAX); // saturates
/// assert_eq!(Q16::ONE / Q16::ZERO, Q16::MAX); // no panic
/// ```
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
    type Lanes = Q16x4;

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

/// Four [`Q16`] lanes, computed one by one with [`Q16`]'s saturating arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Q16x4(pub [Q16; 4]);

impl Q16x4 {
    #[inline(always)]
    fn map(self, f: impl Fn(Q16) -> Q16) -> Self {
        Q16x4([f(self.0[0]), f(self.0[1]), f(self.0[2]), f(self.0[3])])
    }
    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(Q16, Q16) -> Q16) -> Self {
        Q16x4([f(self.0[0], o.0[0]), f(self.0[1], o.0[1]), f(self.0[2], o.0[2]), f(self.0[3], o.0[3])])
    }
}

impl Add for Q16x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.zip(o, |a, b| a + b)
    }
}

impl Sub for Q16x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.zip(o, |a, b| a - b)
    }
}

impl Mul for Q16x4 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self.zip(o, |a, b| a * b)
    }
}

impl Div for Q16x4 {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        self.zip(o, |a, b| a / b)
    }
}

impl Neg for Q16x4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
}

impl Lanes<Q16> for Q16x4 {
    #[inline(always)]
    fn splat(v: Q16) -> Self {
        Q16x4([v; 4])
    }
    #[inline(always)]
    fn load(a: &[Q16; 4]) -> Self {
        Q16x4(*a)
    }
    #[inline(always)]
    fn to_array(self) -> [Q16; 4] {
        self.0
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        self.zip(other, Real::max)
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        self.zip(other, Real::min)
    }
    #[inline(always)]
    fn recip(self) -> Self {
        self.map(Real::recip)
    }
    #[inline(always)]
    fn inv_sqrt_positive(self) -> Self {
        self.map(Real::inv_sqrt_positive)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(Real::sqrt)
    }
    #[inline(always)]
    fn negate_where_negative(self, sign: Self) -> Self {
        self.zip(sign, |a, s| if s < Q16::ZERO { -a } else { a })
    }
    #[inline(always)]
    fn select_positive_finite(self, a: Self, b: Self) -> Self {
        let p = |l: usize| if self.0[l] > Q16::ZERO { a.0[l] } else { b.0[l] };
        Q16x4([p(0), p(1), p(2), p(3)])
    }
    #[inline(always)]
    fn any_positive(self) -> bool {
        self.0.iter().any(|&v| v > Q16::ZERO)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(Real::abs)
    }
    #[inline(always)]
    fn sqrt_ieee(self) -> Self {
        self.map(Real::sqrt)
    }
    #[inline(always)]
    fn mask_ge(self, other: Self) -> u32 {
        (0..4).fold(0, |m, l| m | (u32::from(self.0[l] >= other.0[l]) << l))
    }
    #[inline(always)]
    fn mask_lt(self, other: Self) -> u32 {
        (0..4).fold(0, |m, l| m | (u32::from(self.0[l] < other.0[l]) << l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inv_sqrt_positive_matches_inv_sqrt() {
        let q = Q16::from_i32(9);
        assert_eq!(q.inv_sqrt_positive(), Real::inv_sqrt(q));
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

    #[test]
    fn q16_lanes_match_the_scalar_operations() {
        let vals = [1.0f32, 0.5, -3.25, 100.0, 0.0, 1.0 / 65536.0, -32768.0, 32767.0];
        for i in 0..vals.len() {
            for j in 0..vals.len() {
                let a: [Q16; 4] = core::array::from_fn(|l| Q16::from_f32(vals[(i + l) % vals.len()]));
                let b: [Q16; 4] = core::array::from_fn(|l| Q16::from_f32(vals[(j + 3 * l) % vals.len()]));
                let (x, y) = (Q16x4::load(&a), Q16x4::load(&b));
                for l in 0..4 {
                    assert_eq!((x + y).to_array()[l], a[l] + b[l]);
                    assert_eq!((x - y).to_array()[l], a[l] - b[l]);
                    assert_eq!((x * y).to_array()[l], a[l] * b[l]);
                    if b[l] != Q16::ZERO {
                        assert_eq!((x / y).to_array()[l], a[l] / b[l]);
                    }
                    assert_eq!(x.max(y).to_array()[l], Real::max(a[l], b[l]));
                    assert_eq!(x.sqrt().to_array()[l], Real::sqrt(a[l]));
                    let want = if b[l] < Q16::ZERO { -a[l] } else { a[l] };
                    assert_eq!(x.negate_where_negative(y).to_array()[l], want);
                    let want = if a[l] > Q16::ZERO { a[l] } else { b[l] };
                    assert_eq!(x.select_positive_finite(x, y).to_array()[l], want);
                }
                assert_eq!(x.any_positive(), a.iter().any(|&p| p > Q16::ZERO));
                let ge = (0..4).fold(0, |m, l| m | (u32::from(a[l] >= b[l]) << l));
                let lt = (0..4).fold(0, |m, l| m | (u32::from(a[l] < b[l]) << l));
                assert_eq!((x.mask_ge(y), x.mask_lt(y)), (ge, lt));
                assert_eq!(x.abs().to_array()[0], Real::abs(a[0]));
                let t = Q16x4::transpose([x, y, -x, x * y]);
                let rows = [a, b, a.map(|p| -p), core::array::from_fn(|l| a[l] * b[l])];
                for (c, col) in t.iter().enumerate() {
                    assert_eq!(col.to_array(), rows.map(|r| r[c]), "column {c}");
                }
            }
        }
    }
}
