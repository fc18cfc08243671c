//! Q32.32 fixed point (`i64`, 2⁻³² steps), the time base of [`Player`](crate::player::Player):
//! exact conversions from any [`Real`] and correctly rounded ones back, with integer operations
//! only, so the Q16.16 build stays free of soft-float calls.

use super::Real;

/// `v` in Q32.32 fixed point, rounded to nearest and saturated at ±(2⁶³ − 1); `None` for NaN.
/// Integer-only: no floating-point operation, so it costs no soft-float call on an FPU-less core.
pub(crate) fn f32_to_q32(v: f32) -> Option<i64> {
    let b = v.to_bits();
    let negative = b >> 31 != 0;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = (b & 0x7f_ffff) as i64;
    let magnitude = if exp == 0xff {
        if man != 0 {
            return None;
        }
        i64::MAX
    } else if exp == 0 {
        0 // zero and subnormals (below 2⁻¹²⁶)
    } else {
        // value = m · 2^(exp − 150); in Q32.32: m · 2^(exp − 118).
        let m = man | 0x80_0000;
        let shift = exp - 118;
        if shift >= 0 {
            if shift > 39 {
                i64::MAX
            } else {
                m << shift
            }
        } else if shift < -25 {
            0
        } else {
            let s = -shift;
            (m + (1 << (s - 1))) >> s
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `v` in Q32.32 fixed point, saturating; `None` for NaN. Exact for `f32` values whose magnitude
/// is in `[2⁻⁹, 2³¹)` and for every `Q16` value: the integer part goes through `trunc_i32`, only
/// the fraction (exact in `f32` for both types) through [`f32_to_q32`].
#[inline]
pub(crate) fn to_q32<R: Real>(v: R) -> Option<i64> {
    // Bit tests, not float comparisons: the Q16 path stays integer-only.
    let f = v.to_f32();
    let exp = (f.to_bits() >> 23) & 0xff;
    if exp >= 127 + 31 {
        // NaN, infinities and magnitudes of 2³¹ and more: saturate (or None for NaN).
        return f32_to_q32(f);
    }
    let whole = v.trunc_i32();
    let frac = f32_to_q32((v - R::from_i32(whole)).to_f32())?;
    Some(((whole as i64) << 32) + frac)
}

/// A Q32.32 value as `R`: correctly rounded (to nearest, ties to even) for `f32`, rounded to the
/// nearest step for `Q16` (saturating). Integer-only on the `Q16` path.
pub(crate) fn q32_to_real<R: Real>(v: i64) -> R {
    if v == 0 {
        return R::ZERO;
    }
    let mag = v.unsigned_abs();
    let lead = 63 - mag.leading_zeros() as i32;
    let r = if lead <= 30 {
        // At most 31 significant bits: `bits / 2³¹ / 2` rounds once (in `from_fixed_bits`).
        R::from_fixed_bits(mag as i32, 31) * R::HALF
    } else {
        // Round to 24 significant bits, ties to even, then scale exactly.
        let shift = (lead - 23) as u32;
        let mut mant = mag >> shift;
        let rem = mag & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && mant & 1 == 1) {
            mant += 1;
        }
        let frac = 32 - shift as i32;
        if frac >= 0 {
            R::from_fixed_bits(mant as i32, frac as u32)
        } else {
            let whole = (mant as u128) << (-frac) as u32;
            R::from_i32(whole.min(i32::MAX as u128) as i32)
        }
    };
    if v < 0 {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::Q16;

    #[test]
    fn fixed_point_conversions_are_exact_or_correctly_rounded() {
        let mut s = 0x2545_f491u32;
        for _ in 0..if cfg!(miri) { 2_000 } else { 200_000 } {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Random f32 in roughly [2⁻⁹, 2²⁰], both signs.
            let e = 118 + (s % 30);
            let v = f32::from_bits((e << 23) | (s >> 9) | ((s & 1) << 31));
            let q = f32_to_q32(v).unwrap();
            assert_eq!(q as f64, v as f64 * 4_294_967_296.0, "{v} is exact in Q32.32");
            assert_eq!(to_q32(v), Some(q));
            assert_eq!(q32_to_real::<f32>(q), v, "round trip of {v}");
            // A value between ticks rounds like f64 → f32 (correct rounding).
            let odd = q | 1;
            assert_eq!(q32_to_real::<f32>(odd), (odd as f64 / 4_294_967_296.0) as f32);
        }
        assert_eq!(f32_to_q32(f32::NAN), None);
        assert_eq!(f32_to_q32(f32::INFINITY), Some(i64::MAX));
        assert_eq!(f32_to_q32(-1.0e30), Some(-i64::MAX));
        assert_eq!(f32_to_q32(1.0e-30), Some(0));
        // Q16 values are exact in Q32.32 and come back unchanged.
        for bits in [1, -1, 12345, -654_321, 0x7fff_ffff, -0x7fff_ffff] {
            let q = Q16::from_bits(bits);
            assert_eq!(to_q32(q), Some((bits as i64) << 16));
            assert_eq!(q32_to_real::<Q16>((bits as i64) << 16), q);
        }
    }
}
