//! Accuracy of sinew's rotation interpolation and normalization against exact `f64`.
//!
//! Inputs are drawn from fixed seeds, rounded to the scalar under test, and the reference is
//! computed from the rounded values (so the figures measure sinew's arithmetic, not the input
//! rounding). Every test prints its measured worst case (`--nocapture`) and asserts a bound
//! a little above it.

use sinew::math::{Quat, Vec3};
use sinew::Q16;
use sinew_tests::convert::{
    quat_from_f64, quat_to_f64, real_from_f64, real_to_f64, vec3_from_f64, vec3_to_f64, ExactF64,
};
use sinew_tests::random::{log_uniform, rng, small_rotation, uniform, unit_quat, unit_vec3, TestRng};
use sinew_tests::reference::Quatd;

const PAIRS: usize = 100_000;

/// A uniformly random rotation rounded to `R`, and its rounded value in `f64`.
fn random_quat<R: ExactF64>(rng: &mut TestRng) -> (Quat<R>, Quatd) {
    let q = quat_from_f64::<R>(unit_quat(rng));
    (q, quat_to_f64(q))
}

/// A `t` in [0, 1] rounded to `R`; 1 % of draws are exactly 0 or 1.
fn random_t<R: ExactF64>(rng: &mut TestRng) -> (R, f64) {
    let u = uniform(rng, 0.0, 1.0);
    let t = if u < 0.005 {
        0.0
    } else if u < 0.01 {
        1.0
    } else {
        uniform(rng, 0.0, 1.0)
    };
    let tr = real_from_f64::<R>(t);
    (tr, real_to_f64(tr))
}

fn bits<R: ExactF64>(q: Quat<R>) -> [u64; 4] {
    q.to_array().map(|v| v.to_f64().to_bits())
}

/// Worst figures of an interpolation over a set of pairs.
#[derive(Debug, Default)]
struct Worst {
    /// Rotation angle between sinew's result and the exact slerp (radians).
    angle: f64,
    /// | |q| − 1 | of sinew's result.
    norm: f64,
    /// | angle(a, result) − t · angle(a, end) | along the chosen arc (rotation angles, i.e. twice
    /// the 4D angles): how far the result is from its place on the shortest arc.
    path: f64,
    /// Pairs whose dot product was too close to 0 to tell the shorter arc (both arcs accepted).
    ambiguous: usize,
}

/// Runs `interp` on `pairs` random pairs from `make_pair` and measures it against exact slerp.
/// Also checks endpoint exactness (t = 0 gives `a`, t = 1 gives `b` or `-b`, bit for bit).
fn measure<R: ExactF64>(
    seed: u64,
    pairs: usize,
    make_pair: impl Fn(&mut TestRng) -> (Quat<R>, Quatd, Quat<R>, Quatd),
    interp: impl Fn(Quat<R>, Quat<R>, R) -> Quat<R>,
) -> Worst {
    let mut rng = rng(seed);
    let mut w = Worst::default();
    // |a · b| below 8 steps of the type's precision: the hemisphere is a rounding decision.
    let ambiguity = 8.0 * real_to_f64(R::EPSILON);
    for _ in 0..pairs {
        let (a, ad, b, bd) = make_pair(&mut rng);
        let (t, td) = random_t::<R>(&mut rng);
        let r = interp(a, b, t);
        let rd = quat_to_f64(r);
        w.norm = w.norm.max((rd.length() - 1.0).abs());

        // The exact slerp on the shorter arc. When |a · b| is within a few rounding steps of 0
        // the shorter arc cannot be told in `R`, and both arcs are accepted.
        let dot = ad.dot(bd);
        let ambiguous = dot.abs() < ambiguity;
        let ends: &[Quatd] = if ambiguous {
            &[bd, -bd]
        } else if dot < 0.0 {
            &[-bd]
        } else {
            &[bd]
        };
        if ambiguous {
            w.ambiguous += 1;
        }
        let (angle, path) = ends
            .iter()
            .map(|&e| {
                let exact = ad.slerp_arc(e, td).unwrap();
                let angle = rd.rotation_angle_to(exact).unwrap();
                // The rotation from a to the result is t times the rotation from a to b, along
                // the arc's 4D angle θ: 2tθ (θ ≤ π/2 on the shorter arc).
                let total = 2.0 * ad.angle_4d(e).unwrap();
                let path = (2.0 * ad.angle_4d(rd).unwrap() - td * total).abs();
                (angle, path)
            })
            .fold((f64::MAX, f64::MAX), |(a0, p0), (a1, p1)| if a1 < a0 { (a1, p1) } else { (a0, p0) });
        w.angle = w.angle.max(angle);
        w.path = w.path.max(path);

        // Endpoints are exact.
        assert_eq!(bits(interp(a, b, R::ZERO)), bits(a), "t = 0 must return the start: {a:?} {b:?}");
        let end = interp(a, b, R::ONE);
        assert!(
            bits(end) == bits(b) || bits(end) == bits(-b),
            "t = 1 must return the end or its negation: {a:?} {b:?} -> {end:?}"
        );
        if !ambiguous {
            assert_eq!(bits(end) == bits(-b), dot < 0.0, "t = 1 must pick the end on the shorter arc");
        }
    }
    w
}

fn uniform_pair<R: ExactF64>(rng: &mut TestRng) -> (Quat<R>, Quatd, Quat<R>, Quatd) {
    let (a, ad) = random_quat::<R>(rng);
    let (b, bd) = random_quat::<R>(rng);
    (a, ad, b, bd)
}

/// A pair less than 30° of rotation apart, `b` in either sign.
fn close_pair<R: ExactF64>(rng: &mut TestRng) -> (Quat<R>, Quatd, Quat<R>, Quatd) {
    let rotation = small_rotation(rng, 30f64.to_radians());
    pair_apart(rng, rotation)
}

/// A pair `degrees` of rotation apart (about a random axis), `b` in either sign.
fn pair_at<R: ExactF64>(rng: &mut TestRng, degrees: f64) -> (Quat<R>, Quatd, Quat<R>, Quatd) {
    let rotation = Quatd::from_axis_angle(unit_vec3(rng), degrees.to_radians());
    pair_apart(rng, rotation)
}

/// A random `a` and `b = a · rotation`, `b` in either sign.
fn pair_apart<R: ExactF64>(rng: &mut TestRng, rotation: Quatd) -> (Quat<R>, Quatd, Quat<R>, Quatd) {
    let ad = unit_quat(rng);
    let mut bd = ad * rotation;
    if uniform(rng, 0.0, 1.0) < 0.5 {
        bd = -bd;
    }
    let (a, b) = (quat_from_f64::<R>(ad), quat_from_f64::<R>(bd));
    (a, quat_to_f64(a), b, quat_to_f64(b))
}

#[test]
fn f32_slerp_matches_exact_slerp() {
    let uniform = measure::<f32>(1, PAIRS, uniform_pair, |a, b, t| a.slerp(b, t));
    let close = measure::<f32>(2, PAIRS, close_pair, |a, b, t| a.slerp(b, t));
    eprintln!("f32 slerp, uniform pairs: {uniform:?}");
    eprintln!("f32 slerp, pairs < 30° apart: {close:?}");
    // Quat::slerp documents "below 1e-6 rad"; below a 4D angle of 0.0316 rad it switches to
    // nlerp, whose deviation there reaches 1.01e-6 rad of rotation, so the measured worst case
    // is about 1.05e-6 (pairs < 30° apart). The brief's requirement is 1e-4.
    for w in [&uniform, &close] {
        assert!(w.angle <= 1.5e-6, "slerp angle error {:e} rad", w.angle);
        assert!(w.path <= 1.5e-6, "slerp leaves the shortest arc by {:e} rad", w.path);
        assert!(w.norm <= 3.0e-7, "slerp result norm off by {:e}", w.norm);
    }
}

#[test]
fn f32_nlerp_against_exact_slerp() {
    let uniform = measure::<f32>(3, PAIRS, uniform_pair, |a, b, t| a.nlerp(b, t));
    let close = measure::<f32>(4, PAIRS, close_pair, |a, b, t| a.nlerp(b, t));
    eprintln!("f32 nlerp, uniform pairs: {uniform:?}");
    eprintln!("f32 nlerp, pairs < 30° apart: {close:?}");
    let at5 = measure::<f32>(9, PAIRS / 10, |r| pair_at(r, 5.0), |a, b, t| a.nlerp(b, t));
    let at90 = measure::<f32>(10, PAIRS / 10, |r| pair_at(r, 90.0), |a, b, t| a.nlerp(b, t));
    eprintln!("f32 nlerp, pairs 5° apart: {at5:?}");
    eprintln!("f32 nlerp, pairs 90° apart: {at90:?}");
    // nlerp follows the same arc at a non-constant speed: its error is an angle along the arc,
    // about θ³/… for pairs θ apart. Exact values of that deviation (f64): 0.142 rad at 180°,
    // 0.0160 at 90°, 5.78e-4 at 30°, 2.66e-6 at 5°.
    assert!(uniform.angle <= 0.143, "nlerp angle error on uniform pairs {:e} rad", uniform.angle);
    assert!(close.angle <= 6.0e-4, "nlerp angle error below 30° {:e} rad", close.angle);
    assert!(at90.angle <= 0.0161, "nlerp angle error at 90° {:e} rad", at90.angle);
    // Quat::nlerp documents "less than 1e-6 rad at 5° apart"; the deviation there is 2.66e-6.
    assert!(at5.angle <= 3.0e-6, "nlerp angle error at 5° {:e} rad", at5.angle);
    for w in [&uniform, &close, &at5, &at90] {
        assert!(w.norm <= 3.0e-7, "nlerp result norm off by {:e}", w.norm);
    }
}

/// `Quat::nlerp_corrected` (nlerp with a fitted parameter warp) against exact slerp.
#[test]
fn nlerp_corrected_against_exact_slerp() {
    let f32_uniform = measure::<f32>(11, PAIRS, uniform_pair, |a, b, t| a.nlerp_corrected(b, t));
    let f32_close = measure::<f32>(12, PAIRS, close_pair, |a, b, t| a.nlerp_corrected(b, t));
    let q16_uniform = measure::<Q16>(13, PAIRS, uniform_pair, |a, b, t| a.nlerp_corrected(b, t));
    let q16_close = measure::<Q16>(14, PAIRS, close_pair, |a, b, t| a.nlerp_corrected(b, t));
    eprintln!("f32 nlerp_corrected, uniform pairs: {f32_uniform:?}");
    eprintln!("f32 nlerp_corrected, pairs < 30° apart: {f32_close:?}");
    eprintln!("Q16 nlerp_corrected, uniform pairs: {q16_uniform:?}");
    eprintln!("Q16 nlerp_corrected, pairs < 30° apart: {q16_close:?}");
    // Documented: below 7e-5 rad for any pair.
    for w in [&f32_uniform, &f32_close] {
        assert!(w.angle <= 7.0e-5, "f32 nlerp_corrected angle error {:e} rad", w.angle);
        assert!(w.norm <= 3.0e-7, "f32 nlerp_corrected result norm off by {:e}", w.norm);
    }
    for w in [&q16_uniform, &q16_close] {
        assert!(w.angle <= 2.0e-4, "Q16 nlerp_corrected angle error {:e} rad", w.angle);
        assert!(w.norm <= 5.0e-5, "Q16 nlerp_corrected result norm off by {:e}", w.norm);
    }
}

#[test]
fn q16_slerp_matches_exact_slerp() {
    let uniform = measure::<Q16>(5, PAIRS, uniform_pair, |a, b, t| a.slerp(b, t));
    let close = measure::<Q16>(6, PAIRS, close_pair, |a, b, t| a.slerp(b, t));
    eprintln!("Q16 slerp, uniform pairs: {uniform:?}");
    eprintln!("Q16 slerp, pairs < 30° apart: {close:?}");
    for w in [&uniform, &close] {
        assert!(w.angle <= 1.2e-4, "Q16 slerp angle error {:e} rad", w.angle);
        assert!(w.path <= 1.2e-4, "Q16 slerp leaves the shortest arc by {:e} rad", w.path);
        assert!(w.norm <= 5.0e-5, "Q16 slerp result norm off by {:e}", w.norm);
    }
}

/// Euclidean distance between sinew's unit vector and the exact one, over vectors whose length
/// is log-uniform in [1e-3, 1e3]; also checks zero and non-finite inputs.
#[test]
fn f32_normalize_matches_f64() {
    let mut rng = rng(7);
    let (mut worst_v, mut worst_q) = (0.0f64, 0.0f64);
    for _ in 0..PAIRS {
        let len = log_uniform(&mut rng, 1.0e-3, 1.0e3);
        let v = vec3_from_f64::<f32>(unit_vec3(&mut rng) * len);
        let vd = vec3_to_f64(v);
        let n = v.try_normalize().unwrap();
        worst_v = worst_v.max((vec3_to_f64(n) - vd.normalized().unwrap()).length());

        let len = log_uniform(&mut rng, 1.0e-3, 1.0e3);
        let q = quat_from_f64::<f32>(unit_quat(&mut rng) * len);
        let qd = quat_to_f64(q);
        worst_q = worst_q.max((quat_to_f64(q.normalize()) - qd.normalized().unwrap()).length());
    }
    eprintln!("f32 Vec3::try_normalize error {worst_v:e}, Quat::normalize error {worst_q:e}");
    // Required: 1e-6; measured about 2e-7.
    assert!(worst_v <= 3.0e-7, "Vec3::try_normalize error {worst_v:e}");
    assert!(worst_q <= 3.0e-7, "Quat::normalize error {worst_q:e}");
    assert_eq!(Vec3::<f32>::ZERO.try_normalize(), None);
    assert_eq!(Vec3::new(f32::INFINITY, 0.0, 0.0).try_normalize(), None);
    assert_eq!(Quat::new(0.0f32, 0.0, 0.0, 0.0).normalize(), Quat::IDENTITY);
    assert_eq!(Quat::new(f32::NAN, 0.0, 0.0, 1.0).normalize(), Quat::IDENTITY);
}

/// The same in Q16.16, per range of lengths from 0.05 to 100 (|v|² must stay below 32768).
///
/// Short vectors lose precision in |v|², rounded to a multiple of 2⁻¹⁶ (a vector of length 0.05
/// has |v|² ≈ 164 steps). Long vectors lose it in `inv_sqrt(|v|²)`, which is also rounded to
/// 2⁻¹⁶ before it multiplies the components: the result is off by up to about 2⁻¹⁷·|v|
/// (7.6e-4 at length 100). Both are properties of `v · inv_sqrt(|v|²)` in Q16.16.
#[test]
fn q16_normalize_matches_f64() {
    let mut rng = rng(8);
    // (shortest, longest, bound on the error)
    let ranges = [(0.05, 0.5, 6.0e-3), (0.5, 2.0, 7.0e-5), (2.0, 100.0, 9.0e-4)];
    for (lo, hi, bound) in ranges {
        let (mut worst_v, mut worst_q) = (0.0f64, 0.0f64);
        for _ in 0..PAIRS / 2 {
            let len = log_uniform(&mut rng, lo, hi);
            let v = vec3_from_f64::<Q16>(unit_vec3(&mut rng) * len);
            let vd = vec3_to_f64(v);
            let n = v.try_normalize().unwrap();
            worst_v = worst_v.max((vec3_to_f64(n) - vd.normalized().unwrap()).length());

            let len = log_uniform(&mut rng, lo, hi);
            let q = quat_from_f64::<Q16>(unit_quat(&mut rng) * len);
            let qd = quat_to_f64(q);
            worst_q = worst_q.max((quat_to_f64(q.normalize()) - qd.normalized().unwrap()).length());
        }
        eprintln!("Q16 lengths {lo}..{hi}: Vec3::try_normalize error {worst_v:e}, Quat::normalize error {worst_q:e}");
        assert!(worst_v <= bound, "Q16 Vec3::try_normalize error {worst_v:e} for lengths {lo}..{hi}");
        assert!(worst_q <= bound, "Q16 Quat::normalize error {worst_q:e} for lengths {lo}..{hi}");
    }
}
