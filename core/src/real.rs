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
//!
//! Each `Real` names a four-lane type, [`Real::Lanes`] (the [`Lanes`] trait): for `f32`,
//! [`F32x4`], one SIMD register where the target has one (SSE on x86, NEON on AArch64, simd128
//! on WebAssembly built with `-C target-feature=+simd128`, through the `wide` crate) and four
//! scalars elsewhere (Cortex-M, RISC-V); for [`Q16`], [`Q16x4`], four fixed-point scalars. Every
//! lane operation gives, lane by lane, bit for bit the result of the scalar operation, so a
//! job written with lanes computes the same numbers on every target. Jobs use lanes where the
//! compiler's auto-vectorizer is unreliable: loops over SoA elements whose lane loops it may
//! fully unroll and then vectorize across elements instead (with gathers), or partially (one,
//! two and one lanes).
//!
//! The traits are here; each type, its `Real` implementation and its lanes are in their own
//! file (`real/f32.rs`, `real/q16.rs`).

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

mod f32;
mod q16;
pub(crate) mod q32;

pub use self::f32::F32x4;
pub use self::q16::{Q16x4, Q16};

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
    /// Four lanes of the type, as one SIMD value where the target has one (see [`Lanes`]).
    type Lanes: Lanes<Self>;

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
    /// Square root, correctly rounded for `f32` (the same bits on every target: the SIMD
    /// register's square root where lanes are one, an integer computation elsewhere);
    /// [`Real::sqrt`] for `Q16`. NaN for negative `f32` inputs.
    #[inline(always)]
    fn sqrt_ieee(self) -> Self {
        self.sqrt()
    }
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

/// Four lanes of `R`, combined lane by lane. See the [module documentation](self).
pub trait Lanes<R: Real>:
    Copy
    + fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// All lanes `v`.
    fn splat(v: R) -> Self;
    /// The lanes of `a`, lane `i` from `a[i]`.
    fn load(a: &[R; 4]) -> Self;
    /// The lanes as an array.
    fn to_array(self) -> [R; 4];
    /// Lane-wise [`Real::max`] (for `f32`, a NaN lane gives the other operand).
    #[must_use]
    fn max(self, other: Self) -> Self;
    /// Lane-wise [`Real::min`] (for `f32`, a NaN lane gives the other operand).
    #[must_use]
    fn min(self, other: Self) -> Self;
    /// `a + self · m`, lane by lane: fused (rounded once) for `f32` lanes where the build has
    /// FMA (x86-64 with the `fma` target feature, e.g. `-C target-cpu=x86-64-v3`); elsewhere
    /// the product, then the sum (the same bits as `a + self * m`).
    #[must_use]
    #[inline(always)]
    fn mul_add(self, m: Self, a: Self) -> Self {
        a + self * m
    }
    /// `[x[0] · m, x[1] · m]`, `m` in every lane: two lane vectors multiplied as one
    /// eight-lane operation where the build has AVX2 (the same bits as two `*`).
    #[must_use]
    #[inline(always)]
    fn mul_pair(x: [Self; 2], m: R) -> [Self; 2] {
        let m = Self::splat(m);
        [x[0] * m, x[1] * m]
    }
    /// `[x[0].mul_add(m, a[0]), x[1].mul_add(m, a[1])]`, `m` in every lane (see
    /// [`mul_add`](Self::mul_add)): one eight-lane operation where the build has AVX2 (the same
    /// bits as two `mul_add`).
    #[must_use]
    #[inline(always)]
    fn mul_add_pair(x: [Self; 2], m: R, a: [Self; 2]) -> [Self; 2] {
        let m = Self::splat(m);
        [x[0].mul_add(m, a[0]), x[1].mul_add(m, a[1])]
    }
    /// `[x[0] * m[0], x[1] * m[1]]`: two lane vectors multiplied by two others as one
    /// eight-lane operation where the build has AVX2 (the same bits as two `*`).
    #[must_use]
    #[inline(always)]
    fn mul_pairs(x: [Self; 2], m: [Self; 2]) -> [Self; 2] {
        [x[0] * m[0], x[1] * m[1]]
    }
    /// `[x[0].mul_add(m[0], a[0]), x[1].mul_add(m[1], a[1])]` (see [`mul_add`](Self::mul_add)):
    /// one eight-lane operation where the build has AVX2 (the same bits as two `mul_add`).
    #[must_use]
    #[inline(always)]
    fn mul_add_pairs(x: [Self; 2], m: [Self; 2], a: [Self; 2]) -> [Self; 2] {
        [x[0].mul_add(m[0], a[0]), x[1].mul_add(m[1], a[1])]
    }
    /// [`mul_add`](Self::mul_add) in a kernel of the set `V3` (`sinew::kernels`): fused in
    /// the x86-64-v3 kernels, as an x86-64-v3 build fuses it.
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_add_on<const V3: bool>(self, m: Self, a: Self) -> Self {
        self.mul_add(m, a)
    }
    /// [`mul_add_on`](Self::mul_add_on), its result kept as one vector of four lanes (the same
    /// bits): in the x86-64-v3 kernels the compiler may not split it into lanes computed one
    /// by one, as it otherwise may where a kernel reads only some lanes of a result (the
    /// skinning loops). Kernels that read every lane keep `mul_add_on`, which leaves the
    /// compiler free to join results (blending runs more instructions with the vector kept).
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_add_whole_on<const V3: bool>(self, m: Self, a: Self) -> Self {
        self.mul_add_on::<V3>(m, a)
    }
    /// [`mul_pair`](Self::mul_pair) in a kernel of the set `V3` (see
    /// [`mul_add_on`](Self::mul_add_on)): the same bits.
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_pair_on<const V3: bool>(x: [Self; 2], m: R) -> [Self; 2] {
        Self::mul_pair(x, m)
    }
    /// [`mul_add_pair`](Self::mul_add_pair) in a kernel of the set `V3` (see
    /// [`mul_add_on`](Self::mul_add_on)).
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_add_pair_on<const V3: bool>(x: [Self; 2], m: R, a: [Self; 2]) -> [Self; 2] {
        Self::mul_add_pair(x, m, a)
    }
    /// [`mul_add_pairs`](Self::mul_add_pairs) in a kernel of the set `V3` (see
    /// [`mul_add_on`](Self::mul_add_on)).
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_add_pairs_on<const V3: bool>(x: [Self; 2], m: [Self; 2], a: [Self; 2]) -> [Self; 2] {
        Self::mul_add_pairs(x, m, a)
    }
    /// The columns of `a × b` (column-major, columns in lanes) in a kernel of the set `V3`,
    /// where that set has an eight-lane form of the product: column `c` is
    /// `((a₀·b[c][0] + a₁·b[c][1]) + a₂·b[c][2]) + a₃·b[c][3]`, the first product rounded and
    /// each sum fused, as four-lane [`mul_add_on`](Self::mul_add_on)s give it. `None` where
    /// there is no such form: the caller takes its four-lane one.
    #[doc(hidden)]
    #[must_use]
    #[inline(always)]
    fn mul_mat4_wide_on<const V3: bool>(a: &[[R; 4]; 4], b: &[[R; 4]; 4]) -> Option<[[R; 4]; 4]> {
        let _ = (a, b);
        None
    }
    /// The 4×4 transpose of `rows`: lane `j` of result `i` is lane `i` of `rows[j]` (data
    /// movement only, so the same bits); shuffles where the lanes are SSE registers.
    #[must_use]
    #[inline(always)]
    fn transpose(rows: [Self; 4]) -> [Self; 4] {
        let [a, b, c, d] = rows.map(Self::to_array);
        let column = |i: usize| {
            let l = |r: &[R; 4]| r.get(i).copied().unwrap_or(R::ZERO);
            Self::load(&[l(&a), l(&b), l(&c), l(&d)])
        };
        [column(0), column(1), column(2), column(3)]
    }
    /// Lane-wise `1 / x` (exact division, not an estimate).
    #[must_use]
    fn recip(self) -> Self;
    /// Lane-wise [`Real::inv_sqrt_positive`].
    #[must_use]
    fn inv_sqrt_positive(self) -> Self;
    /// Lane-wise [`Real::sqrt`].
    #[must_use]
    fn sqrt(self) -> Self;
    /// `self` with the lanes negated where `sign < 0`.
    #[must_use]
    fn negate_where_negative(self, sign: Self) -> Self;
    /// `a` in the lanes where `0 < self ≤ R::MAX` (so not 0, negative, NaN or ∞), `b` elsewhere.
    #[must_use]
    fn select_positive_finite(self, a: Self, b: Self) -> Self;
    /// True when some lane is above 0.
    fn any_positive(self) -> bool;
    /// Lane-wise [`Real::abs`].
    #[must_use]
    fn abs(self) -> Self;
    /// Lane-wise square root, correctly rounded as IEEE 754 requires (so the same bits on every
    /// target: the SIMD instruction where lanes are SIMD, an integer algorithm elsewhere); for
    /// [`Q16`], [`Real::sqrt`]. Negative lanes give NaN (`f32`) or 0 (`Q16`); the sign of a NaN
    /// result depends on the target (the SSE instruction sets it for negative inputs).
    #[must_use]
    fn sqrt_ieee(self) -> Self;
    /// Each lane clamped into [0, 1]; a NaN lane gives 0 (as `max(0)` then `min(1)`).
    #[must_use]
    #[inline(always)]
    fn clamp01(self) -> Self {
        self.max(Self::splat(R::ZERO)).min(Self::splat(R::ONE))
    }
    /// Bit `i` set where lane `i` of `self` is at least that of `other` (clear for NaN).
    fn mask_ge(self, other: Self) -> u32;
    /// Bit `i` set where lane `i` of `self` is below that of `other` (clear for NaN).
    fn mask_lt(self, other: Self) -> u32;
}

/// Fixed-capacity buffers of a scalar start at 0.
impl<R: Real> crate::capacity::Element for R {
    const INIT: Self = R::ZERO;
}
