//! Integer helpers shared by the stages.

use crate::real::Real;

/// `round(v × 2^bits)` for `bits` ≤ 24, computed without a float operation when `R` is `Q16`
/// (the value is split into an integer part and up to three 8-bit fraction digits, so no
/// intermediate leaves the range of Q16.16). Ties round away from zero; NaN gives 0, huge
/// values saturate to about `±2^(31 + bits)`.
#[inline]
pub(crate) fn to_fixed<R: Real>(v: R, bits: u32) -> i64 {
    let bits = bits.min(24);
    let i = v.trunc_i32();
    let mut f = v - R::from_i32(i);
    let mut out = i as i64;
    let mut left = bits;
    if left == 0 {
        // Round the integer part by the sign of the fraction.
        if f >= R::HALF {
            out += 1;
        } else if f <= -R::HALF {
            out -= 1;
        }
        return out;
    }
    while left > 0 {
        let step = left.min(8);
        left -= step;
        f *= R::from_i32(1 << step);
        let d = if left == 0 {
            if f >= R::ZERO {
                (f + R::HALF).trunc_i32()
            } else {
                (f - R::HALF).trunc_i32()
            }
        } else {
            f.trunc_i32()
        };
        out = out.saturating_mul(1 << step).saturating_add(d as i64);
        f -= R::from_i32(d);
    }
    out
}

/// `⌊n / d⌋` for `d > 0` (0 when `d ≤ 0`, which callers never pass).
#[inline(always)]
pub(crate) fn floor_div(n: i64, d: i64) -> i64 {
    if d > 0 {
        n.div_euclid(d)
    } else {
        0
    }
}

/// `⌈n / d⌉` for `d > 0` (0 when `d ≤ 0`).
#[inline(always)]
pub(crate) fn ceil_div(n: i64, d: i64) -> i64 {
    if d > 0 {
        -(-n).div_euclid(d)
    } else {
        0
    }
}

/// `n / d` rounded to nearest, ties toward +∞, for `d > 0` (0 when `d ≤ 0`).
#[inline(always)]
pub(crate) fn div_round(n: i64, d: i64) -> i64 {
    floor_div(n.saturating_add(d / 2), d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Q16;

    #[test]
    fn to_fixed_matches_exact_rounding() {
        for &(v, bits, want) in &[
            (1.5f32, 4u32, 24i64),
            (-1.5, 4, -24),
            (0.03125, 4, 1),   // 0.5 rounds away from zero
            (-0.03125, 4, -1), // -0.5 likewise
            (0.03, 4, 0),
            (2.5, 0, 3),
            (-2.5, 0, -3),
            (1.0, 24, 1 << 24),
            (0.999_999_94, 24, (1 << 24) - 1),
            (8191.0, 4, 8191 * 16),
        ] {
            assert_eq!(to_fixed(v, bits), want, "f32 {v} bits {bits}");
        }
        // Q16 agrees with f32 wherever the value is representable.
        for k in (-300..300).step_by(if cfg!(miri) { 6 } else { 1 }) {
            // |v| < 128 keeps every Q16 value exact in f32.
            let v = k as f32 * 0.377;
            let q = Q16::from_f32(v);
            for bits in [0, 4, 8, 16, 24] {
                assert_eq!(to_fixed(q, bits), to_fixed(q.to_f32(), bits), "{v} {bits}");
            }
        }
        assert_eq!(to_fixed(f32::NAN, 8), 0);
        assert!(to_fixed(f32::INFINITY, 24) > 1 << 50);
    }

    #[test]
    fn integer_division_rounds_as_named() {
        assert_eq!(floor_div(-7, 2), -4);
        assert_eq!(ceil_div(-7, 2), -3);
        assert_eq!(ceil_div(7, 2), 4);
        assert_eq!(div_round(7, 2), 4);
        assert_eq!(div_round(-7, 2), -3);
        assert_eq!(div_round(-8, 3), -3);
        assert_eq!(floor_div(5, 0), 0);
    }
}
