//! Transcendental functions, written once for every [`Real`].
//!
//! micromath's `f32` approximations are too coarse for rotations (its sine is off by about 2e-3),
//! so these kernels use argument reduction plus short polynomials instead. Their worst errors,
//! measured against `f64` in the tests below, are about 2e-7 (f32) and 1e-4 (Q16.16) for sine
//! and cosine on [-2π, 2π], and the same order for the arc tangent.
//!
//! Every constant comes from [`Real::ratio`] or an associated constant, so the Q16.16 build
//! contains no floating-point operation.

use crate::real::Real;

/// Sine and cosine of `x` (radians), computed together.
///
/// Accurate for |x| up to a few thousand radians; beyond that, argument reduction loses
/// precision (animation angles never get there).
#[inline]
pub fn sin_cos<R: Real>(x: R) -> (R, R) {
    // Reduce to r ∈ [-π/4, π/4] and a quadrant k with x = k·π/2 + r.
    let q = x * R::FRAC_2_PI;
    let k = if q >= R::ZERO { (q + R::HALF).trunc_i32() } else { (q - R::HALF).trunc_i32() };
    let kr = R::from_i32(k);
    let r = (x - kr * R::FRAC_PI_2_HI) - kr * R::FRAC_PI_2_LO;
    let z = r * r;
    // Taylor series; on |r| ≤ π/4 the first omitted terms are below 2e-9.
    let s =
        r + r * z * (R::ratio(-1, 6) + z * (R::ratio(1, 120) + z * (R::ratio(-1, 5040) + z * R::ratio(1, 362_880))));
    let c = R::ONE
        + z * (-R::HALF
            + z * (R::ratio(1, 24)
                + z * (R::ratio(-1, 720) + z * (R::ratio(1, 40_320) + z * R::ratio(-1, 3_628_800)))));
    match k & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Sine of `x` (radians).
#[inline]
pub fn sin<R: Real>(x: R) -> R {
    sin_cos(x).0
}

/// Cosine of `x` (radians).
#[inline]
pub fn cos<R: Real>(x: R) -> R {
    sin_cos(x).1
}

/// Arc tangent of `x`, in [-π/2, π/2].
#[inline]
pub fn atan<R: Real>(x: R) -> R {
    let neg = x < R::ZERO;
    let mut a = x.abs();
    let inverted = a > R::ONE;
    if inverted {
        a = a.recip();
    }
    // tan(π/8): above it, atan(a) = π/4 + atan((a - 1) / (a + 1)).
    let tan_pi_8 = R::ratio(414_213_562, 1_000_000_000);
    let (offset, y) = if a > tan_pi_8 { (R::FRAC_PI_4, (a - R::ONE) / (a + R::ONE)) } else { (R::ZERO, a) };
    let z = y * y;
    // Taylor series on |y| ≤ tan(π/8); the first omitted term is below 2e-8.
    let p = y + y
        * z
        * (R::ratio(-1, 3)
            + z * (R::ratio(1, 5)
                + z * (R::ratio(-1, 7)
                    + z * (R::ratio(1, 9) + z * (R::ratio(-1, 11) + z * (R::ratio(1, 13) + z * R::ratio(-1, 15)))))));
    let mut r = offset + p;
    if inverted {
        r = R::FRAC_PI_2 - r;
    }
    if neg {
        -r
    } else {
        r
    }
}

/// Four-quadrant arc tangent of `y / x`, in [-π, π]; 0 when both are 0.
#[inline]
pub fn atan2<R: Real>(y: R, x: R) -> R {
    if x == R::ZERO && y == R::ZERO {
        return R::ZERO;
    }
    if x.abs() >= y.abs() {
        let a = atan(y / x);
        if x >= R::ZERO {
            a
        } else if y >= R::ZERO {
            a + R::PI
        } else {
            a - R::PI
        }
    } else {
        let a = atan(x / y);
        if y > R::ZERO {
            R::FRAC_PI_2 - a
        } else {
            -R::FRAC_PI_2 - a
        }
    }
}

/// Arc cosine of `x` (clamped into [-1, 1]), in [0, π].
#[inline]
pub fn acos<R: Real>(x: R) -> R {
    let x = x.clamp(-R::ONE, R::ONE);
    atan2(((R::ONE - x) * (R::ONE + x)).sqrt(), x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::Q16;

    fn sweep(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        (0..=n).map(move |i| lo + (hi - lo) * i as f64 / n as f64)
    }

    #[test]
    fn f32_sin_cos_against_f64() {
        let mut worst = 0.0f64;
        let n = if cfg!(miri) { 1_000 } else { 200_000 };
        for x in sweep(-4.0 * core::f64::consts::PI, 4.0 * core::f64::consts::PI, n) {
            let (s, c) = sin_cos(x as f32);
            let xf = (x as f32) as f64;
            worst = worst.max((s as f64 - xf.sin()).abs()).max((c as f64 - xf.cos()).abs());
        }
        assert!(worst < 3.0e-7, "sin/cos error {worst:e}");
    }

    #[test]
    fn f32_atan2_acos_against_f64() {
        let mut worst = 0.0f64;
        for a in sweep(-core::f64::consts::PI, core::f64::consts::PI, if cfg!(miri) { 200 } else { 20_000 }) {
            for r in [1.0e-3, 0.5, 1.0, 7.0, 1.0e4] {
                let (y, x) = ((a.sin() * r) as f32, (a.cos() * r) as f32);
                let e = (y as f64).atan2(x as f64);
                worst = worst.max((atan2(y, x) as f64 - e).abs());
            }
        }
        assert!(worst < 4.0e-7, "atan2 error {worst:e}");
        let mut worst = 0.0f64;
        for x in sweep(-1.0, 1.0, if cfg!(miri) { 1_000 } else { 100_000 }) {
            let xf = x as f32;
            worst = worst.max((acos(xf) as f64 - (xf as f64).acos()).abs());
        }
        assert!(worst < 5.0e-7, "acos error {worst:e}");
        assert_eq!(atan2(0.0f32, 0.0), 0.0);
        assert_eq!(acos(2.0f32), 0.0);
    }

    #[test]
    fn q16_kernels_against_f64() {
        let mut worst = 0.0f64;
        for x in sweep(-6.5, 6.5, if cfg!(miri) { 500 } else { 50_000 }) {
            let q = Q16::from_f32(x as f32);
            let xf = q.to_f32() as f64;
            let (s, c) = sin_cos(q);
            worst = worst.max((s.to_f32() as f64 - xf.sin()).abs()).max((c.to_f32() as f64 - xf.cos()).abs());
        }
        assert!(worst < 1.2e-4, "Q16 sin/cos error {worst:e}");
        let mut worst = 0.0f64;
        for a in sweep(-3.1, 3.1, if cfg!(miri) { 200 } else { 20_000 }) {
            let (y, x) = (Q16::from_f32(a.sin() as f32), Q16::from_f32(a.cos() as f32));
            let e = (y.to_f32() as f64).atan2(x.to_f32() as f64);
            worst = worst.max((atan2(y, x).to_f32() as f64 - e).abs());
        }
        assert!(worst < 2.0e-4, "Q16 atan2 error {worst:e}");
    }
}
