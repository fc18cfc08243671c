//! `f32` as a [`Real`], and its lanes [`F32x4`] (`wide::f32x4`: one SIMD register where the
//! target has one, four scalars elsewhere), with the integer IEEE square root of the lanes of
//! targets without a SIMD one.

use core::ops::{Add, Div, Mul, Neg, Sub};

use wide::{f32x4, f32x8, i32x4, CmpGe, CmpGt, CmpLe, CmpLt};

use super::{Lanes, Real};
use crate::platform::{AVX2, FMA, SIMD_LANES, SSE_LANES};

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
    type Lanes = F32x4;

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
    #[inline(always)]
    fn sqrt_ieee(self) -> Self {
        if SIMD_LANES {
            // sqrtps, f32x4.sqrt or vsqrtq_f32 on one lane: correctly rounded.
            f32x4::splat(self).sqrt().to_array()[0]
        } else {
            sqrt_ieee_f32(self)
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

/// Two four-lane vectors side by side as eight lanes (`x[0]` in lanes 0 to 3).
#[inline(always)]
fn join8(x: [F32x4; 2]) -> f32x8 {
    let ([a0, a1, a2, a3], [b0, b1, b2, b3]) = (x[0].0.to_array(), x[1].0.to_array());
    f32x8::new([a0, a1, a2, a3, b0, b1, b2, b3])
}

/// Eight lanes as two four-lane vectors, lanes 0 to 3 first.
#[inline(always)]
fn split8(x: f32x8) -> [F32x4; 2] {
    let [a0, a1, a2, a3, b0, b1, b2, b3] = x.to_array();
    [F32x4(f32x4::from([a0, a1, a2, a3])), F32x4(f32x4::from([b0, b1, b2, b3]))]
}

/// `a + x · m` lane by lane, rounded once: `f32::mul_add` on each lane, which the x86-64-v3
/// kernels (compiled with `fma`) turn into one `vfmadd` on the register, the instruction an
/// x86-64-v3 build's `mul_add` is.
#[cfg(sinew_dispatch)]
#[inline(always)]
fn fused(x: f32x4, m: f32x4, a: f32x4) -> f32x4 {
    let (x, m, a) = (x.to_array(), m.to_array(), a.to_array());
    f32x4::from([
        x[0].mul_add(m[0], a[0]),
        x[1].mul_add(m[1], a[1]),
        x[2].mul_add(m[2], a[2]),
        x[3].mul_add(m[3], a[3]),
    ])
}

/// [`fused`], its lanes kept as one vector (`platform::dispatch::whole`): the same bits.
#[cfg(sinew_dispatch)]
#[inline(always)]
fn fused_whole(x: f32x4, m: f32x4, a: f32x4) -> f32x4 {
    bytemuck::cast(crate::platform::dispatch::whole(bytemuck::cast(fused(x, m, a))))
}

/// Four `f32` lanes; one SIMD register where the target has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F32x4(pub f32x4);

impl Add for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F32x4(self.0 + o.0)
    }
}

impl Sub for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F32x4(self.0 - o.0)
    }
}

impl Mul for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F32x4(self.0 * o.0)
    }
}

impl Div for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F32x4(self.0 / o.0)
    }
}

impl Neg for F32x4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        // Flips the sign bit, as scalar negation does (`0 − x` would turn −0 into +0).
        F32x4(self.0 ^ f32x4::splat(-0.0))
    }
}

impl Lanes<f32> for F32x4 {
    #[inline(always)]
    fn splat(v: f32) -> Self {
        F32x4(f32x4::splat(v))
    }
    #[inline(always)]
    fn load(a: &[f32; 4]) -> Self {
        F32x4(f32x4::from(*a))
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        self.0.to_array()
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        F32x4(self.0.max(other.0))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        F32x4(self.0.min(other.0))
    }
    #[inline(always)]
    fn mul_add(self, m: Self, a: Self) -> Self {
        if FMA {
            // vfmadd: one rounding.
            F32x4(self.0.mul_add(m.0, a.0))
        } else {
            a + self * m
        }
    }
    #[inline(always)]
    fn mul_pair(x: [Self; 2], m: f32) -> [Self; 2] {
        if AVX2 {
            // One vmulps on a ymm register.
            return split8(join8(x) * f32x8::splat(m));
        }
        let m = F32x4::splat(m);
        [x[0] * m, x[1] * m]
    }
    #[inline(always)]
    fn mul_add_pair(x: [Self; 2], m: f32, a: [Self; 2]) -> [Self; 2] {
        if AVX2 {
            // One vfmadd on a ymm register: the lanes of the two four-lane ones.
            return split8(join8(x).mul_add(f32x8::splat(m), join8(a)));
        }
        let m = F32x4::splat(m);
        [x[0].mul_add(m, a[0]), x[1].mul_add(m, a[1])]
    }
    #[inline(always)]
    fn mul_pairs(x: [Self; 2], m: [Self; 2]) -> [Self; 2] {
        if AVX2 {
            // One vmulps on a ymm register.
            return split8(join8(x) * join8(m));
        }
        [x[0] * m[0], x[1] * m[1]]
    }
    #[inline(always)]
    fn mul_add_pairs(x: [Self; 2], m: [Self; 2], a: [Self; 2]) -> [Self; 2] {
        if AVX2 {
            // One vfmadd on a ymm register: the lanes of the two four-lane ones.
            return split8(join8(x).mul_add(join8(m), join8(a)));
        }
        [x[0].mul_add(m[0], a[0]), x[1].mul_add(m[1], a[1])]
    }
    #[inline(always)]
    fn mul_add_on<const V3: bool>(self, m: Self, a: Self) -> Self {
        #[cfg(sinew_dispatch)]
        if V3 {
            return F32x4(fused(self.0, m.0, a.0));
        }
        self.mul_add(m, a)
    }
    #[inline(always)]
    fn mul_add_whole_on<const V3: bool>(self, m: Self, a: Self) -> Self {
        #[cfg(sinew_dispatch)]
        if V3 {
            return F32x4(fused_whole(self.0, m.0, a.0));
        }
        self.mul_add(m, a)
    }
    #[inline(always)]
    fn mul_pair_on<const V3: bool>(x: [Self; 2], m: f32) -> [Self; 2] {
        #[cfg(sinew_dispatch)]
        if let Some(p) = crate::platform::dispatch::pair::<V3>(x.map(|v| bytemuck::cast(v.0)), m, None) {
            return p.map(|v| F32x4(bytemuck::cast(v)));
        }
        Self::mul_pair(x, m)
    }
    #[inline(always)]
    fn mul_mat4_wide_on<const V3: bool>(a: &[[f32; 4]; 4], b: &[[f32; 4]; 4]) -> Option<[[f32; 4]; 4]> {
        #[cfg(sinew_dispatch)]
        return crate::platform::dispatch::mul_mat4::<V3>(a, b);
        #[cfg(not(sinew_dispatch))]
        {
            let _ = (a, b);
            None
        }
    }
    #[inline(always)]
    fn mul_add_pair_on<const V3: bool>(x: [Self; 2], m: f32, a: [Self; 2]) -> [Self; 2] {
        #[cfg(sinew_dispatch)]
        if let Some(s) = crate::platform::dispatch::pair::<V3>(
            x.map(|v| bytemuck::cast(v.0)),
            m,
            Some(a.map(|v| bytemuck::cast(v.0))),
        ) {
            return s.map(|v| F32x4(bytemuck::cast(v)));
        }
        Self::mul_add_pair(x, m, a)
    }
    #[inline(always)]
    fn mul_add_pairs_on<const V3: bool>(x: [Self; 2], m: [Self; 2], a: [Self; 2]) -> [Self; 2] {
        #[cfg(sinew_dispatch)]
        if V3 {
            return [F32x4(fused(x[0].0, m[0].0, a[0].0)), F32x4(fused(x[1].0, m[1].0, a[1].0))];
        }
        Self::mul_add_pairs(x, m, a)
    }
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        // `wide`: the SSE unpack and move shuffles where the target has them, lane copies
        // elsewhere.
        let [a, b, c, d] = rows;
        f32x4::transpose([a.0, b.0, c.0, d.0]).map(F32x4)
    }
    #[inline(always)]
    fn recip(self) -> Self {
        F32x4(f32x4::ONE / self.0)
    }
    #[inline(always)]
    fn inv_sqrt_positive(self) -> Self {
        // The scalar kernel of `f32::inv_sqrt_positive`, lane by lane: the bit-level seed, then
        // three Newton steps, with the same operation order (so the same bits).
        let bits: i32x4 = bytemuck::cast(self.0);
        let mut y: f32x4 = bytemuck::cast(i32x4::splat(0x5f37_5a86) - (bits >> 1));
        let h = f32x4::splat(0.5) * self.0;
        let c = f32x4::splat(1.5);
        y *= c - h * y * y;
        y *= c - h * y * y;
        y *= c - h * y * y;
        F32x4(y)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        let a = self.0.to_array();
        F32x4(f32x4::from([a[0].sqrt_real(), a[1].sqrt_real(), a[2].sqrt_real(), a[3].sqrt_real()]))
    }
    #[inline(always)]
    fn negate_where_negative(self, sign: Self) -> Self {
        F32x4(sign.0.cmp_lt(f32x4::ZERO).blend((-self).0, self.0))
    }
    #[inline(always)]
    fn select_positive_finite(self, a: Self, b: Self) -> Self {
        let good = self.0.cmp_gt(f32x4::ZERO) & self.0.cmp_le(f32x4::splat(f32::MAX));
        F32x4(good.blend(a.0, b.0))
    }
    #[inline(always)]
    fn any_positive(self) -> bool {
        self.0.cmp_gt(f32x4::ZERO).any()
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F32x4(self.0.abs())
    }
    #[inline(always)]
    fn sqrt_ieee(self) -> Self {
        if SIMD_LANES {
            // sqrtps, f32x4.sqrt or vsqrtq_f32: correctly rounded.
            F32x4(self.0.sqrt())
        } else {
            let a = self.0.to_array();
            F32x4(f32x4::from([sqrt_ieee_f32(a[0]), sqrt_ieee_f32(a[1]), sqrt_ieee_f32(a[2]), sqrt_ieee_f32(a[3])]))
        }
    }
    #[inline(always)]
    fn clamp01(self) -> Self {
        if SSE_LANES {
            // `maxps(x, 0)` returns its second operand when the first is NaN: no NaN fix-up needed.
            F32x4(self.0.fast_max(f32x4::ZERO).fast_min(f32x4::ONE))
        } else {
            self.max(Self::splat(0.0)).min(Self::splat(1.0))
        }
    }
    #[inline(always)]
    fn mask_ge(self, other: Self) -> u32 {
        self.0.cmp_ge(other.0).move_mask() as u32
    }
    #[inline(always)]
    fn mask_lt(self, other: Self) -> u32 {
        self.0.cmp_lt(other.0).move_mask() as u32
    }
}

/// `√x` rounded to nearest as IEEE 754 requires, with integers only (the lanes of targets
/// without a SIMD square root): the same bits as `sqrtps`, `vsqrtq_f32` or `f32x4.sqrt`.
fn sqrt_ieee_f32(x: f32) -> f32 {
    let b = x.to_bits();
    if b & 0x7fff_ffff == 0 || (0x7f80_0000..0x8000_0000).contains(&b) {
        return x; // ±0, +∞, NaN
    }
    if b >> 31 != 0 {
        return f32::NAN; // negative (−∞ included)
    }
    // x = m · 2^ex with an integer m in [2^23, 2^24).
    let (mut m, mut ex) = (b & 0x7f_ffff, ((b >> 23) & 0xff) as i32);
    if ex == 0 {
        let shift = m.leading_zeros() - 8;
        m <<= shift;
        ex = 1 - shift as i32;
    } else {
        m |= 0x80_0000;
    }
    ex -= 150;
    // n = m · 2^sh in [2^46, 2^48) with ex − sh even: √n is a 24-bit integer part.
    let sh = if (ex - 23) & 1 == 0 { 23 } else { 24 };
    let n = u64::from(m) << sh;
    // Bit by bit: s = ⌊√n⌋, rem = n − s².
    let (mut rem, mut s, mut bit) = (n, 0u64, 1u64 << 46);
    while bit != 0 {
        if rem >= s + bit {
            rem -= s + bit;
            s = (s >> 1) + bit;
        } else {
            s >>= 1;
        }
        bit >>= 2;
    }
    // Round to nearest: √n ≥ s + ½ exactly when rem > s (no ties: √n is never a half-integer).
    if rem > s {
        s += 1;
    }
    // √x = s · 2^((ex − sh) / 2), s in [2^23, 2^24] (2^24 carries into the exponent).
    let e = (ex - sh) / 2 + 23 + 127;
    f32::from_bits(((e as u32) << 23) + (s as u32 - 0x80_0000))
}

/// `Real::sqrt` under a name that does not collide with `f32`'s inherent method.
trait SqrtReal {
    fn sqrt_real(self) -> Self;
}

impl SqrtReal for f32 {
    #[inline(always)]
    fn sqrt_real(self) -> Self {
        <f32 as Real>::sqrt(self)
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
    }

    #[test]
    fn f32_lanes_transpose_moves_every_bit() {
        // Sixteen distinct patterns, NaN payloads and signed zeros among them: lane `j` of
        // result `i` is lane `i` of row `j`, bit for bit.
        let v = samples();
        let rows: [[f32; 4]; 4] = core::array::from_fn(|r| core::array::from_fn(|l| v[r * 4 + l]));
        let t = F32x4::transpose(rows.map(|r| F32x4::load(&r)));
        for (i, col) in t.iter().enumerate() {
            for (j, got) in col.to_array().into_iter().enumerate() {
                assert_eq!(got.to_bits(), rows[j][i].to_bits(), "lane {j} of {i}");
            }
        }
    }

    #[test]
    fn f32_from_fixed_bits() {
        assert_eq!(f32::from_fixed_bits(3 << 15, 16), 1.5);
        assert_eq!(f32::from_fixed_bits(-1, 0), -1.0);
        assert_eq!(f32::from_fixed_bits(1, 31), 1.0 / 2147483648.0);
    }

    /// Values that exercise rounding, tiny and huge magnitudes, zeros and specials.
    fn samples() -> [f32; 16] {
        [
            1.0,
            0.5,
            2.0,
            1e-30,
            3.4e38,
            0.999_999_9,
            1.000_000_1,
            123.456,
            7.0e-3,
            0.0,
            -0.0,
            -1.5,
            f32::NAN,
            f32::INFINITY,
            f32::MIN_POSITIVE,
            0.333_333_34,
        ]
    }

    fn lanes(v: &[f32], i: usize) -> [f32; 4] {
        core::array::from_fn(|l| v[(i + l * 5) % v.len()])
    }

    #[test]
    fn f32_lanes_match_the_scalar_operations_bit_for_bit() {
        let v = samples();
        for i in 0..v.len() {
            for j in 0..v.len() {
                let (a, b) = (lanes(&v, i), lanes(&v, j));
                let (x, y) = (F32x4::load(&a), F32x4::load(&b));
                let check = |got: [f32; 4], want: &dyn Fn(f32, f32) -> f32, what: &str| {
                    for l in 0..4 {
                        let w = want(a[l], b[l]);
                        assert!(
                            got[l].to_bits() == w.to_bits() || (got[l].is_nan() && w.is_nan()),
                            "{what}({}, {}) lane {l}: {} vs {}",
                            a[l],
                            b[l],
                            got[l],
                            w
                        );
                    }
                };
                check((x + y).to_array(), &|p, q| p + q, "add");
                if !FMA {
                    check(x.mul_add(y, x).to_array(), &|p, q| p + p * q, "mul_add");
                }
                check((x - y).to_array(), &|p, q| p - q, "sub");
                check((x * y).to_array(), &|p, q| p * q, "mul");
                // The pair operations (one ymm register with AVX2) give the bits of two
                // four-lane ones.
                let [p0, p1] = F32x4::mul_pairs([x, y], [y, x]);
                let [f0, f1] = F32x4::mul_add_pairs([x, y], [y, x], [y, x]);
                let (g0, g1) = (x.mul_add(y, y), y.mul_add(x, x));
                for l in 0..4 {
                    for (got, want) in [(p0, x * y), (p1, y * x), (f0, g0), (f1, g1)] {
                        let (got, want) = (got.to_array()[l], want.to_array()[l]);
                        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "pairs");
                    }
                }
                check((x / y).to_array(), &|p, q| p / q, "div");
                check((-x).to_array(), &|p, _| -p, "neg");
                check(x.recip().to_array(), &|p, _| 1.0 / p, "recip");
                check(x.sqrt().to_array(), &|p, _| Real::sqrt(p), "sqrt");
                check(x.negate_where_negative(y).to_array(), &|p, q| if q < 0.0 { -p } else { p }, "negate");
                check(
                    x.select_positive_finite(x, y).to_array(),
                    &|p, q| if p > 0.0 && p <= f32::MAX { p } else { q },
                    "select",
                );
                // ±0 compare equal: either is a valid maximum of 0 and −0.
                let (mx, mn) = (x.max(y).to_array(), x.min(y).to_array());
                for l in 0..4 {
                    let (p, q) = (a[l], b[l]);
                    if !p.is_nan() && !q.is_nan() {
                        assert!(mx[l] == Real::max(p, q) && mn[l] == Real::min(p, q), "max/min({p}, {q})");
                    }
                }
                assert_eq!(x.any_positive(), a.iter().any(|&p| p > 0.0));
                check(x.abs().to_array(), &|p, _| Real::abs(p), "abs");
                let clamp = |p: f32| if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
                for (l, v) in x.clamp01().to_array().into_iter().enumerate() {
                    assert!(v == clamp(a[l]) && !v.is_sign_negative() || v == 0.0, "clamp01({})", a[l]);
                }
                let ge = (0..4).fold(0, |m, l| m | (u32::from(a[l] >= b[l]) << l));
                let lt = (0..4).fold(0, |m, l| m | (u32::from(a[l] < b[l]) << l));
                assert_eq!((x.mask_ge(y), x.mask_lt(y)), (ge, lt), "masks of {a:?} and {b:?}");
                if a.iter().all(|&p| p > 0.0 && p.is_finite()) {
                    check(x.inv_sqrt_positive().to_array(), &|p, _| Real::inv_sqrt_positive(p), "inv_sqrt");
                }
            }
        }
    }

    #[test]
    fn ieee_sqrt_is_correctly_rounded() {
        // √ in f64, rounded to f32, is correctly rounded (53 ≥ 2·24 + 2 bits).
        let reference = |x: f32| if x < 0.0 { f32::NAN } else { (x as f64).sqrt() as f32 };
        let check = |x: f32| {
            let (got, want) = (sqrt_ieee_f32(x), reference(x));
            assert!(got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(), "√{x:e}: {got:e} vs {want:e}");
            let lanes = F32x4::splat(x).sqrt_ieee().to_array()[0];
            let scalar = <f32 as Real>::sqrt_ieee(x);
            assert!(scalar.to_bits() == want.to_bits() || scalar.is_nan() && want.is_nan(), "scalar √{x:e}");
            assert!(lanes.to_bits() == want.to_bits() || lanes.is_nan() && want.is_nan(), "lanes √{x:e}");
        };
        for x in [0.0f32, -0.0, 1.0, 2.0, 4.0, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::INFINITY, -1.0, f32::NAN] {
            check(x);
        }
        check(f32::NEG_INFINITY);
        // Every exponent (subnormals included), with mantissas from a fixed-seed generator and the
        // extreme mantissas.
        let mut r = 0x2545_f491_4f6c_dd1du64;
        for e in 0..255u32 {
            for k in 0..if cfg!(miri) { 4 } else { 4000 } {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                let m = match k {
                    0 => 0,
                    1 => 0x7f_ffff,
                    2 => 1,
                    _ => (r as u32) & 0x7f_ffff,
                };
                check(f32::from_bits((e << 23) | m));
            }
        }
    }

    /// With FMA, `mul_add` rounds once: the exact `a + x · m` (in f64, where the product of two
    /// `f32` is exact), rounded, is within half an ulp of the result; without, it is the
    /// unfused `a + x * m`.
    #[test]
    fn mul_add_is_fused_exactly_when_the_build_has_fma() {
        let mut r = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            (r >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let mut fused_differs = false;
        for _ in 0..4000 {
            let (x, m, a): ([f32; 4], [f32; 4], [f32; 4]) = (
                core::array::from_fn(|_| next() * 3.0),
                core::array::from_fn(|_| next() * 3.0),
                core::array::from_fn(|_| next()),
            );
            let got = F32x4::load(&x).mul_add(F32x4::load(&m), F32x4::load(&a)).to_array();
            for l in 0..4 {
                let exact = f64::from(a[l]) + f64::from(x[l]) * f64::from(m[l]);
                let unfused = a[l] + x[l] * m[l];
                if FMA {
                    let ulp = f64::from(f32::from_bits(got[l].abs().to_bits() + 1) - got[l].abs());
                    assert!((f64::from(got[l]) - exact).abs() <= 0.5 * ulp, "fused {} {} {}", x[l], m[l], a[l]);
                    fused_differs |= got[l] != unfused;
                } else {
                    assert_eq!(got[l].to_bits(), unfused.to_bits(), "unfused {} {} {}", x[l], m[l], a[l]);
                }
            }
        }
        // Some sums round differently once fused.
        assert_eq!(fused_differs, FMA);
    }

    #[test]
    fn f32_max_with_nan_gives_the_other_operand() {
        let x = F32x4::load(&[f32::NAN, 1.0, f32::NAN, -2.0]);
        let z = F32x4::splat(0.0);
        assert_eq!(x.max(z).to_array(), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(z.max(x).to_array(), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(x.min(F32x4::splat(1.0)).to_array(), [1.0, 1.0, 1.0, -2.0]);
    }
}
