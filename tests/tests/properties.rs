//! Property-based tests of sinew's core, in `f32` and in Q16.16: blend weights, quaternion
//! paths, the hierarchy walk and skinning. Inputs come from `proptest` strategies, so a failure
//! shrinks to a small counterexample; proptest saves its seed in
//! `tests/tests/properties.proptest-regressions` and replays it first on every later run (commit
//! that file).
//!
//! # Tolerances
//!
//! Every bound is derived from the scalar's precision with a first-order rounding-error model,
//! not fitted to measurements:
//!
//! - one rounded operation (`+ − × ÷`) whose result has magnitude `m` errs by at most
//!   [`rnd`]`(m)`: half an ulp, relative, for `f32` (`2⁻²⁴·m`); half a step, absolute, for Q16.16
//!   (`2⁻¹⁷`; its sums are exact, so counting them over-estimates);
//! - square roots, inverse square roots and the sine / arc-tangent kernels err by at most what
//!   core's own unit tests assert for them (`real.rs`, `math/ops.rs`);
//! - inputs are drawn in `f64`, rounded to the scalar, and every expected value is computed in
//!   `f64` from the rounded values, so a bound covers sinew's arithmetic only. Where a property
//!   states an ideal that the rounded inputs themselves miss (a bind pose whose
//!   `model × inverse_bind` is not exactly the identity once rounded, a rotation matrix rounded
//!   to Q16), that deviation is computed exactly in `f64` and added, named as such.
//!
//! Errors propagate to first order: each stage's bound is the previous stage's bound carried
//! through the stage's (exact) sensitivity, plus the stage's own roundings counted from the code.

// Loops over joint and vertex indices read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use std::f64::consts::{PI, TAU};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use sinew::job::blending::make_additive;
use sinew::job::{
    BlendingJob, Layer, LocalToModelJob, MakeAdditiveJob, Palette, SkinDualQuatJob, SkinMatrixJob, SkinningJob,
};
use sinew::math::{DualQuat, Mat4, Quat, SoaTransform, Transform, Vec3, Vec4};
use sinew::skeleton::Skeleton;
use sinew::{Real, Q16};
use sinew_tests::convert::{
    mat4_from_f64, mat4_to_f64, pack_soa, quat_from_f64, quat_to_f64, real_from_f64, real_to_f64, transform_from_f64,
    transform_to_f64, vec3_from_f64, vec3_to_f64, vec4_from_f64, vec4_to_f64, ExactF64,
};
use sinew_tests::reference::{self, DualQuatd, Mat4d, Quatd, SkinInput, Trsd, Vec3d, Vec4d};

// -------------------------------------------------------------------------------------------------
// Precision model
// -------------------------------------------------------------------------------------------------

/// Half the scalar's step near 1: `2⁻²⁴` for `f32`, `2⁻¹⁷` for Q16.16.
fn half_step<R: ExactF64>() -> f64 {
    real_to_f64(R::EPSILON) / 2.0
}

/// The largest error of one rounded arithmetic operation whose result has magnitude `m`:
/// round-to-nearest is off by half an ulp of the result (`f32`, relative) or half a step (Q16,
/// absolute; Q16's `×`, `÷` and `recip` round to nearest, and its `+`/`−` are exact).
fn rnd<R: ExactF64>(m: f64) -> f64 {
    if R::FIXED_POINT {
        half_step::<R>()
    } else {
        half_step::<R>() * m.abs()
    }
}

/// Error of `Real::sqrt` for a root of magnitude `root`: core's `real.rs` tests assert a
/// relative error below 2.5e-7 for `f32` and an absolute one of at most 8e-6 for Q16.
fn sqrt_err<R: ExactF64>(root: f64) -> f64 {
    if R::FIXED_POINT {
        8.0e-6
    } else {
        2.5e-7 * root
    }
}

/// Relative error with which a vector of length `ℓ`, whose squared length is a sum of `terms`
/// rounded squares, is normalized the way `Quat::normalize` and `Vec3::try_normalize` do it:
/// `f32` multiplies by `inv_sqrt(ℓ²)` (relative error below 4e-7, `real.rs`); Q16 divides by
/// `sqrt(ℓ²)` (absolute error 8e-6), as `Real::FIXED_POINT` prescribes. Either way `ℓ²` carries
/// `2·terms − 1` roundings, half of which reach the root.
fn inv_len_err<R: ExactF64>(len: f64, terms: usize) -> f64 {
    let l2_err = (2 * terms - 1) as f64 * rnd::<R>(len * len);
    if R::FIXED_POINT {
        (sqrt_err::<R>(len) + l2_err / (2.0 * len)) / len
    } else {
        4.0e-7 + l2_err / (2.0 * len * len)
    }
}

/// The same when Q16 multiplies by the rounded reciprocal `sqrt(ℓ²).recip()` instead of
/// dividing (the blending job and dual-quaternion skinning do): the reciprocal's absolute
/// rounding `rnd(1/ℓ)` is a relative error `rnd(1/ℓ)·ℓ`, which grows with `ℓ`.
fn recip_len_err<R: ExactF64>(len: f64, terms: usize) -> f64 {
    inv_len_err::<R>(len, terms) + if R::FIXED_POINT { rnd::<R>(1.0 / len) * len } else { 0.0 }
}

/// Absolute error of `ops::sin`/`ops::cos` (core's `ops.rs` tests: 3e-7 for `f32`, 1.2e-4 for
/// Q16).
fn sin_err<R: ExactF64>() -> f64 {
    if R::FIXED_POINT {
        1.2e-4
    } else {
        3.0e-7
    }
}

/// Absolute error of `ops::atan2` (core's `ops.rs` tests: 4e-7 for `f32`, 2e-4 for Q16).
fn atan2_err<R: ExactF64>() -> f64 {
    if R::FIXED_POINT {
        2.0e-4
    } else {
        4.0e-7
    }
}

/// Input ranges per scalar: Q16.16 holds values below 32768 with a fixed step, so its
/// hierarchies are shallower and their scales closer to 1 (products of scales along a chain stay
/// in range).
trait Scalar: ExactF64 {
    /// Largest random hierarchy.
    const MAX_JOINTS: usize;
    /// Local scales are log-uniform in `[1 / MAX_SCALE, MAX_SCALE]`.
    const MAX_SCALE: f64;
    /// Local translations are uniform in `±MAX_TRANSLATION` per component.
    const MAX_TRANSLATION: f64;
    /// Root and rigid-transform translations are uniform in `±ROOT_TRANSLATION`.
    const ROOT_TRANSLATION: f64;
}

impl Scalar for f32 {
    const MAX_JOINTS: usize = 32;
    const MAX_SCALE: f64 = 2.0;
    const MAX_TRANSLATION: f64 = 1.0;
    const ROOT_TRANSLATION: f64 = 10.0;
}

impl Scalar for Q16 {
    const MAX_JOINTS: usize = 16;
    const MAX_SCALE: f64 = 1.25;
    const MAX_TRANSLATION: f64 = 0.5;
    const ROOT_TRANSLATION: f64 = 2.0;
}

/// `cases` random cases per property; failing cases are saved beside this file
/// (`properties.proptest-regressions`) and replayed first on later runs.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    }
}

/// Capacity of the test skeletons, in SoA elements (32 joints).
const SOA: usize = 8;

// -------------------------------------------------------------------------------------------------
// Strategies
// -------------------------------------------------------------------------------------------------

/// A rotation drawn uniformly from SO(3) (Shoemake's subgroup algorithm), either sign.
fn unit_quat() -> impl Strategy<Value = Quatd> + Clone {
    (0.0..1.0f64, 0.0..1.0f64, 0.0..1.0f64).prop_map(|(u1, u2, u3)| {
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        Quatd::new(a * (TAU * u2).sin(), a * (TAU * u2).cos(), b * (TAU * u3).sin(), b * (TAU * u3).cos())
    })
}

/// A direction drawn uniformly from the unit sphere.
fn direction() -> impl Strategy<Value = Vec3d> + Clone {
    (-1.0..=1.0f64, 0.0..TAU).prop_map(|(z, phi)| {
        let r = (1.0 - z * z).max(0.0).sqrt();
        Vec3d::new(r * phi.cos(), r * phi.sin(), z)
    })
}

/// A rotation about a random axis by an angle in `[0, max_angle]`.
fn rotation_within(max_angle: f64) -> impl Strategy<Value = Quatd> + Clone {
    (direction(), 0.0..=max_angle).prop_map(|(axis, angle)| Quatd::from_axis_angle(axis, angle))
}

/// A vector with components uniform in `±half_extent`.
fn in_box(half_extent: f64) -> impl Strategy<Value = Vec3d> + Clone {
    let c = -half_extent..=half_extent;
    (c.clone(), c.clone(), c).prop_map(|(x, y, z)| Vec3d::new(x, y, z))
}

/// A value log-uniform in `[1 / max, max]`.
fn log_uniform(max: f64) -> impl Strategy<Value = f64> + Clone {
    (-max.ln()..=max.ln()).prop_map(f64::exp)
}

/// Per-axis scales log-uniform in `[1 / max, max]`, or one such scale on all axes.
fn scale3(max: f64, uniform: bool) -> impl Strategy<Value = Vec3d> + Clone {
    (log_uniform(max), log_uniform(max), log_uniform(max)).prop_map(move |(x, y, z)| {
        if uniform {
            Vec3d::splat(x)
        } else {
            Vec3d::new(x, y, z)
        }
    })
}

/// A transform with a uniformly random rotation.
fn trs(translation: f64, scale: f64, uniform_scale: bool) -> impl Strategy<Value = Trsd> + Clone {
    (in_box(translation), unit_quat(), scale3(scale, uniform_scale)).prop_map(|(translation, rotation, scale)| Trsd {
        translation,
        rotation,
        scale,
    })
}

/// A parents-first hierarchy of `n` joints with several roots: joint 0 and about one joint in
/// eight are roots; the others pick a parent `i − 1 − ⌊f³·i⌋`, so chains and bushes both occur
/// (and shrinking leads to a plain chain).
fn parents(n: usize) -> impl Strategy<Value = Vec<i16>> + Clone {
    vec((prop::bool::weighted(0.12), 0.0..1.0f64), n).prop_map(|picks| {
        picks
            .iter()
            .enumerate()
            .map(|(i, &(root, f))| if i == 0 || root { -1 } else { (i - 1 - (f * f * f * i as f64) as usize) as i16 })
            .collect()
    })
}

// -------------------------------------------------------------------------------------------------
// Conversions and small f64 helpers
// -------------------------------------------------------------------------------------------------

/// Transforms rounded to `R`, packed into SoA, and the rounded values in `f64`.
fn round_pose<R: ExactF64>(pose: &[Trsd]) -> (Vec<SoaTransform<R>>, Vec<Trsd>) {
    let r: Vec<Transform<R>> = pose.iter().map(transform_from_f64).collect();
    (pack_soa(&r), r.iter().map(transform_to_f64).collect())
}

/// Joint `j` of an SoA pose, in `f64`.
fn joint_of<R: ExactF64>(pose: &[SoaTransform<R>], j: usize) -> Trsd {
    transform_to_f64(&pose[j / 4].lane(j % 4))
}

/// A scalar rounded to `R`, and its rounded value.
fn round<R: ExactF64>(v: f64) -> (R, f64) {
    let r = real_from_f64::<R>(v);
    (r, real_to_f64(r))
}

/// A matrix rounded to `R`, and its rounded value.
fn round_matrix<R: ExactF64>(m: &Mat4d) -> (Mat4<R>, Mat4d) {
    let r = mat4_from_f64::<R>(m);
    (r, mat4_to_f64(&r))
}

fn m_map(a: &Mat4d, f: impl Fn(f64) -> f64) -> Mat4d {
    Mat4d { cols: a.cols.map(|c| c.map(&f)) }
}

fn m_zip(a: &Mat4d, b: &Mat4d, f: impl Fn(f64, f64) -> f64) -> Mat4d {
    Mat4d { cols: std::array::from_fn(|c| std::array::from_fn(|r| f(a.cols[c][r], b.cols[c][r]))) }
}

/// Entry-wise absolute values.
fn m_abs(a: &Mat4d) -> Mat4d {
    m_map(a, f64::abs)
}

/// Euclidean length of column `c`'s first three rows.
fn col_len(m: &Mat4d, c: usize) -> f64 {
    m.axis(c).length()
}

/// Rotation angle between two quaternions (radians), whatever their signs and norms.
fn angle(a: Quatd, b: Quatd) -> f64 {
    a.rotation_angle_to(b).unwrap_or(f64::INFINITY)
}

fn diff3(a: Vec3d, b: Vec3d) -> f64 {
    (a - b).max_abs()
}

// -------------------------------------------------------------------------------------------------
// 1. Blending
// -------------------------------------------------------------------------------------------------

/// Layer rotations stay within this rotation angle of a per-joint base orientation: any two are
/// at most 80° apart in 4D (dot ≥ 0.17), so the hemisphere each one is brought into is never a
/// rounding decision and the blended sum has norm at least `cos 40° · W`.
const CONE: f64 = 80.0 * PI / 180.0;

/// One joint near `base`: translation in ±2, rotation within [`CONE`] of `base` with a random
/// sign, scales in [0.5, 2].
fn joint_near(base: Quatd) -> impl Strategy<Value = Trsd> + Clone {
    (in_box(2.0), rotation_within(CONE), any::<bool>(), scale3(2.0, false)).prop_map(
        move |(translation, r, flip, scale)| {
            let q = base * r;
            Trsd { translation, rotation: if flip { -q } else { q }, scale }
        },
    )
}

fn pose_near(bases: &[Quatd]) -> Vec<impl Strategy<Value = Trsd> + Clone> {
    bases.iter().map(|&b| joint_near(b)).collect()
}

/// A rest pose and `layers` layer poses over 1 to 6 joints, every joint's rotations within
/// [`CONE`] of one base.
#[derive(Clone, Debug)]
struct BlendCase {
    rest: Vec<Trsd>,
    layers: Vec<Vec<Trsd>>,
}

fn blend_case(layers: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = BlendCase> {
    (vec(unit_quat(), 1..=6), layers).prop_flat_map(|(bases, n)| {
        (pose_near(&bases), vec(pose_near(&bases), n)).prop_map(|(rest, layers)| BlendCase { rest, layers })
    })
}

/// Runs the blending job; panics on a validation error (the inputs are valid by construction).
fn run_blend<R: Real>(
    layers: &[Layer<'_, R>],
    additive: &[Layer<'_, R>],
    rest: &[SoaTransform<R>],
    threshold: R,
) -> Vec<SoaTransform<R>> {
    let mut out = vec![SoaTransform::IDENTITY; rest.len()];
    BlendingJob { layers, additive, rest_pose: rest, threshold, output: &mut out }.run().unwrap();
    out
}

/// The documented normal blend of one joint, in `f64`: the terms (pose, effective weight) are
/// added in order, each rotation brought into the hemisphere of the running sum, the rest pose
/// fills in with `threshold − W` when the total `W` is below the threshold, translation and
/// scale are divided by the total and the rotation sum is normalized.
#[derive(Clone, Debug)]
struct Blended {
    pose: Trsd,
    /// The terms with a non-zero weight, the rest pose included when it filled in.
    terms: Vec<(Trsd, f64)>,
    /// Whether the rest pose filled in.
    rest_used: bool,
    /// `|Σ ±w·q|`, the norm of the rotation sum before normalization.
    sum_norm: f64,
}

fn blend_ref(layers: &[(Trsd, f64)], rest: &Trsd, threshold: f64) -> Blended {
    let mut terms: Vec<(Trsd, f64)> = layers.iter().copied().filter(|&(_, w)| w > 0.0).collect();
    let total: f64 = terms.iter().map(|&(_, w)| w).sum();
    let rest_used = total < threshold;
    if rest_used {
        terms.push((*rest, threshold - total));
    }
    let (mut t, mut s, mut q, mut w_sum) = (Vec3d::ZERO, Vec3d::ZERO, Quatd::ZERO, 0.0);
    for &(p, w) in &terms {
        t = t + p.translation * w;
        s = s + p.scale * w;
        q = q + if q.dot(p.rotation) < 0.0 { -p.rotation } else { p.rotation } * w;
        w_sum += w;
    }
    let sum_norm = q.length();
    let pose = Trsd { translation: t * (1.0 / w_sum), rotation: q * (1.0 / sum_norm), scale: s * (1.0 / w_sum) };
    Blended { pose, terms, rest_used, sum_norm }
}

/// Error bounds of one blended joint.
#[derive(Clone, Copy, Debug)]
struct PoseBound {
    /// Largest translation component error.
    translation: f64,
    /// Rotation angle (radians).
    rotation: f64,
    /// Largest scale component error.
    scale: f64,
    /// | |q| − 1 | of the output rotation.
    norm: f64,
}

impl std::ops::Add for PoseBound {
    type Output = PoseBound;
    fn add(self, o: PoseBound) -> PoseBound {
        PoseBound {
            translation: self.translation + o.translation,
            rotation: self.rotation + o.rotation,
            scale: self.scale + o.scale,
            norm: self.norm + o.norm,
        }
    }
}

/// How the blend divides by the total weight and the rotation sum's norm.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Normalization {
    /// As the job does it: multiplies by rounded reciprocals `1/W` and `1/|Σ|`.
    Reciprocal,
    /// At the scalar's precision: a division (or, for `f32`, a reciprocal, whose relative
    /// error is already half an ulp).
    Division,
}

/// First-order bound of the blending job's error on one joint against [`blend_ref`] of the same
/// rounded inputs.
///
/// With `n` terms of weights `wᵢ` (total `W`) and values of magnitude at most `T`:
/// - the weighted sum `Σ wᵢ·xᵢ` carries one rounding per product (`rnd(wᵢT)`) and per addition
///   (`rnd(WT)`);
/// - the total weight carries `n` roundings of magnitude `W` (its sum, and the rest weight
///   `threshold − W`): a relative error `n·rnd(W)/W` of the mean;
/// - an error `δ` on the rest weight moves the mean by at most `δ·2T/W`;
/// - the division rounds once more (`rnd(T)`); with [`Normalization::Reciprocal`] the rounded
///   `1/W` (off by `rnd(1/W)`) also multiplies a sum of size `W·T`.
///
/// The rotation sum's components carry `2n` roundings of magnitude `W` (plus the rest weight's
/// error); its 4D direction moves by the error's norm (twice a component's) over `|Σ|`, the four
/// products of the normalization add `2·rnd(1)`, and a rotation angle is twice a 4D angle. Its
/// norm is off by the relative error of `1/|Σ|` ([`recip_len_err`] or [`inv_len_err`]) and the
/// four products (`2·rnd(1)`).
fn blend_bound<R: ExactF64>(b: &Blended, how: Normalization) -> PoseBound {
    let n = b.terms.len() as f64;
    let w: f64 = b.terms.iter().map(|&(_, w)| w).sum();
    let weight_err = n * rnd::<R>(w);
    let rest_err = if b.rest_used { weight_err } else { 0.0 };
    // Q16 divides (by the total weight, then by the rotation sum's length) whatever `how` says.
    let how = if R::FIXED_POINT { Normalization::Division } else { how };
    let recip_err = if how == Normalization::Reciprocal { rnd::<R>(1.0 / w) } else { 0.0 };
    let value = |mag: f64| {
        let sum_err: f64 =
            b.terms.iter().map(|&(_, wi)| rnd::<R>(wi * mag)).sum::<f64>() + (n - 1.0) * rnd::<R>(w * mag);
        sum_err / w + mag * weight_err / w + w * mag * recip_err + rnd::<R>(mag) + rest_err * 2.0 * mag / w
    };
    let t_mag = b.terms.iter().map(|(p, _)| p.translation.max_abs()).fold(0.0, f64::max);
    let s_mag = b.terms.iter().map(|(p, _)| p.scale.max_abs()).fold(0.0, f64::max);
    // Q16 first divides the rotation sum by W (one more rounding per component, `rnd(1)` on
    // the quotient, `W·rnd(1)` in units of the sum) and normalizes the quotient, whose length
    // is |Σ|/W.
    let (component_err, len) = if R::FIXED_POINT {
        (2.0 * n * rnd::<R>(w) + rest_err + w * rnd::<R>(1.0), b.sum_norm / w)
    } else {
        (2.0 * n * rnd::<R>(w) + rest_err, b.sum_norm)
    };
    let dir4 = 2.0 * component_err / b.sum_norm + 2.0 * rnd::<R>(1.0);
    let len_err = match how {
        Normalization::Reciprocal => recip_len_err::<R>(len, 4),
        Normalization::Division => inv_len_err::<R>(len, 4),
    };
    PoseBound {
        translation: value(t_mag),
        rotation: 2.0 * dir4,
        scale: value(s_mag),
        norm: len_err + 2.0 * rnd::<R>(1.0),
    }
}

/// Checks one joint of a blend result against an expected pose.
fn check_pose(got: &Trsd, want: &Trsd, bound: &PoseBound, what: &str) -> Result<(), TestCaseError> {
    let (et, es) = (diff3(got.translation, want.translation), diff3(got.scale, want.scale));
    let er = angle(got.rotation, want.rotation);
    prop_assert!(et <= bound.translation, "{what}: translation off by {et:e} > {:e}", bound.translation);
    prop_assert!(er <= bound.rotation, "{what}: rotation off by {er:e} rad > {:e}", bound.rotation);
    prop_assert!(es <= bound.scale, "{what}: scale off by {es:e} > {:e}", bound.scale);
    Ok(())
}

/// The per-joint effective weight `max(weight, 0) · clamp(jw, 0, 1)`, computed in `R` as the job
/// does (it is an input to the blend, not something under test).
fn effective<R: ExactF64>(weight: R, jw: Option<R>) -> f64 {
    let base = weight.max(R::ZERO);
    real_to_f64(jw.map_or(base, |j| base * j.max(R::ZERO).min(R::ONE)))
}

/// Scaling every layer weight by the same positive factor leaves the blend unchanged. Weights
/// are `m/64` and the factor `c/8`, so the scaled weights `c·m/512` are exact in both scalars
/// and the two runs blend exactly proportional weights.
fn prop_weight_scale<R: ExactF64>(case: &BlendCase, m: &[u32], c: u32) -> Result<(), TestCaseError> {
    let threshold = R::ratio(1, 32);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|p| round_pose::<R>(p)).collect();
    let w1: Vec<R> = m.iter().map(|&m| R::ratio(m as i32, 64)).collect();
    let w2: Vec<R> = m.iter().map(|&m| R::ratio((c * m) as i32, 512)).collect();
    let mk = |w: &[R]| -> Vec<SoaTransform<R>> {
        let layers: Vec<Layer<R>> = poses.iter().zip(w).map(|((p, _), &w)| Layer::new(p, w)).collect();
        run_blend(&layers, &[], &rest, threshold)
    };
    let (o1, o2) = (mk(&w1), mk(&w2));
    for j in 0..case.rest.len() {
        let terms =
            |w: &[R]| -> Vec<(Trsd, f64)> { poses.iter().zip(w).map(|((_, d), &w)| (d[j], real_to_f64(w))).collect() };
        let b1 = blend_ref(&terms(&w1), &rest_d[j], real_to_f64(threshold));
        let b2 = blend_ref(&terms(&w2), &rest_d[j], real_to_f64(threshold));
        // Both runs are within their bounds of the same exact blend.
        let bound = blend_bound::<R>(&b1, Normalization::Reciprocal) + blend_bound::<R>(&b2, Normalization::Reciprocal);
        check_pose(&joint_of(&o2, j), &joint_of(&o1, j), &bound, &format!("joint {j}, weights ×{c}/8"))?;
    }
    Ok(())
}

/// One layer whose weight reaches the threshold returns that layer's pose (the rest pose gets
/// the weight `max(threshold − w, 0) = 0`).
fn prop_single_layer<R: ExactF64>(case: &BlendCase, weight: f64, fraction: f64) -> Result<(), TestCaseError> {
    let (w, wd) = round::<R>(weight);
    // `w · fraction` with `fraction ≤ 1` rounds to at most `w`: the threshold is reached.
    let threshold = w * real_from_f64::<R>(fraction);
    prop_assume!(threshold > R::ZERO);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let (pose, pose_d) = round_pose::<R>(&case.layers[0]);
    let out = run_blend(&[Layer::new(&pose, w)], &[], &rest, threshold);
    for j in 0..case.rest.len() {
        let b = blend_ref(&[(pose_d[j], wd)], &rest_d[j], real_to_f64(threshold));
        prop_assert!(!b.rest_used);
        check_pose(
            &joint_of(&out, j),
            &pose_d[j],
            &blend_bound::<R>(&b, Normalization::Reciprocal),
            &format!("joint {j}"),
        )?;
    }
    Ok(())
}

/// `N` layers holding the same pose (rotations of either sign) return that pose.
fn prop_identical_layers<R: ExactF64>(case: &BlendCase, weights: &[f64], flips: &[bool]) -> Result<(), TestCaseError> {
    let threshold = R::ratio(1, 10);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = flips
        .iter()
        .map(|&flip| {
            let p: Vec<Trsd> = case.layers[0]
                .iter()
                .map(|t| Trsd { rotation: if flip { -t.rotation } else { t.rotation }, ..*t })
                .collect();
            round_pose::<R>(&p)
        })
        .collect();
    let w: Vec<(R, f64)> = weights.iter().map(|&w| round::<R>(w)).collect();
    let layers: Vec<Layer<R>> = poses.iter().zip(&w).map(|((p, _), &(w, _))| Layer::new(p, w)).collect();
    let out = run_blend(&layers, &[], &rest, threshold);
    for j in 0..case.rest.len() {
        let terms: Vec<(Trsd, f64)> = poses.iter().zip(&w).map(|((_, d), &(_, wd))| (d[j], wd)).collect();
        let b = blend_ref(&terms, &rest_d[j], real_to_f64(threshold));
        check_pose(
            &joint_of(&out, j),
            &poses[0].1[j],
            &blend_bound::<R>(&b, Normalization::Reciprocal),
            &format!("joint {j}"),
        )?;
    }
    Ok(())
}

/// Arbitrary layers over 1 to 9 joints: any rotations, weights, optional per-joint weights in
/// [−0.5, 1.5] (clamped by the job), a threshold in [0.05, 2].
#[derive(Clone, Debug)]
struct FreeBlendCase {
    rest: Vec<Trsd>,
    layers: Vec<(Vec<Trsd>, f64, Option<Vec<f64>>)>,
    threshold: f64,
}

fn free_blend_case(weight: impl Strategy<Value = f64> + Clone + 'static) -> impl Strategy<Value = FreeBlendCase> {
    (1..=9usize, 1..=4usize).prop_flat_map(move |(joints, n)| {
        let pose = vec(trs(2.0, 2.0, false), joints);
        let jw = prop::option::of(vec(-0.5..=1.5f64, joints.div_ceil(4) * 4));
        (pose.clone(), vec((pose, weight.clone(), jw), n), 0.05..=2.0f64)
            .prop_map(|(rest, layers, threshold)| FreeBlendCase { rest, layers, threshold })
    })
}

/// Blends a [`FreeBlendCase`] and checks every joint's rotation norm (and, with `values`, its
/// translation and scale against [`blend_ref`]) within the bound of `how`.
fn prop_free_blend<R: ExactF64>(case: &FreeBlendCase, how: Normalization, values: bool) -> Result<(), TestCaseError> {
    let (threshold, threshold_d) = round::<R>(case.threshold);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|(p, _, _)| round_pose::<R>(p)).collect();
    let weights: Vec<R> = case.layers.iter().map(|&(_, w, _)| real_from_f64(w)).collect();
    let jws: Vec<Option<Vec<[R; 4]>>> = case
        .layers
        .iter()
        .map(|(_, _, jw)| {
            jw.as_ref().map(|v| v.chunks(4).map(|c| std::array::from_fn(|l| real_from_f64(c[l]))).collect())
        })
        .collect();
    let layers: Vec<Layer<R>> = (0..poses.len())
        .map(|i| Layer { transform: &poses[i].0, weight: weights[i], joint_weights: jws[i].as_deref() })
        .collect();
    let out = run_blend(&layers, &[], &rest, threshold);
    for j in 0..case.rest.len() {
        let terms: Vec<(Trsd, f64)> = (0..poses.len())
            .map(|i| (poses[i].1[j], effective(weights[i], jws[i].as_ref().map(|v| v[j / 4][j % 4]))))
            .collect();
        let b = blend_ref(&terms, &rest_d[j], threshold_d);
        let bound = blend_bound::<R>(&b, how);
        let got = joint_of(&out, j);
        let norm_err = (got.rotation.length() - 1.0).abs();
        prop_assert!(norm_err <= bound.norm, "joint {j}: | |q| − 1 | = {norm_err:e} > {:e}", bound.norm);
        if values {
            let (et, es) = (diff3(got.translation, b.pose.translation), diff3(got.scale, b.pose.scale));
            prop_assert!(et <= bound.translation, "joint {j}: translation off by {et:e} > {:e}", bound.translation);
            prop_assert!(es <= bound.scale, "joint {j}: scale off by {es:e} > {:e}", bound.scale);
        }
    }
    Ok(())
}

/// Two layers: the blended translation (and scale) is the point of the segment between the
/// layers' at the normalized weight `w_b / (w_a + w_b)`.
fn prop_two_layer_segment<R: ExactF64>(case: &BlendCase, wa: f64, wb: f64) -> Result<(), TestCaseError> {
    let threshold = R::ratio(1, 10);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let (pa, da) = round_pose::<R>(&case.layers[0]);
    let (pb, db) = round_pose::<R>(&case.layers[1]);
    let ((wa, wad), (wb, wbd)) = (round::<R>(wa), round::<R>(wb));
    let out = run_blend(&[Layer::new(&pa, wa), Layer::new(&pb, wb)], &[], &rest, threshold);
    let alpha = wbd / (wad + wbd);
    for j in 0..case.rest.len() {
        let b = blend_ref(&[(da[j], wad), (db[j], wbd)], &rest_d[j], real_to_f64(threshold));
        let bound = blend_bound::<R>(&b, Normalization::Reciprocal);
        let got = joint_of(&out, j);
        let on_segment = |a: Vec3d, b: Vec3d| a + (b - a) * alpha;
        let et = diff3(got.translation, on_segment(da[j].translation, db[j].translation));
        let es = diff3(got.scale, on_segment(da[j].scale, db[j].scale));
        prop_assert!(
            et <= bound.translation,
            "joint {j}: translation {et:e} off the segment point (bound {:e})",
            bound.translation
        );
        prop_assert!(es <= bound.scale, "joint {j}: scale {es:e} off the segment point (bound {:e})", bound.scale);
    }
    Ok(())
}

/// A layer whose per-joint weight is 0 (or negative, which clamps to 0) at a joint is ignored
/// there: the result is the same as without that layer, exactly, because a zero weight adds
/// exact zeros to every sum and to the total weight.
fn prop_zero_joint_weight<R: ExactF64>(
    case: &BlendCase,
    weights: &[f64],
    ignored: usize,
    jw: &[f64],
    threshold: f64,
) -> Result<(), TestCaseError> {
    let threshold = real_from_f64::<R>(threshold);
    let (rest, _) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|p| round_pose::<R>(p)).collect();
    let jw_r: Vec<[R; 4]> = jw.chunks(4).map(|c| std::array::from_fn(|l| real_from_f64(c[l]))).collect();
    let layer = |i: usize| Layer {
        transform: &poses[i].0,
        weight: real_from_f64(weights[i]),
        joint_weights: (i == ignored).then_some(&jw_r[..]),
    };
    let with: Vec<Layer<R>> = (0..poses.len()).map(layer).collect();
    let without: Vec<Layer<R>> = (0..poses.len()).filter(|&i| i != ignored).map(layer).collect();
    let (a, b) = (run_blend(&with, &[], &rest, threshold), run_blend(&without, &[], &rest, threshold));
    // Exact with the build's own kernels. The x86-64-v3 kernels chosen at run time blend two
    // layers of uniform weight (`without`, for two layers left) with the eight-lane kernel,
    // which divides the weights first and rounds differently from the per-layer passes
    // (`with`): there, within a few units of f32 rounding.
    let exact = R::FIXED_POINT || sinew::kernels::active() == sinew::kernels::Kernels::Build;
    for j in 0..case.rest.len() {
        if jw[j] <= 0.0 {
            let (x, y) = (joint_of(&a, j), joint_of(&b, j));
            if exact {
                // Compared as f64 values (so +0 equals −0).
                prop_assert_eq!(x, y, "joint {} (per-joint weight {})", j, jw[j]);
            } else {
                // Translations and scales within 4 in magnitude: 4e-6 relative.
                let d = diff3(x.translation, y.translation).max(diff3(x.scale, y.scale));
                let turn = angle(x.rotation, y.rotation);
                prop_assert!(
                    d <= 1.6e-5 && turn <= 1e-5,
                    "joint {} (per-joint weight {}): {:?} vs {:?}",
                    j,
                    jw[j],
                    x,
                    y
                );
            }
        }
    }
    Ok(())
}

/// The order of the layers does not matter (rotations within a cone, so every hemisphere
/// decision is the same in any order).
fn prop_layer_order<R: ExactF64>(
    case: &BlendCase,
    weights: &[f64],
    order: &[usize],
    threshold: f64,
) -> Result<(), TestCaseError> {
    let (threshold, threshold_d) = round::<R>(threshold);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|p| round_pose::<R>(p)).collect();
    let w: Vec<(R, f64)> = weights.iter().map(|&w| round::<R>(w)).collect();
    let run = |idx: &mut dyn Iterator<Item = usize>| {
        let layers: Vec<Layer<R>> = idx.map(|i| Layer::new(&poses[i].0, w[i].0)).collect();
        run_blend(&layers, &[], &rest, threshold)
    };
    let a = run(&mut (0..poses.len()));
    let b = run(&mut order.iter().copied());
    for j in 0..case.rest.len() {
        let terms: Vec<(Trsd, f64)> = (0..poses.len()).map(|i| (poses[i].1[j], w[i].1)).collect();
        let shuffled: Vec<(Trsd, f64)> = order.iter().map(|&i| terms[i]).collect();
        let bound = blend_bound::<R>(&blend_ref(&terms, &rest_d[j], threshold_d), Normalization::Reciprocal)
            + blend_bound::<R>(&blend_ref(&shuffled, &rest_d[j], threshold_d), Normalization::Reciprocal);
        check_pose(&joint_of(&b, j), &joint_of(&a, j), &bound, &format!("joint {j}, order {order:?}"))?;
    }
    Ok(())
}

/// An additive layer of weight 0 changes nothing (the job skips it: exact), and an additive
/// delta of a pose against itself changes nothing at any weight: its translation delta is
/// exactly 0 and its scale delta exactly 1, so translation and scale are unchanged exactly, and
/// its rotation delta `q·q*` is the identity up to rounding.
fn prop_additive_identity<R: ExactF64>(case: &BlendCase, delta: &[Trsd], weight: f64) -> Result<(), TestCaseError> {
    let threshold = R::ratio(1, 10);
    let (rest, _) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|p| round_pose::<R>(p)).collect();
    let layers: Vec<Layer<R>> = poses.iter().map(|(p, _)| Layer::new(p, R::ONE)).collect();
    let base = run_blend(&layers, &[], &rest, threshold);

    let (d, _) = round_pose::<R>(&delta[..case.rest.len()]);
    let zero = run_blend(&layers, &[Layer::new(&d, R::ZERO)], &rest, threshold);
    for j in 0..case.rest.len() {
        prop_assert_eq!(joint_of(&zero, j), joint_of(&base, j), "joint {}: additive of weight 0", j);
    }

    // The delta of the base pose against itself, applied with any weight.
    let mut self_delta = vec![SoaTransform::IDENTITY; base.len()];
    MakeAdditiveJob { pose: &base, reference: &base, output: &mut self_delta }.run().unwrap();
    let (w, wd) = round::<R>(weight);
    let out = run_blend(&layers, &[Layer::new(&self_delta, w)], &rest, threshold);
    // Rotation: `q·q*` has vector components of at most 7 roundings each (four products, three
    // sums, all of magnitude ≤ 1), so its normalized delta is at most √3·7·rnd(1) from the
    // identity in 4D; `nlerp(identity, delta, |w|)` scales that by |w| and adds a rounding per
    // component; the product with the pose adds 7 roundings per component (4D: twice that) and
    // its normalization two more (4D). A rotation angle is twice a 4D angle.
    let r1 = rnd::<R>(1.0);
    let dir4 = 3f64.sqrt() * (7.0 * r1 * wd.abs().max(1.0) + r1) + 2.0 * 7.0 * r1 + 2.0 * r1;
    let rot_bound = 2.0 * dir4;
    for j in 0..case.rest.len() {
        let (g, e) = (joint_of(&out, j), joint_of(&base, j));
        prop_assert_eq!(g.translation, e.translation, "joint {}: translation moved by a self delta", j);
        prop_assert_eq!(g.scale, e.scale, "joint {}: scale changed by a self delta", j);
        let er = angle(g.rotation, e.rotation);
        prop_assert!(er <= rot_bound, "joint {j}: a self delta rotated by {er:e} rad > {rot_bound:e}");
        // `make_additive` itself: translation 0 and scale 1, exactly.
        let m = make_additive(&base[j / 4].lane(j % 4), &base[j / 4].lane(j % 4));
        prop_assert!(m.translation == Vec3::ZERO && m.scale == Vec3::ONE, "joint {j}: self delta {m:?}");
    }
    Ok(())
}

/// Below the threshold the rest pose fills in with the weight `threshold − W`, as documented.
fn prop_below_threshold<R: ExactF64>(case: &BlendCase, fractions: &[f64], threshold: f64) -> Result<(), TestCaseError> {
    let (threshold, threshold_d) = round::<R>(threshold);
    let n = fractions.len() as f64;
    let w: Vec<(R, f64)> = fractions.iter().map(|&f| round::<R>(threshold_d * f / n)).collect();
    prop_assume!(w.iter().map(|&(_, d)| d).sum::<f64>() < threshold_d);
    let (rest, rest_d) = round_pose::<R>(&case.rest);
    let poses: Vec<_> = case.layers.iter().map(|p| round_pose::<R>(p)).collect();
    let layers: Vec<Layer<R>> = poses.iter().zip(&w).map(|((p, _), &(w, _))| Layer::new(p, w)).collect();
    let out = run_blend(&layers, &[], &rest, threshold);
    for j in 0..case.rest.len() {
        let terms: Vec<(Trsd, f64)> = poses.iter().zip(&w).map(|((_, d), &(_, wd))| (d[j], wd)).collect();
        let b = blend_ref(&terms, &rest_d[j], threshold_d);
        prop_assert!(b.rest_used);
        check_pose(
            &joint_of(&out, j),
            &b.pose,
            &blend_bound::<R>(&b, Normalization::Reciprocal),
            &format!("joint {j}"),
        )?;
    }
    Ok(())
}

/// Weight numerators (`m/64`, 0.25 to 2) for the scaling property.
fn weight_numerators() -> impl Strategy<Value = (BlendCase, Vec<u32>, u32)> {
    blend_case(1..=4).prop_flat_map(|case| {
        let n = case.layers.len();
        (Just(case), vec(16..=128u32, n), 2..=32u32)
    })
}

fn blend_weights(layers: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = (BlendCase, Vec<f64>)> {
    blend_case(layers).prop_flat_map(|case| {
        let n = case.layers.len();
        (Just(case), vec(0.25..=2.0f64, n))
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn blend_weight_scale_is_irrelevant_f32((case, m, c) in weight_numerators()) {
        prop_weight_scale::<f32>(&case, &m, c)?;
    }
    #[test]
    fn blend_weight_scale_is_irrelevant_q16((case, m, c) in weight_numerators()) {
        prop_weight_scale::<Q16>(&case, &m, c)?;
    }

    #[test]
    fn blend_single_layer_returns_its_pose_f32(case in blend_case(1..=1), w in 0.05..=4.0f64, f in 0.05..=1.0f64) {
        prop_single_layer::<f32>(&case, w, f)?;
    }
    #[test]
    fn blend_single_layer_returns_its_pose_q16(case in blend_case(1..=1), w in 0.05..=4.0f64, f in 0.05..=1.0f64) {
        prop_single_layer::<Q16>(&case, w, f)?;
    }

    #[test]
    fn blend_identical_layers_return_the_pose_f32(
        (case, w) in blend_weights(1..=1),
        extra in vec((0.25..=2.0f64, any::<bool>()), 0..=3),
    ) {
        let weights: Vec<f64> = w.iter().copied().chain(extra.iter().map(|e| e.0)).collect();
        let flips: Vec<bool> = std::iter::once(false).chain(extra.iter().map(|e| e.1)).collect();
        prop_identical_layers::<f32>(&case, &weights, &flips)?;
    }
    #[test]
    fn blend_identical_layers_return_the_pose_q16(
        (case, w) in blend_weights(1..=1),
        extra in vec((0.25..=2.0f64, any::<bool>()), 0..=3),
    ) {
        let weights: Vec<f64> = w.iter().copied().chain(extra.iter().map(|e| e.0)).collect();
        let flips: Vec<bool> = std::iter::once(false).chain(extra.iter().map(|e| e.1)).collect();
        prop_identical_layers::<Q16>(&case, &weights, &flips)?;
    }

    #[test]
    fn blend_rotations_are_unit_f32(case in free_blend_case(-0.5..=2.0f64)) {
        prop_free_blend::<f32>(&case, Normalization::Reciprocal, false)?;
    }
    #[test]
    fn blend_rotations_are_unit_q16(case in free_blend_case(-0.5..=2.0f64)) {
        prop_free_blend::<Q16>(&case, Normalization::Reciprocal, false)?;
    }

    /// Layer weights may be any positive value ("normalized by their sum"): with weights up to
    /// 256 the blend still meets the scalar's precision (bounds of [`Normalization::Division`],
    /// independent of the total weight).
    #[test]
    fn blend_large_weights_keep_the_scalar_precision_f32(case in free_blend_case(log_uniform(256.0))) {
        prop_free_blend::<f32>(&case, Normalization::Division, true)?;
    }
    #[test]
    fn blend_large_weights_keep_the_scalar_precision_q16(case in free_blend_case(log_uniform(256.0))) {
        prop_free_blend::<Q16>(&case, Normalization::Division, true)?;
    }

    #[test]
    fn blend_two_layers_lie_on_the_segment_f32(case in blend_case(2..=2), wa in 0.25..=2.0f64, wb in 0.25..=2.0f64) {
        prop_two_layer_segment::<f32>(&case, wa, wb)?;
    }
    #[test]
    fn blend_two_layers_lie_on_the_segment_q16(case in blend_case(2..=2), wa in 0.25..=2.0f64, wb in 0.25..=2.0f64) {
        prop_two_layer_segment::<Q16>(&case, wa, wb)?;
    }

    #[test]
    fn blend_zero_joint_weight_ignores_the_layer_f32(
        ((case, w), ignored, jw, th) in blend_weights(2..=4).prop_flat_map(|(case, w)| {
            let n = case.layers.len();
            let slots = case.rest.len().div_ceil(4) * 4;
            (Just((case, w)), 0..n, vec(prop_oneof![Just(0.0), -1.0..0.0f64, 0.0..=1.5f64], slots), 0.05..=3.0f64)
        }),
    ) {
        prop_zero_joint_weight::<f32>(&case, &w, ignored, &jw, th)?;
    }
    #[test]
    fn blend_zero_joint_weight_ignores_the_layer_q16(
        ((case, w), ignored, jw, th) in blend_weights(2..=4).prop_flat_map(|(case, w)| {
            let n = case.layers.len();
            let slots = case.rest.len().div_ceil(4) * 4;
            (Just((case, w)), 0..n, vec(prop_oneof![Just(0.0), -1.0..0.0f64, 0.0..=1.5f64], slots), 0.05..=3.0f64)
        }),
    ) {
        prop_zero_joint_weight::<Q16>(&case, &w, ignored, &jw, th)?;
    }

    #[test]
    fn blend_layer_order_is_irrelevant_f32(
        ((case, w), order, th) in blend_weights(2..=4).prop_flat_map(|(case, w)| {
            let n = case.layers.len();
            (Just((case, w)), Just((0..n).collect::<Vec<usize>>()).prop_shuffle(), 0.05..=3.0f64)
        }),
    ) {
        prop_layer_order::<f32>(&case, &w, &order, th)?;
    }
    #[test]
    fn blend_layer_order_is_irrelevant_q16(
        ((case, w), order, th) in blend_weights(2..=4).prop_flat_map(|(case, w)| {
            let n = case.layers.len();
            (Just((case, w)), Just((0..n).collect::<Vec<usize>>()).prop_shuffle(), 0.05..=3.0f64)
        }),
    ) {
        prop_layer_order::<Q16>(&case, &w, &order, th)?;
    }

    #[test]
    fn blend_additive_identities_f32(
        case in blend_case(1..=3),
        delta in vec((in_box(0.5), unit_quat(), scale3(1.25, false)), 6),
        w in -1.5..=1.5f64,
    ) {
        let delta: Vec<Trsd> = delta.into_iter().map(|(t, q, s)| Trsd { translation: t, rotation: q, scale: s }).collect();
        prop_additive_identity::<f32>(&case, &delta, w)?;
    }
    #[test]
    fn blend_additive_identities_q16(
        case in blend_case(1..=3),
        delta in vec((in_box(0.5), unit_quat(), scale3(1.25, false)), 6),
        w in -1.5..=1.5f64,
    ) {
        let delta: Vec<Trsd> = delta.into_iter().map(|(t, q, s)| Trsd { translation: t, rotation: q, scale: s }).collect();
        prop_additive_identity::<Q16>(&case, &delta, w)?;
    }

    #[test]
    fn blend_below_threshold_fills_in_the_rest_pose_f32(
        (case, f) in blend_case(1..=3).prop_flat_map(|case| {
            let n = case.layers.len();
            (Just(case), vec(0.0..1.0f64, n))
        }),
        th in 0.5..=3.0f64,
    ) {
        prop_below_threshold::<f32>(&case, &f, th)?;
    }
    #[test]
    fn blend_below_threshold_fills_in_the_rest_pose_q16(
        (case, f) in blend_case(1..=3).prop_flat_map(|case| {
            let n = case.layers.len();
            (Just(case), vec(0.0..1.0f64, n))
        }),
        th in 0.5..=3.0f64,
    ) {
        prop_below_threshold::<Q16>(&case, &f, th)?;
    }
}

// -------------------------------------------------------------------------------------------------
// 2. Quaternion paths
// -------------------------------------------------------------------------------------------------

/// The three interpolations of `Quat`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Slerp,
    Nlerp,
    NlerpCorrected,
}

const PATHS: [Path; 3] = [Path::Slerp, Path::Nlerp, Path::NlerpCorrected];

impl Path {
    fn run<R: Real>(self, a: Quat<R>, b: Quat<R>, t: R) -> Quat<R> {
        match self {
            Path::Slerp => a.slerp(b, t),
            Path::Nlerp => a.nlerp(b, t),
            Path::NlerpCorrected => a.nlerp_corrected(b, t),
        }
    }
}

/// Two rotations and two parameters. `b = ±a·r` with `r` a rotation by `π·x³` (so small
/// angles, where slerp switches to nlerp, are common, and shrinking leads to `b = a`).
#[derive(Clone, Debug)]
struct PathCase {
    a: Quatd,
    b: Quatd,
    t: f64,
    t2: f64,
}

fn path_case() -> impl Strategy<Value = PathCase> {
    let t = prop_oneof![1 => Just(0.0), 1 => Just(1.0), 8 => 0.0..=1.0f64];
    (unit_quat(), direction(), 0.0..=1.0f64, any::<bool>(), t, 0.0..=1.0f64).prop_map(|(a, axis, x, flip, t, t2)| {
        let b = a * Quatd::from_axis_angle(axis, PI * x * x * x);
        PathCase { a, b: if flip { -b } else { b }, t, t2 }
    })
}

/// A case rounded to `R`: the inputs, their rounded values, and the end on the arc the code
/// picks (`b`, or `−b` when `a · b < 0` computed in `R`, as documented).
struct PathInputs<R> {
    a: Quat<R>,
    b: Quat<R>,
    ad: Quatd,
    bd: Quatd,
    /// The chosen end, in `f64`.
    ed: Quatd,
    /// How far the chosen end is past the shorter arc: `max(0, −a·e)` in exact arithmetic, not 0
    /// only when `a · b` is within rounding of 0 (then either arc is a valid choice, and the
    /// "shortest" path may be longer by up to `2·asin` of this, in rotation angle).
    overshoot: f64,
}

fn path_inputs<R: ExactF64>(case: &PathCase) -> PathInputs<R> {
    let (a, b) = (quat_from_f64::<R>(case.a), quat_from_f64::<R>(case.b));
    let (ad, bd) = (quat_to_f64(a), quat_to_f64(b));
    let ed = if a.dot(b) < R::ZERO { -bd } else { bd };
    let overshoot = 2.0 * (-ad.dot(ed) / (ad.length() * ed.length())).max(0.0).asin();
    PathInputs { a, b, ad, bd, ed, overshoot }
}

/// Bound on the rotation angle between a path's computed point and the exact point of the same
/// path (for the same rounded inputs and the same `t`), for inputs whose 4D angle is `theta4`.
///
/// - nlerp: `a + (e − a)·t` rounds 3 times per component (values ≤ 2), a 4D error of
///   `2·3·rnd(2)` on a vector of length at least `cos(θ/2)` (the chord's midpoint); the
///   normalization's four products add `2·rnd(1)`, and the inputs' own deviation from unit length
///   tilts the chord by at most the sum of the two deviations;
/// - corrected nlerp: the same, plus the error of the warped parameter `t'` times the chord
///   length `2·sin(θ/2) ≤ √2`. The warp is about a dozen rounded multiply-adds on values up to 4
///   (its coefficients reach 3.3): `16·rnd(4)`;
/// - slerp (above a 4D angle of 0.01): the direction of `sin((1−t)θ)·a + sin(tθ)·e` moves by at
///   most the two sines' errors (each is weighted by `sin(·)/sin θ ≤ 1`), by at most a quarter of
///   the angle's error (the point's sensitivity to `θ` is `|t(1−t)(1−2t)|·θ²/3 ≤ 0.11` for
///   θ ≤ π/2), by `4·rnd(2)` for the sines' arguments and `rnd(1)` for `θ`'s input; the
///   products with `1/sin θ` (a common factor: only the norm) and the combination add
///   `2·rnd(1) + 6·rnd(2)`, the normalization `2·rnd(1)`. Below 0.01 slerp is nlerp, whose exact
///   path differs from slerp's by the f64-computed deviation, added by the accuracy check.
///
/// A rotation angle is twice a 4D angle.
fn path_error<R: ExactF64>(path: Path, inputs: &PathInputs<R>) -> f64 {
    let theta4 = inputs.ad.angle_4d(inputs.ed).unwrap_or(0.0);
    let unit_dev = (inputs.ad.length() - 1.0).abs() + (inputs.ed.length() - 1.0).abs();
    let chord_len = (theta4 / 2.0).cos().max(0.5);
    let nlerp4 = (2.0 * 3.0 * rnd::<R>(2.0)) / chord_len + 2.0 * rnd::<R>(1.0) + unit_dev;
    let trig4 = 2.0 * sin_err::<R>()
        + atan2_err::<R>() / 4.0
        + 4.0 * rnd::<R>(2.0)
        + rnd::<R>(1.0)
        + 2.0 * rnd::<R>(1.0)
        + 6.0 * rnd::<R>(2.0)
        + 2.0 * rnd::<R>(1.0)
        + unit_dev;
    let dir4 = match path {
        Path::Nlerp => nlerp4,
        Path::NlerpCorrected => nlerp4 + 2f64.sqrt() * 16.0 * rnd::<R>(4.0) / chord_len,
        Path::Slerp => trig4.max(nlerp4),
    };
    2.0 * dir4
}

/// Bit patterns of a quaternion (distinguishes −0 from +0).
fn bits<R: ExactF64>(q: Quat<R>) -> [u64; 4] {
    q.to_array().map(|v| v.to_f64().to_bits())
}

/// `t = 0` returns `a` and `t = 1` returns `b`, or `−b` when `a · b < 0` (computed in `R`), bit
/// for bit.
fn prop_endpoints<R: ExactF64>(case: &PathCase) -> Result<(), TestCaseError> {
    let p = path_inputs::<R>(case);
    let e = if p.a.dot(p.b) < R::ZERO { -p.b } else { p.b };
    for path in PATHS {
        prop_assert_eq!(bits(path.run(p.a, p.b, R::ZERO)), bits(p.a), "{:?} at t = 0", path);
        prop_assert_eq!(bits(path.run(p.a, p.b, R::ONE)), bits(e), "{:?} at t = 1", path);
    }
    Ok(())
}

/// Every result is a unit quaternion: within the normalization's error of a vector at least as
/// long as the chord's midpoint, or, at `t = 0` and `t = 1`, exactly the (rounded) input.
fn prop_unit<R: ExactF64>(case: &PathCase) -> Result<(), TestCaseError> {
    let p = path_inputs::<R>(case);
    let (t, td) = round::<R>(case.t);
    let theta4 = p.ad.angle_4d(p.ed).unwrap_or(0.0);
    for path in PATHS {
        let r = quat_to_f64(path.run(p.a, p.b, t));
        let bound = if td == 0.0 {
            (p.ad.length() - 1.0).abs()
        } else if td == 1.0 {
            (p.bd.length() - 1.0).abs()
        } else {
            let len = if path == Path::Slerp { 1.0 } else { (theta4 / 2.0).cos().max(0.5) };
            inv_len_err::<R>(len, 4) + 2.0 * rnd::<R>(1.0)
        };
        let e = (r.length() - 1.0).abs();
        prop_assert!(e <= bound, "{path:?} at t = {td}: | |q| − 1 | = {e:e} > {bound:e}");
    }
    Ok(())
}

/// The path takes the shortest arc: the rotation from `a` never exceeds the rotation from `a`
/// to `b`, and grows with `t`.
fn prop_shortest_monotone<R: ExactF64>(case: &PathCase) -> Result<(), TestCaseError> {
    let p = path_inputs::<R>(case);
    let (lo, hi) = if case.t <= case.t2 { (case.t, case.t2) } else { (case.t2, case.t) };
    let ((t1, t1d), (t2, t2d)) = (round::<R>(lo), round::<R>(hi));
    let total = angle(p.ad, p.bd);
    for path in PATHS {
        let err = path_error(path, &p);
        let psi = |t: R| angle(p.ad, quat_to_f64(path.run(p.a, p.b, t)));
        let (psi1, psi2) = (psi(t1), psi(t2));
        prop_assert!(
            psi2 <= total + err + p.overshoot,
            "{path:?} at t = {t2d}: {psi2} rad from a, more than a to b ({total}) + {err:e}"
        );
        prop_assert!(
            psi1 <= psi2 + 2.0 * err + p.overshoot,
            "{path:?}: {psi1} rad from a at t = {t1d}, but only {psi2} at t = {t2d} (bound {:e})",
            2.0 * err
        );
    }
    Ok(())
}

/// `q` and `−q` are the same rotation: negating either input gives the same rotation path.
/// Skipped when `a · b` is within rounding of 0, where the shorter arc is a rounding decision.
fn prop_sign_invariant<R: ExactF64>(case: &PathCase) -> Result<(), TestCaseError> {
    let p = path_inputs::<R>(case);
    // `a · b` is 4 products and 3 sums of magnitude ≤ 1 (7 roundings); the decision is certain
    // beyond twice that.
    prop_assume!(p.ad.dot(p.bd).abs() > 14.0 * rnd::<R>(1.0));
    let (t, td) = round::<R>(case.t);
    for path in PATHS {
        let r = quat_to_f64(path.run(p.a, p.b, t));
        // f32 rounds symmetrically, so negating the inputs negates every intermediate value
        // exactly: the same rotation bit for bit (up to the overall sign). Q16's products round
        // ties upwards, so the two results are only each within `path_error` of the same exact
        // rotation.
        let bound = if R::FIXED_POINT { 2.0 * path_error(path, &p) } else { 0.0 };
        for (what, other) in [("−b", path.run(p.a, -p.b, t)), ("−a", path.run(-p.a, p.b, t))] {
            let e = angle(r, quat_to_f64(other));
            prop_assert!(e <= bound, "{path:?} at t = {td} with {what}: {e:e} rad > {bound:e}");
        }
    }
    Ok(())
}

/// slerp matches an exact `f64` slerp along the same arc; corrected nlerp is within its
/// documented 7e-5 rad of it (`Quat::nlerp_corrected`: the fit's error in exact arithmetic) plus
/// its rounding.
fn prop_accuracy<R: ExactF64>(case: &PathCase) -> Result<(), TestCaseError> {
    let p = path_inputs::<R>(case);
    let (t, td) = round::<R>(case.t);
    let exact = p.ad.slerp_arc(p.ed, td).unwrap_or(p.ad);
    // Where slerp takes its nlerp branch (4D angle below 0.01), the exact nlerp point's deviation
    // from the slerp point, computed in f64 (about 3e-8 rad at most).
    let nlerp_exact = (p.ad.normalized().unwrap_or(p.ad) * (1.0 - td) + p.ed.normalized().unwrap_or(p.ed) * td)
        .normalized()
        .unwrap_or(exact);
    let nlerp_dev = if p.ad.angle_4d(p.ed).unwrap_or(0.0) < 0.011 { angle(nlerp_exact, exact) } else { 0.0 };
    for (path, fit) in [(Path::Slerp, nlerp_dev), (Path::NlerpCorrected, 7.0e-5)] {
        let bound = fit + path_error(path, &p);
        let e = angle(quat_to_f64(path.run(p.a, p.b, t)), exact);
        prop_assert!(e <= bound, "{path:?} at t = {td}: {e:e} rad from the exact slerp > {bound:e}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn quat_path_endpoints_are_exact_f32(case in path_case()) { prop_endpoints::<f32>(&case)?; }
    #[test]
    fn quat_path_endpoints_are_exact_q16(case in path_case()) { prop_endpoints::<Q16>(&case)?; }

    #[test]
    fn quat_path_results_are_unit_f32(case in path_case()) { prop_unit::<f32>(&case)?; }
    #[test]
    fn quat_path_results_are_unit_q16(case in path_case()) { prop_unit::<Q16>(&case)?; }

    #[test]
    fn quat_paths_take_the_shortest_arc_monotonically_f32(case in path_case()) {
        prop_shortest_monotone::<f32>(&case)?;
    }
    #[test]
    fn quat_paths_take_the_shortest_arc_monotonically_q16(case in path_case()) {
        prop_shortest_monotone::<Q16>(&case)?;
    }

    #[test]
    fn quat_paths_ignore_input_signs_f32(case in path_case()) { prop_sign_invariant::<f32>(&case)?; }
    #[test]
    fn quat_paths_ignore_input_signs_q16(case in path_case()) { prop_sign_invariant::<Q16>(&case)?; }

    #[test]
    fn quat_slerp_and_corrected_nlerp_match_f64_slerp_f32(case in path_case()) {
        prop_accuracy::<f32>(&case)?;
    }
    #[test]
    fn quat_slerp_and_corrected_nlerp_match_f64_slerp_q16(case in path_case()) {
        prop_accuracy::<Q16>(&case)?;
    }
}

// -------------------------------------------------------------------------------------------------
// 3. Hierarchy
// -------------------------------------------------------------------------------------------------

/// A random skeleton with two poses, an optional root matrix and a partial-update range.
#[derive(Clone, Debug)]
struct HierarchyCase {
    parents: Vec<i16>,
    locals: Vec<Trsd>,
    /// New local transforms for the joints of `from`'s subtree.
    edited: Vec<Trsd>,
    root: Option<Trsd>,
    from: usize,
    /// `to` as a fraction of the joints after `from`, if any.
    to: Option<f64>,
}

fn hierarchy_case<R: Scalar>(uniform_scale: bool) -> impl Strategy<Value = HierarchyCase> {
    (1..=R::MAX_JOINTS).prop_flat_map(move |n| {
        let local = trs(R::MAX_TRANSLATION, R::MAX_SCALE, uniform_scale);
        (
            parents(n),
            vec(local.clone(), n),
            vec(local, n),
            prop::option::of(trs(R::ROOT_TRANSLATION, R::MAX_SCALE, uniform_scale)),
            0..n,
            prop::option::of(0.0..=1.0f64),
        )
            .prop_map(|(parents, locals, edited, root, from, to)| HierarchyCase {
                parents,
                locals,
                edited,
                root,
                from,
                to,
            })
    })
}

fn skeleton<R: ExactF64>(parents: &[i16], rest: &[Transform<R>]) -> Box<Skeleton<R, SOA>> {
    Box::new(Skeleton::new(parents, rest, &vec![""; parents.len()]).unwrap())
}

fn local_to_model<R: ExactF64>(
    skeleton: &Skeleton<R, SOA>,
    input: &[SoaTransform<R>],
    root: Option<&Mat4<R>>,
    output: &mut [Mat4<R>],
    from: Option<usize>,
    to: Option<usize>,
) {
    LocalToModelJob { skeleton: skeleton.view(), root, input, output, from, to }.run().unwrap();
}

/// The local matrix as sinew builds it (`SoaTransform::to_affine_soa`: the quaternion is used as
/// given, not normalized), evaluated exactly in `f64`.
fn sinew_local_matrix(t: &Trsd) -> Mat4d {
    let (q, s) = (t.rotation, t.scale);
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, yy, zz) = (q.x * x2, q.y * y2, q.z * z2);
    let (xy, xz, yz) = (q.x * y2, q.x * z2, q.y * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    Mat4d {
        cols: [
            [(1.0 - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x, 0.0],
            [(xy - wz) * s.y, (1.0 - (xx + zz)) * s.y, (yz + wx) * s.y, 0.0],
            [(xz + wy) * s.z, (yz - wx) * s.z, (1.0 - (xx + yy)) * s.z, 0.0],
            [t.translation.x, t.translation.y, t.translation.z, 1.0],
        ],
    }
}

/// Entry-wise error bound of a local matrix against the reference's `to_matrix()` (which
/// normalizes the rounded quaternion): the deviation of sinew's formula on the unnormalized
/// quaternion, computed exactly, plus its arithmetic. A rotation entry like `(1 − (yy + zz))·s`
/// rounds the two products and the sum (magnitude ≤ 2), the difference (≤ 1) and the scaling:
/// `4·rnd(2)·s + rnd(|entry|)`; translations are copied.
fn local_error<R: ExactF64>(t: &Trsd) -> Mat4d {
    let exact = t.to_matrix();
    let deviation = m_abs(&m_zip(&sinew_local_matrix(t), &exact, |a, b| a - b));
    let s = [t.scale.x.abs(), t.scale.y.abs(), t.scale.z.abs()];
    Mat4d {
        cols: std::array::from_fn(|c| {
            std::array::from_fn(|r| {
                if c < 3 && r < 3 {
                    deviation.cols[c][r] + 4.0 * rnd::<R>(2.0) * s[c] + rnd::<R>(exact.cols[c][r])
                } else {
                    0.0
                }
            })
        }),
    }
}

/// Entry-wise error bound of `parent × local` computed in `R` from a parent that is off by
/// `parent_err`: `parent_err·|L| + |P|·local_err + parent_err·local_err` carried through, plus
/// the product's own roundings — each entry is 3 products and at most 3 sums, `6·rnd` of the
/// entry's `|P|·|L|` (the size of its terms before they cancel).
fn product_error<R: ExactF64>(parent: &Mat4d, parent_err: &Mat4d, local: &Mat4d, local_err: &Mat4d) -> Mat4d {
    let (p, l) = (m_abs(parent), m_abs(local));
    let carried =
        m_zip(&m_zip(&(*parent_err * l), &(p * *local_err), |a, b| a + b), &(*parent_err * *local_err), |a, b| a + b);
    let terms = m_zip(&p, parent_err, |a, b| a + b) * m_zip(&l, local_err, |a, b| a + b);
    m_zip(&carried, &terms, |c, m| c + 6.0 * rnd::<R>(m))
}

/// The reference model matrices of a hierarchy and their entry-wise error bounds.
fn model_with_bounds<R: ExactF64>(parents: &[i16], locals: &[Trsd], root: Option<&Mat4d>) -> (Vec<Mat4d>, Vec<Mat4d>) {
    let model = reference::local_to_model(parents, locals, root).unwrap();
    let root = root.copied().unwrap_or(Mat4d::IDENTITY);
    let zero = Mat4d { cols: [[0.0; 4]; 4] };
    let mut err: Vec<Mat4d> = Vec::with_capacity(locals.len());
    for (j, local) in locals.iter().enumerate() {
        let (p, pe) =
            if parents[j] < 0 { (root, zero) } else { (model[parents[j] as usize], err[parents[j] as usize]) };
        err.push(product_error::<R>(&p, &pe, &local.to_matrix(), &local_error::<R>(local)));
    }
    (model, err)
}

/// Checks every entry of `got` against `want` within `bound`.
fn check_matrices<R: ExactF64>(
    got: &[Mat4<R>],
    want: &[Mat4d],
    bound: &[Mat4d],
    what: &str,
) -> Result<(), TestCaseError> {
    for (j, ((g, w), b)) in got.iter().zip(want).zip(bound).enumerate() {
        let g = mat4_to_f64(g);
        for c in 0..4 {
            for r in 0..4 {
                let e = (g.cols[c][r] - w.cols[c][r]).abs();
                prop_assert!(
                    e <= b.cols[c][r],
                    "{what}: joint {j} entry (row {r}, col {c}) off by {e:e} > {:e}",
                    b.cols[c][r]
                );
            }
        }
    }
    Ok(())
}

/// Model matrices equal the `f64` reference's within the propagated bound.
fn prop_hierarchy_matches_reference<R: Scalar>(case: &HierarchyCase) -> Result<(), TestCaseError> {
    let (locals_r, locals_d): (Vec<Transform<R>>, Vec<Trsd>) = {
        let r: Vec<Transform<R>> = case.locals.iter().map(transform_from_f64).collect();
        let d = r.iter().map(transform_to_f64).collect();
        (r, d)
    };
    let root = case.root.map(|t| round_matrix::<R>(&t.to_matrix()));
    let skel = skeleton(&case.parents, &locals_r);
    let mut got = vec![Mat4::ZERO; case.parents.len()];
    // The rounded locals as they are (the skeleton's rest pose holds renormalized rotations).
    local_to_model(&skel, &pack_soa(&locals_r), root.as_ref().map(|r| &r.0), &mut got, None, None);
    let (want, bound) = model_with_bounds::<R>(&case.parents, &locals_d, root.as_ref().map(|r| &r.1));
    check_matrices(&got, &want, &bound, "full update")
}

/// A partial update (`from`, optionally `to`) after editing `from`'s subtree equals a full
/// recompute of the edited pose on every joint it covers, and leaves every other joint as it
/// was — exactly, since it performs the same operations on the same values.
fn prop_partial_update<R: Scalar>(case: &HierarchyCase) -> Result<(), TestCaseError> {
    let n = case.parents.len();
    let in_subtree = |j: usize| reference::is_in_subtree(&case.parents, j, case.from).unwrap();
    let edited: Vec<Trsd> = (0..n).map(|j| if in_subtree(j) { case.edited[j] } else { case.locals[j] }).collect();
    let (before, _) = round_pose::<R>(&case.locals);
    let (after, _) = round_pose::<R>(&edited);
    let rest: Vec<Transform<R>> = case.locals.iter().map(transform_from_f64).collect();
    let skel = skeleton(&case.parents, &rest);
    let root = case.root.map(|t| round_matrix::<R>(&t.to_matrix()).0);
    let to = case.to.map(|f| case.from + (f * (n - 1 - case.from) as f64).round() as usize);

    let mut old = vec![Mat4::ZERO; n];
    local_to_model(&skel, &before, root.as_ref(), &mut old, None, None);
    let mut full = vec![Mat4::ZERO; n];
    local_to_model(&skel, &after, root.as_ref(), &mut full, None, None);
    let mut partial = old.clone();
    local_to_model(&skel, &after, root.as_ref(), &mut partial, Some(case.from), to);
    // `to` alone (no `from`): every joint up to `to`.
    let mut capped = old.clone();
    local_to_model(&skel, &after, root.as_ref(), &mut capped, None, to);

    let last = to.unwrap_or(n - 1);
    for j in 0..n {
        let covered = j <= last && in_subtree(j);
        let want = if covered { &full[j] } else { &old[j] };
        prop_assert_eq!(&partial[j], want, "joint {} (from {}, to {:?}, covered {})", j, case.from, to, covered);
        let want = if j <= last { &full[j] } else { &old[j] };
        prop_assert_eq!(&capped[j], want, "joint {} (to {:?} only)", j, to);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn hierarchy_matches_f64_reference_f32(case in hierarchy_case::<f32>(false)) {
        prop_hierarchy_matches_reference::<f32>(&case)?;
    }
    #[test]
    fn hierarchy_matches_f64_reference_q16(case in hierarchy_case::<Q16>(false)) {
        prop_hierarchy_matches_reference::<Q16>(&case)?;
    }

    #[test]
    fn hierarchy_partial_update_equals_full_recompute_f32(case in hierarchy_case::<f32>(false)) {
        prop_partial_update::<f32>(&case)?;
    }
    #[test]
    fn hierarchy_partial_update_equals_full_recompute_q16(case in hierarchy_case::<Q16>(false)) {
        prop_partial_update::<Q16>(&case)?;
    }
}

// -------------------------------------------------------------------------------------------------
// 4. Skinning
// -------------------------------------------------------------------------------------------------

/// A skinned mesh: `influences` (palette index, weight) pairs per vertex (weights sum to 1 before
/// rounding), bind-pose positions, normals and tangents, and per vertex one extra zero-weight
/// influence (palette index, insertion position).
#[derive(Clone, Debug)]
struct Mesh {
    influences: usize,
    joints: Vec<u16>,
    weights: Vec<f64>,
    positions: Vec<Vec3d>,
    normals: Vec<Vec3d>,
    tangents: Vec<Vec4d>,
    extra: Vec<(u16, usize)>,
}

fn mesh(palette: usize, extent: f64) -> impl Strategy<Value = Mesh> {
    let p = palette as u16;
    (1..=4usize, 1..=8usize).prop_flat_map(move |(k, n)| {
        let vertex = (
            vec(0..p, k),
            vec(0.05..=1.0f64, k),
            in_box(extent),
            direction(),
            direction(),
            any::<bool>(),
            (0..p, 0..=k),
        );
        vec(vertex, n).prop_map(move |vs| {
            let mut m = Mesh {
                influences: k,
                joints: vec![],
                weights: vec![],
                positions: vec![],
                normals: vec![],
                tangents: vec![],
                extra: vec![],
            };
            for (j, w, pos, nrm, tan, right, extra) in vs {
                let sum: f64 = w.iter().sum();
                m.joints.extend(j);
                m.weights.extend(w.iter().map(|x| x / sum));
                m.positions.push(pos);
                m.normals.push(nrm);
                m.tangents.push(Vec4d::new(tan.x, tan.y, tan.z, if right { 1.0 } else { -1.0 }));
                m.extra.push(extra);
            }
            m
        })
    })
}

/// A mesh rounded to `R`, with the rounded values in `f64`.
struct MeshR<R> {
    influences: usize,
    joints: Vec<u16>,
    weights: Vec<R>,
    positions: Vec<Vec3<R>>,
    normals: Vec<Vec3<R>>,
    tangents: Vec<Vec4<R>>,
    weights_d: Vec<f64>,
    positions_d: Vec<Vec3d>,
    normals_d: Vec<Vec3d>,
    tangents_d: Vec<Vec4d>,
}

impl<R: ExactF64> MeshR<R> {
    fn new(m: &Mesh) -> Self {
        let weights: Vec<R> = m.weights.iter().map(|&w| real_from_f64(w)).collect();
        let positions: Vec<Vec3<R>> = m.positions.iter().map(|&p| vec3_from_f64(p)).collect();
        let normals: Vec<Vec3<R>> = m.normals.iter().map(|&p| vec3_from_f64(p)).collect();
        let tangents: Vec<Vec4<R>> = m.tangents.iter().map(|&t| vec4_from_f64(t)).collect();
        MeshR {
            influences: m.influences,
            joints: m.joints.clone(),
            weights_d: weights.iter().map(|&w| real_to_f64(w)).collect(),
            positions_d: positions.iter().map(|&p| vec3_to_f64(p)).collect(),
            normals_d: normals.iter().map(|&p| vec3_to_f64(p)).collect(),
            tangents_d: tangents.iter().map(|&t| vec4_to_f64(t)).collect(),
            weights,
            positions,
            normals,
            tangents,
        }
    }

    /// The same mesh with each vertex's extra zero-weight influence inserted (positions given
    /// by `at`, per vertex).
    fn with_extra(&self, extra: &[(u16, usize)]) -> Self {
        let k = self.influences;
        let mut joints = Vec::new();
        let mut weights = Vec::new();
        for (v, &(joint, at)) in extra.iter().enumerate() {
            let (j, w) = (&self.joints[v * k..(v + 1) * k], &self.weights[v * k..(v + 1) * k]);
            joints.extend_from_slice(&j[..at]);
            joints.push(joint);
            joints.extend_from_slice(&j[at..]);
            weights.extend_from_slice(&w[..at]);
            weights.push(R::ZERO);
            weights.extend_from_slice(&w[at..]);
        }
        MeshR {
            influences: k + 1,
            joints,
            weights_d: weights.iter().map(|&w| real_to_f64(w)).collect(),
            weights,
            positions: self.positions.clone(),
            normals: self.normals.clone(),
            tangents: self.tangents.clone(),
            positions_d: self.positions_d.clone(),
            normals_d: self.normals_d.clone(),
            tangents_d: self.tangents_d.clone(),
        }
    }

    fn vertices(&self) -> usize {
        self.positions.len()
    }

    /// Skins with `palette`, in `f64`.
    fn skin(&self, palette: Palette<'_, R>) -> reference::Skinned {
        let n = self.vertices();
        let (mut p, mut nr, mut t) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec4::ZERO; n]);
        SkinningJob {
            palette,
            influences: self.influences,
            joint_indices: &self.joints,
            joint_weights: &self.weights,
            positions: &self.positions,
            normals: Some(&self.normals),
            tangents: Some(&self.tangents),
            out_positions: &mut p,
            out_normals: Some(&mut nr),
            out_tangents: Some(&mut t),
        }
        .run()
        .unwrap();
        reference::Skinned {
            positions: p.into_iter().map(vec3_to_f64).collect(),
            normals: Some(nr.into_iter().map(vec3_to_f64).collect()),
            tangents: Some(t.into_iter().map(vec4_to_f64).collect()),
        }
    }

    /// The reference's view of the rounded mesh.
    fn input(&self) -> SkinInput<'_> {
        SkinInput {
            influences: self.influences,
            joints: &self.joints,
            weights: &self.weights_d,
            positions: &self.positions_d,
            normals: Some(&self.normals_d),
            tangents: Some(&self.tangents_d),
        }
    }

    fn influences_of(&self, v: usize) -> (&[u16], &[f64]) {
        let k = self.influences;
        (&self.joints[v * k..(v + 1) * k], &self.weights_d[v * k..(v + 1) * k])
    }
}

/// The three vertex streams of one vertex: position (a point), normal and tangent (directions).
fn streams(s: &reference::Skinned, v: usize) -> [(Vec3d, bool); 3] {
    let n = s.normals.as_ref().map_or(Vec3d::ZERO, |n| n[v]);
    let t = s.tangents.as_ref().map_or(Vec3d::ZERO, |t| t[v].xyz());
    [(s.positions[v], true), (n, false), (t, false)]
}

/// Entry-wise error bound of a matrix palette entry `model × inverse_bind` computed in `R` from a
/// model matrix off by `model_err` (the inverse bind is an exact input): carried
/// `model_err·|IB|`, plus 4 products and 3 sums per entry, `7·rnd` of the entry's terms.
fn palette_error<R: ExactF64>(model: &Mat4d, model_err: &Mat4d, inverse_bind: &Mat4d) -> Mat4d {
    let ib = m_abs(inverse_bind);
    let terms = m_zip(&m_abs(model), model_err, |a, b| a + b) * ib;
    m_zip(&(*model_err * ib), &terms, |c, m| c + 7.0 * rnd::<R>(m))
}

/// Bound on the largest component error of one linear-blend-skinned stream value `v` (a point
/// when `point`) against the reference on the exact palette `pal`, whose computed entries are
/// off by `pal_err`.
///
/// The blended matrix's entries are `Σ wₖ·Pₖ`: the palette errors weighted, plus `2k` roundings
/// of the entry's `Σ|wₖ||Pₖ|`; a transformed component is 3 products and 2 or 3 sums, `6·rnd`
/// of its terms' size.
fn lbs_bound<R: ExactF64>(
    pal: &[Mat4d],
    pal_err: &[Mat4d],
    joints: &[u16],
    weights: &[f64],
    v: Vec3d,
    point: bool,
) -> f64 {
    let k = joints.len() as f64;
    let mut mag = [[0.0f64; 4]; 4];
    let mut err = [[0.0f64; 4]; 4];
    for (&j, &w) in joints.iter().zip(weights) {
        for c in 0..4 {
            for r in 0..4 {
                mag[c][r] += w.abs() * pal[j as usize].cols[c][r].abs();
                err[c][r] += w.abs() * pal_err[j as usize].cols[c][r];
            }
        }
    }
    let vv = [v.x.abs(), v.y.abs(), v.z.abs(), if point { 1.0 } else { 0.0 }];
    let raw = (0..3)
        .map(|r| {
            let carried: f64 = (0..4).map(|c| (err[c][r] + 2.0 * k * rnd::<R>(mag[c][r])) * vv[c]).sum();
            let size: f64 = (0..4).map(|c| mag[c][r] * vv[c]).sum();
            carried + 6.0 * rnd::<R>(size)
        })
        .fold(0.0, f64::max);
    if point {
        return raw;
    }
    // Normals and tangents are renormalized: an error e of the blended vector b moves its
    // direction by at most 2·e/|b| (e ≤ √3 · the largest component's), plus the normalization's
    // own roundings.
    let blended = joints
        .iter()
        .zip(weights)
        .fold(Vec3d::ZERO, |acc, (&j, &w)| acc + pal[j as usize].transform_vector(v) * w)
        .length();
    2.0 * 3f64.sqrt() * raw / blended.max(f64::MIN_POSITIVE) + 16.0 * rnd::<R>(1.0)
}

/// Error bounds of a dual-quaternion palette entry made from a skin matrix `s` whose computed
/// entries are off by `err`: (rotation angle, 4D error of the dual part).
///
/// - each axis column is normalized: its direction moves by `|δcol|/|col|`, plus the
///   normalization's relative error and a rounding per component (`√3·rnd(1)`);
/// - `Quat::from_mat3_cols` moves by at most 9 times the largest column error in rotation angle
///   (its worst branch divides by `s ≥ 2`: components move by at most 2.5 entry errors, 4.4 in
///   4D), and adds its own arithmetic: about 8 roundings of values up to 4 and a square root per
///   component (4D: twice that, rotation: twice again), and its final normalization `4·rnd(1)`;
/// - the translation is copied (error: column 3's); the dual part `½·(t, 0)·r` carries it and the
///   rotation's error times `|t|/2`, plus 7 roundings per component of magnitude `|t|` and the
///   halving.
fn dq_palette_error<R: ExactF64>(s: &Mat4d, err: &Mat4d) -> (f64, f64) {
    let col_err = |c: usize| {
        let len = col_len(s, c);
        err.axis(c).length() / len + inv_len_err::<R>(len, 3) + 3f64.sqrt() * rnd::<R>(1.0)
    };
    let e = (0..3).map(col_err).fold(0.0, f64::max);
    let rot = 9.0 * e + 4.0 * (8.0 * rnd::<R>(4.0) + sqrt_err::<R>(2.0)) + 4.0 * rnd::<R>(1.0);
    let t = s.translation().length();
    let dual = 0.5 * err.axis(3).length() + 0.25 * t * rot + 2.0 * (3.5 * rnd::<R>(t) + rnd::<R>(t / 2.0));
    (rot, dual)
}

/// Bound on the largest component error of one dual-quaternion-skinned stream value `v` against
/// the reference on the exact palette `pal` (errors `rot_err`, `dual_err` per entry).
///
/// - the blended real part `Σ ±wₖ·rₖ` moves by the weighted palette errors (a rotation angle
///   `α` is a 4D move of at most `α/2`) plus `2k` roundings per component (4D: twice); over its
///   norm `Q` that is a direction error, plus the normalizing products' `2·rnd(1)`;
/// - the dual part likewise, and the normalization (a rounded reciprocal, [`recip_len_err`])
///   scales it by its relative error `ρ`;
/// - the translation `2·(w·d⃗ − d_w·r⃗ + r⃗ × d⃗)` is bilinear in the normalized parts: twice the
///   dual error plus the dual's size times the real error, `2ρ` relative for the common scale, and
///   8 roundings per component;
/// - the rotation matrix built from the real part is off by `4ρ` per entry (its norm enters
///   squared) plus 4 roundings of magnitude 2; the transform of `v` adds `6·rnd`; a 4D direction
///   error `ε` rotates `v` by at most `2ε`.
#[allow(clippy::too_many_arguments)]
fn dqs_bound<R: ExactF64>(
    pal: &[DualQuatd],
    rot_err: &[f64],
    dual_err: &[f64],
    joints: &[u16],
    weights: &[f64],
    v: Vec3d,
    point: bool,
) -> f64 {
    let k = joints.len() as f64;
    let first = pal[joints[0] as usize].real;
    let (mut real, mut dual) = (Quatd::ZERO, Quatd::ZERO);
    let (mut w_abs, mut real_e, mut dual_e, mut dual_mag) = (0.0, 0.0, 0.0, 0.0);
    for (&j, &w) in joints.iter().zip(weights) {
        let p = pal[j as usize];
        let s = if first.dot(p.real) < 0.0 { -w } else { w };
        real = real + p.real * s;
        dual = dual + p.dual * s;
        w_abs += w.abs();
        real_e += w.abs() * rot_err[j as usize] / 2.0;
        dual_e += w.abs() * dual_err[j as usize];
        dual_mag += w.abs() * p.dual.length();
    }
    real_e += 2.0 * 2.0 * k * rnd::<R>(w_abs);
    dual_e += 2.0 * 2.0 * k * rnd::<R>(dual_mag);
    let q = real.length();
    let rho = recip_len_err::<R>(q, 4);
    let er = real_e / q + 2.0 * rnd::<R>(1.0);
    let dn = dual.length() / q;
    let ed = dual_e / q + dn * rho + 2.0 * rnd::<R>(dn);
    let t = 2.0 * dn;
    let et = 2.0 * (ed + dn * er + dn * rho) + 2.0 * 8.0 * rnd::<R>(t);
    let entry = 4.0 * rho + 4.0 * rnd::<R>(2.0) + rnd::<R>(1.0);
    let l1 = v.x.abs() + v.y.abs() + v.z.abs();
    let translation = if point { et } else { 0.0 };
    2.0 * er * v.length() + entry * l1 + translation + 6.0 * rnd::<R>(l1 + if point { t } else { 0.0 })
}

/// Skinning method.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    Linear,
    DualQuat,
}

/// Palettes of both kinds from model and inverse bind matrices (`R`), with the exact palettes
/// and their error bounds.
struct Palettes<R> {
    matrices: Vec<Mat4<R>>,
    dual_quats: Vec<DualQuat<R>>,
    exact: Vec<Mat4d>,
    exact_dq: Vec<DualQuatd>,
    err: Vec<Mat4d>,
    dq_rot_err: Vec<f64>,
    dq_dual_err: Vec<f64>,
}

impl<R: ExactF64> Palettes<R> {
    /// `model_d`/`model_err`: the exact model matrices and their bounds; `ib_d`: the inverse
    /// binds' values.
    fn new(model: &[Mat4<R>], ib: &[Mat4<R>], model_d: &[Mat4d], model_err: &[Mat4d], ib_d: &[Mat4d]) -> Self {
        let n = ib.len();
        let mut matrices = vec![Mat4::ZERO; n];
        SkinMatrixJob { model, inverse_bind: ib, joints: None, output: &mut matrices }.run().unwrap();
        let mut dual_quats = vec![DualQuat::IDENTITY; n];
        SkinDualQuatJob::new(model, ib, &mut dual_quats).run().unwrap();
        let exact = reference::skin_matrices(model_d, ib_d, None).unwrap();
        let exact_dq = reference::skin_dual_quats(model_d, ib_d, None).unwrap();
        let err: Vec<Mat4d> = (0..n).map(|i| palette_error::<R>(&model_d[i], &model_err[i], &ib_d[i])).collect();
        let (dq_rot_err, dq_dual_err) = (0..n).map(|i| dq_palette_error::<R>(&exact[i], &err[i])).unzip();
        Palettes { matrices, dual_quats, exact, exact_dq, err, dq_rot_err, dq_dual_err }
    }

    fn palette(&self, method: Method) -> Palette<'_, R> {
        match method {
            Method::Linear => Palette::Matrices(&self.matrices),
            Method::DualQuat => Palette::DualQuats(&self.dual_quats),
        }
    }

    fn reference(&self, method: Method, mesh: &MeshR<R>) -> reference::Skinned {
        match method {
            Method::Linear => reference::skin_linear(&self.exact, &mesh.input()),
            Method::DualQuat => reference::skin_dual_quat(&self.exact_dq, &mesh.input()),
        }
        .unwrap()
    }

    /// The bound of one stream value of vertex `v`.
    fn bound(&self, method: Method, mesh: &MeshR<R>, v: usize, value: Vec3d, point: bool) -> f64 {
        let (j, w) = mesh.influences_of(v);
        match method {
            Method::Linear => lbs_bound::<R>(&self.exact, &self.err, j, w, value, point),
            Method::DualQuat => dqs_bound::<R>(&self.exact_dq, &self.dq_rot_err, &self.dq_dual_err, j, w, value, point),
        }
    }
}

/// Bind transforms per palette joint and a mesh over them.
#[derive(Clone, Debug)]
struct BindCase {
    bind: Vec<Trsd>,
    mesh: Mesh,
}

fn bind_case<R: Scalar>() -> impl Strategy<Value = BindCase> {
    vec(trs(R::ROOT_TRANSLATION, R::MAX_SCALE, false), 1..=6).prop_flat_map(|bind| {
        let n = bind.len();
        (Just(bind), mesh(n, R::ROOT_TRANSLATION)).prop_map(|(bind, mesh)| BindCase { bind, mesh })
    })
}

/// In the bind pose — each joint's model matrix the inverse of its inverse bind matrix — every
/// vertex comes out unchanged: within the deviation that rounding the two matrices to `R` leaves
/// in `model × inverse_bind` (computed exactly, through the reference) plus the arithmetic bound.
fn prop_bind_pose<R: Scalar>(case: &BindCase, method: Method) -> Result<(), TestCaseError> {
    let (model, model_d): (Vec<Mat4<R>>, Vec<Mat4d>) =
        case.bind.iter().map(|b| round_matrix::<R>(&b.to_matrix())).unzip();
    let (ib, ib_d): (Vec<Mat4<R>>, Vec<Mat4d>) =
        case.bind.iter().map(|b| round_matrix::<R>(&b.to_matrix().inverse().unwrap())).unzip();
    let zero = vec![Mat4d { cols: [[0.0; 4]; 4] }; model.len()];
    let pal = Palettes::new(&model, &ib, &model_d, &zero, &ib_d);
    let mesh = MeshR::<R>::new(&case.mesh);
    let got = mesh.skin(pal.palette(method));
    let exact = pal.reference(method, &mesh);
    for v in 0..mesh.vertices() {
        let input = [(mesh.positions_d[v], true), (mesh.normals_d[v], false), (mesh.tangents_d[v].xyz(), false)];
        for (s, ((g, _), ((x, _), (input, point)))) in
            streams(&got, v).into_iter().zip(streams(&exact, v).into_iter().zip(input)).enumerate()
        {
            let deviation = diff3(x, input);
            let bound = deviation + pal.bound(method, &mesh, v, input, point);
            let e = diff3(g, input);
            prop_assert!(
                e <= bound,
                "{method:?} vertex {v} stream {s}: moved by {e:e} > {bound:e} (rounding deviation {deviation:e})"
            );
        }
        prop_assert_eq!(got.tangents.as_ref().unwrap()[v].w, mesh.tangents_d[v].w);
    }
    Ok(())
}

/// A skeleton with a pose, a bind pose, a rigid transform `(rotation, translation)` and a mesh.
#[derive(Clone, Debug)]
struct RigidCase {
    parents: Vec<i16>,
    pose: Vec<Trsd>,
    bind: Vec<Trsd>,
    rotation: Quatd,
    translation: Vec3d,
    mesh: Mesh,
}

fn rigid_case<R: Scalar>(uniform_scale: bool) -> impl Strategy<Value = RigidCase> {
    (1..=6usize).prop_flat_map(move |n| {
        let local = trs(R::MAX_TRANSLATION, R::MAX_SCALE, uniform_scale);
        (
            parents(n),
            vec(local.clone(), n),
            vec(local, n),
            unit_quat(),
            in_box(R::ROOT_TRANSLATION),
            mesh(n, 2.0 * R::MAX_TRANSLATION),
        )
            .prop_map(|(parents, pose, bind, rotation, translation, mesh)| RigidCase {
                parents,
                pose,
                bind,
                rotation,
                translation,
                mesh,
            })
    })
}

/// A rigid transform `G` applied to the whole skeleton (as its root matrix, hence to every model
/// matrix) moves every skinned vertex by exactly `G` and rotates normals and tangents by its
/// rotation: `skin(G·model) = G·skin(model)`, compared with the rounded `G` applied in `f64`.
///
/// Each side is within its pipeline bound (hierarchy, palette, skinning) of the exact result;
/// `G` applied to the unprimed side scales its bound by at most `‖G‖∞`. Dual quaternions keep
/// only the rotation of `G` rounded to `R` (its columns are normalized): that rotation is within
/// `9·‖ΔG‖` of `G`'s, `ΔG` the rounding of `G`'s 3×3 part (exact), which moves a skinned value
/// by at most `(9·Σ|w|/Q + 1)·‖ΔG‖·(|v| + |t|)` — computed exactly from the inputs, added.
fn prop_rigid_transform<R: Scalar>(case: &RigidCase, method: Method) -> Result<(), TestCaseError> {
    let n = case.parents.len();
    let g = Mat4d::from_trs(case.translation, case.rotation, Vec3d::ONE);
    let (g_r, g_d) = round_matrix::<R>(&g);
    let (pose_soa, pose_d) = round_pose::<R>(&case.pose);
    let rest: Vec<Transform<R>> = case.pose.iter().map(transform_from_f64).collect();
    let skel = skeleton(&case.parents, &rest);
    let bind_model = reference::local_to_model(&case.parents, &case.bind, None).unwrap();
    let (ib, ib_d): (Vec<Mat4<R>>, Vec<Mat4d>) =
        bind_model.iter().map(|m| round_matrix::<R>(&m.inverse().unwrap())).unzip();
    let mesh = MeshR::<R>::new(&case.mesh);

    let run = |root: Option<&Mat4<R>>, root_d: Option<&Mat4d>| {
        let mut model = vec![Mat4::ZERO; n];
        local_to_model(&skel, &pose_soa, root, &mut model, None, None);
        let (model_d, model_err) = model_with_bounds::<R>(&case.parents, &pose_d, root_d);
        let pal = Palettes::new(&model, &ib, &model_d, &model_err, &ib_d);
        let got = mesh.skin(pal.palette(method));
        let exact = pal.reference(method, &mesh);
        (pal, got, exact)
    };
    let (pal, got, exact) = run(None, None);
    let (pal_g, got_g, _) = run(Some(&g_r), Some(&g_d));

    // ‖G‖∞ (largest row sum of the rounded 3×3 part) and ‖ΔG‖ (Frobenius norm of its rounding).
    let g_norm = (0..3).map(|r| (0..3).map(|c| g_d.at(r, c).abs()).sum::<f64>()).fold(0.0, f64::max);
    let dg = (0..3).flat_map(|c| (0..3).map(move |r| (g_d.at(r, c) - g.at(r, c)).powi(2))).sum::<f64>().sqrt();
    for v in 0..mesh.vertices() {
        let (joints, weights) = mesh.influences_of(v);
        // |Σ ±wₖ·rₖ| of the unmoved palette (the moved one's is the same rotated).
        let first = pal.exact_dq[joints[0] as usize].real;
        let q = joints
            .iter()
            .zip(weights)
            .fold(Quatd::ZERO, |acc, (&j, &w)| {
                let r = pal.exact_dq[j as usize].real;
                acc + r * if first.dot(r) < 0.0 { -w } else { w }
            })
            .length();
        let w_abs: f64 = weights.iter().map(|w| w.abs()).sum();
        let input = [(mesh.positions_d[v], true), (mesh.normals_d[v], false), (mesh.tangents_d[v].xyz(), false)];
        let values = streams(&got, v).into_iter().zip(streams(&got_g, v)).zip(streams(&exact, v)).zip(input);
        for (s, ((((a, _), (b, _)), (x, _)), (value, point))) in values.enumerate() {
            let moved = if point { g_d.transform_point(a) } else { g_d.transform_vector(a) };
            let mut bound =
                pal_g.bound(method, &mesh, v, value, point) + g_norm * pal.bound(method, &mesh, v, value, point);
            if method == Method::DualQuat {
                // The skinned translation's size: |x − v| + |v| for a point, bounded by the exact result.
                let t = if point { (x - value).length() + value.length() } else { 0.0 };
                bound += (9.0 * w_abs / q + 1.0) * dg * (value.length() + t);
            }
            let e = diff3(b, moved);
            prop_assert!(
                e <= bound,
                "{method:?} vertex {v} stream {s}: G·skin and skin(G·model) differ by {e:e} > {bound:e}"
            );
        }
        prop_assert_eq!(got_g.tangents.as_ref().unwrap()[v].w, mesh.tangents_d[v].w);
    }
    Ok(())
}

/// Model matrices used directly as a palette (identity inverse binds) and a mesh.
#[derive(Clone, Debug)]
struct PaletteCase {
    model: Vec<Trsd>,
    mesh: Mesh,
}

fn palette_case<R: Scalar>() -> impl Strategy<Value = PaletteCase> {
    vec(trs(R::ROOT_TRANSLATION, R::MAX_SCALE, false), 1..=6).prop_flat_map(|model| {
        let n = model.len();
        (Just(model), mesh(n, R::ROOT_TRANSLATION)).prop_map(|(model, mesh)| PaletteCase { model, mesh })
    })
}

/// A vertex with one more influence of weight 0 (at `position(k, at)` among the `k` others)
/// skins exactly as without it: a zero weight is either skipped or contributes exact zeros
/// (`0·x` is ±0 and `y ± 0 = y`, in both scalars), so every sum is unchanged bit for bit.
fn prop_zero_weight_influence<R: Scalar>(
    case: &PaletteCase,
    method: Method,
    position: fn(usize, usize) -> usize,
) -> Result<(), TestCaseError> {
    let (model, _): (Vec<Mat4<R>>, Vec<Mat4d>) = case.model.iter().map(|t| round_matrix::<R>(&t.to_matrix())).unzip();
    let ib = vec![Mat4::IDENTITY; model.len()];
    let mut matrices = vec![Mat4::ZERO; model.len()];
    SkinMatrixJob { model: &model, inverse_bind: &ib, joints: None, output: &mut matrices }.run().unwrap();
    let mut dual_quats = vec![DualQuat::IDENTITY; model.len()];
    SkinDualQuatJob::new(&model, &ib, &mut dual_quats).run().unwrap();
    let palette = match method {
        Method::Linear => Palette::Matrices(&matrices),
        Method::DualQuat => Palette::DualQuats(&dual_quats),
    };
    let mesh = MeshR::<R>::new(&case.mesh);
    let k = mesh.influences;
    let extra: Vec<(u16, usize)> = case.mesh.extra.iter().map(|&(j, at)| (j, position(k, at))).collect();
    let with = mesh.with_extra(&extra);
    let (a, b) = (mesh.skin(palette), with.skin(palette));
    for v in 0..mesh.vertices() {
        prop_assert_eq!(
            streams(&a, v),
            streams(&b, v),
            "{:?} vertex {} with a zero-weight influence (joint {}) at {}",
            method,
            v,
            extra[v].0,
            extra[v].1
        );
    }
    Ok(())
}

/// Anywhere among the influences.
fn anywhere(_k: usize, at: usize) -> usize {
    at
}

/// Anywhere but first.
fn after_the_first(k: usize, at: usize) -> usize {
    at.clamp(1, k)
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn skinning_bind_pose_is_identity_lbs_f32(case in bind_case::<f32>()) { prop_bind_pose::<f32>(&case, Method::Linear)?; }
    #[test]
    fn skinning_bind_pose_is_identity_lbs_q16(case in bind_case::<Q16>()) { prop_bind_pose::<Q16>(&case, Method::Linear)?; }
    #[test]
    fn skinning_bind_pose_is_identity_dqs_f32(case in bind_case::<f32>()) { prop_bind_pose::<f32>(&case, Method::DualQuat)?; }
    #[test]
    fn skinning_bind_pose_is_identity_dqs_q16(case in bind_case::<Q16>()) { prop_bind_pose::<Q16>(&case, Method::DualQuat)?; }

    #[test]
    fn skinning_follows_a_rigid_root_lbs_f32(case in rigid_case::<f32>(false)) {
        prop_rigid_transform::<f32>(&case, Method::Linear)?;
    }
    #[test]
    fn skinning_follows_a_rigid_root_lbs_q16(case in rigid_case::<Q16>(false)) {
        prop_rigid_transform::<Q16>(&case, Method::Linear)?;
    }
    // Uniform scales: dual quaternions keep only rotations, which commute with a rigid root
    // exactly when the skin matrices have no shear.
    #[test]
    fn skinning_follows_a_rigid_root_dqs_f32(case in rigid_case::<f32>(true)) {
        prop_rigid_transform::<f32>(&case, Method::DualQuat)?;
    }
    #[test]
    fn skinning_follows_a_rigid_root_dqs_q16(case in rigid_case::<Q16>(true)) {
        prop_rigid_transform::<Q16>(&case, Method::DualQuat)?;
    }

    #[test]
    fn skinning_ignores_zero_weight_influences_lbs_f32(case in palette_case::<f32>()) {
        prop_zero_weight_influence::<f32>(&case, Method::Linear, anywhere)?;
    }
    #[test]
    fn skinning_ignores_zero_weight_influences_lbs_q16(case in palette_case::<Q16>()) {
        prop_zero_weight_influence::<Q16>(&case, Method::Linear, anywhere)?;
    }
    #[test]
    fn skinning_ignores_zero_weight_influences_dqs_f32(case in palette_case::<f32>()) {
        prop_zero_weight_influence::<f32>(&case, Method::DualQuat, anywhere)?;
    }
    #[test]
    fn skinning_ignores_zero_weight_influences_dqs_q16(case in palette_case::<Q16>()) {
        prop_zero_weight_influence::<Q16>(&case, Method::DualQuat, anywhere)?;
    }
    #[test]
    fn skinning_ignores_zero_weight_influences_after_the_first_dqs_f32(case in palette_case::<f32>()) {
        prop_zero_weight_influence::<f32>(&case, Method::DualQuat, after_the_first)?;
    }
    #[test]
    fn skinning_ignores_zero_weight_influences_after_the_first_dqs_q16(case in palette_case::<Q16>()) {
        prop_zero_weight_influence::<Q16>(&case, Method::DualQuat, after_the_first)?;
    }
}
