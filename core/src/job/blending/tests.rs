//! Tests of the blending job: validity, agreement with an `f64` reference in `f32` and Q16.16,
//! normalization and the threshold, the paths agreeing bit for bit, shortest-path rotations and
//! exact additive layers.

extern crate std;
use std::vec::Vec;

use super::*;
use crate::job::MakeAdditiveJob;
use crate::math::{SoaVec3, Transform};
use crate::platform::dispatch::Kernels;
use crate::real::Q16;

/// xorshift32 in [0, 1).
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0 as f64 / 4_294_967_296.0
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

type Q64 = [f64; 4];
#[derive(Clone, Copy, Debug)]
struct T64 {
    t: [f64; 3],
    q: Q64,
    s: [f64; 3],
}

fn qmul(a: Q64, b: Q64) -> Q64 {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}
fn qnorm(q: Q64) -> Q64 {
    let l = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / l)
}
/// Rotation angle between two quaternions (normalized first), accurate for tiny angles.
fn qangle(a: Q64, b: Q64) -> f64 {
    let (a, mut b) = (qnorm(a), qnorm(b));
    if a.iter().zip(b.iter()).map(|(x, y)| x * y).sum::<f64>() < 0.0 {
        b = b.map(|v| -v);
    }
    let len = |v: [f64; 4]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    4.0 * len(core::array::from_fn(|i| a[i] - b[i])).atan2(len(core::array::from_fn(|i| a[i] + b[i])))
}

/// Plain f64 reference of the blend of one joint: layers `(pose, weight)`, then additive
/// `(delta, weight)`.
fn reference(layers: &[(T64, f64)], rest: T64, threshold: f64, additive: &[(T64, f64)]) -> T64 {
    let mut t = [0.0; 3];
    let mut q = [0.0; 4];
    let mut s = [0.0; 3];
    let mut total = 0.0;
    let mut inputs: Vec<(T64, f64)> = layers.iter().filter(|(_, w)| *w > 0.0).copied().collect();
    let sum: f64 = inputs.iter().map(|(_, w)| w).sum();
    if sum < threshold {
        inputs.push((rest, threshold - sum));
    }
    for (p, w) in &inputs {
        let dot: f64 = (0..4).map(|i| q[i] * p.q[i]).sum();
        let wq = if dot < 0.0 { -w } else { *w };
        for i in 0..3 {
            t[i] += w * p.t[i];
            s[i] += w * p.s[i];
        }
        for i in 0..4 {
            q[i] += wq * p.q[i];
        }
        total += w;
    }
    let mut o = T64 { t: t.map(|v| v / total), q: qnorm(q), s: s.map(|v| v / total) };
    for (d, w) in additive {
        let a = w.abs();
        let mut dq = d.q;
        if dq[3] < 0.0 {
            dq = dq.map(|v| -v);
        }
        let mut iq = qnorm([dq[0] * a, dq[1] * a, dq[2] * a, 1.0 + (dq[3] - 1.0) * a]);
        if *w < 0.0 {
            iq = [-iq[0], -iq[1], -iq[2], iq[3]];
        }
        o.q = qnorm(qmul(iq, o.q));
        for i in 0..3 {
            o.t[i] += w * d.t[i];
            let f = 1.0 + (d.s[i] - 1.0) * a;
            if *w > 0.0 {
                o.s[i] *= f;
            } else {
                o.s[i] /= f;
            }
        }
    }
    o
}

fn random_quat_near(rng: &mut Rng, base: Q64, spread: f64) -> Q64 {
    let axis = qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0]);
    let a = rng.range(-spread, spread) * 0.5;
    let d = [axis[0] * a.sin(), axis[1] * a.sin(), axis[2] * a.sin(), a.cos()];
    let q = qmul(d, base);
    // Random sign: blending must align hemispheres itself.
    if rng.next() < 0.5 {
        q.map(|v| -v)
    } else {
        q
    }
}

fn random_t64(rng: &mut Rng, base: Q64) -> T64 {
    T64 {
        t: [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)],
        q: random_quat_near(rng, base, 1.2),
        s: [rng.range(0.5, 1.5), rng.range(0.5, 1.5), rng.range(0.5, 1.5)],
    }
}

fn to_r<R: Real>(t: &T64) -> Transform<R> {
    let c = |v: f64| R::from_f32(v as f32);
    Transform {
        translation: Vec3::new(c(t.t[0]), c(t.t[1]), c(t.t[2])),
        rotation: Quat::new(c(t.q[0]), c(t.q[1]), c(t.q[2]), c(t.q[3])),
        scale: Vec3::new(c(t.s[0]), c(t.s[1]), c(t.s[2])),
    }
}
fn from_r<R: Real>(t: &Transform<R>) -> T64 {
    let c = |v: R| v.to_f32() as f64;
    T64 {
        t: [c(t.translation.x), c(t.translation.y), c(t.translation.z)],
        q: [c(t.rotation.x), c(t.rotation.y), c(t.rotation.z), c(t.rotation.w)],
        s: [c(t.scale.x), c(t.scale.y), c(t.scale.z)],
    }
}
/// Rounds through R, so the reference sees exactly the job's inputs.
fn through<R: Real>(t: &T64) -> T64 {
    from_r(&to_r::<R>(t))
}

fn pose<R: Real>(joints: &[T64]) -> Vec<SoaTransform<R>> {
    let mut p = std::vec![SoaTransform::IDENTITY; joints.len().div_ceil(4)];
    for (j, t) in joints.iter().enumerate() {
        p[j / 4].set_lane(j % 4, &to_r::<R>(t));
    }
    p
}

#[test]
fn validity() {
    let rest = [SoaTransform::<f32>::IDENTITY; 2];
    let short = [SoaTransform::<f32>::IDENTITY; 1];
    let jw_short = [[1.0f32; 4]; 1];
    let sentinel = SoaTransform { translation: SoaVec3 { x: [9.0; 4], ..SoaVec3::ZERO }, ..SoaTransform::IDENTITY };
    let check = |layers: &[Layer<f32>], additive: &[Layer<f32>], threshold: f32, out_len: usize, e: JobError| {
        let mut out = [sentinel; 3];
        let mut job = BlendingJob { layers, additive, rest_pose: &rest, threshold, output: &mut out[..out_len] };
        assert_eq!(job.validate(), Err(e));
        assert_eq!(job.run(), Err(e));
        assert!(out.iter().all(|o| *o == sentinel), "{e:?}");
    };
    let good = Layer::new(&rest, 1.0);
    // Threshold zero, negative, NaN, infinite.
    for th in [0.0, -0.1, f32::NAN, f32::INFINITY] {
        check(&[good], &[], th, 2, JobError::InvalidThreshold);
    }
    // A non-finite layer weight, normal or additive.
    check(&[Layer::new(&rest, f32::NAN)], &[], 0.1, 2, JobError::InvalidWeight);
    check(&[good], &[Layer::new(&rest, f32::INFINITY)], 0.1, 2, JobError::InvalidWeight);
    // A layer pose shorter than the rest pose.
    check(&[good, Layer::new(&short, 1.0)], &[], 0.1, 2, JobError::InputTooSmall);
    check(&[good], &[Layer::new(&short, 1.0)], 0.1, 2, JobError::InputTooSmall);
    // Per-joint weights shorter than the rest pose.
    let jl = Layer { transform: &rest, weight: 1.0, joint_weights: Some(&jw_short) };
    check(&[jl], &[], 0.1, 2, JobError::InputTooSmall);
    check(&[], &[jl], 0.1, 2, JobError::InputTooSmall);
    // Output too small.
    check(&[good], &[], 0.1, 1, JobError::OutputTooSmall);
    // A longer output: the extra element is untouched.
    let mut out = [sentinel; 3];
    BlendingJob { layers: &[good], additive: &[], rest_pose: &rest, threshold: 0.1, output: &mut out }.run().unwrap();
    assert!(out[0].rotation.lane(0).angle_between(Quat::IDENTITY) < 1.0e-6);
    assert_eq!(out[2], sentinel);
    // No layers at all is valid: the rest pose.
    let mut out = [sentinel; 2];
    BlendingJob { layers: &[], additive: &[], rest_pose: &rest, threshold: 0.5, output: &mut out }.run().unwrap();
    assert!(out[1].rotation.lane(3).angle_between(Quat::IDENTITY) < 1.0e-6);
    assert_eq!(out[1].translation, SoaVec3::ZERO);
}

#[test]
fn make_additive_validity() {
    let p = [SoaTransform::<f32>::IDENTITY; 2];
    let sentinel = SoaTransform { translation: SoaVec3 { x: [9.0; 4], ..SoaVec3::ZERO }, ..SoaTransform::IDENTITY };
    let mut out = [sentinel; 2];
    let mut job = MakeAdditiveJob { pose: &p, reference: &p[..1], output: &mut out };
    assert_eq!(job.run(), Err(JobError::InputTooSmall));
    assert!(out.iter().all(|o| *o == sentinel));
    let mut out = [sentinel; 1];
    let mut job = MakeAdditiveJob { pose: &p, reference: &p, output: &mut out };
    assert_eq!(job.validate(), Err(JobError::OutputTooSmall));
    assert_eq!(job.run(), Err(JobError::OutputTooSmall));
    assert!(out.iter().all(|o| *o == sentinel));
}

/// Worst errors of the job against the f64 reference on random poses: (translation and
/// scale, absolute; rotation, radians).
fn blend_errors<R: Real>(seed: u32, joints: usize, rounds: usize) -> (f64, f64) {
    let mut rng = Rng(seed);
    let (mut worst_v, mut worst_q) = (0.0f64, 0.0f64);
    for _ in 0..rounds {
        let layers = 1 + (rng.next() * 4.0) as usize;
        let additive = (rng.next() * 3.0) as usize;
        // One base orientation per joint; layers vary within ±60° of it.
        let bases: Vec<Q64> = (0..joints)
            .map(|_| qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]))
            .collect();
        let make =
            |rng: &mut Rng| -> Vec<T64> { (0..joints).map(|j| through::<R>(&random_t64(rng, bases[j]))).collect() };
        let rest = make(&mut rng);
        let poses: Vec<Vec<T64>> = (0..layers).map(|_| make(&mut rng)).collect();
        let deltas: Vec<Vec<T64>> = (0..additive)
            .map(|_| {
                (0..joints)
                    .map(|_| {
                        through::<R>(&T64 {
                            t: [rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)],
                            q: random_quat_near(&mut rng, [0.0, 0.0, 0.0, 1.0], 1.0),
                            s: [rng.range(0.8, 1.25), rng.range(0.8, 1.25), rng.range(0.8, 1.25)],
                        })
                    })
                    .collect()
            })
            .collect();
        let weight = |rng: &mut Rng| R::from_f32(rng.range(-0.2, 1.5) as f32);
        let lw: Vec<R> = (0..layers).map(|_| weight(&mut rng)).collect();
        let aw: Vec<R> = (0..additive).map(|_| R::from_f32(rng.range(-1.0, 1.0) as f32)).collect();
        let jw: Vec<Vec<[R; 4]>> = (0..layers + additive)
            .map(|_| {
                (0..joints.div_ceil(4))
                    .map(|_| core::array::from_fn(|_| R::from_f32(rng.range(-0.2, 1.2) as f32)))
                    .collect()
            })
            .collect();
        let use_jw: Vec<bool> = (0..layers + additive).map(|_| rng.next() < 0.5).collect();
        let threshold = R::from_f32(rng.range(0.05, 1.0) as f32);

        let rest_soa = pose::<R>(&rest);
        let pose_soa: Vec<Vec<SoaTransform<R>>> = poses.iter().map(|p| pose::<R>(p)).collect();
        let delta_soa: Vec<Vec<SoaTransform<R>>> = deltas.iter().map(|p| pose::<R>(p)).collect();
        let jw_of = |i: usize| if use_jw[i] { Some(&jw[i][..]) } else { None };
        let job_layers: Vec<Layer<R>> =
            (0..layers).map(|i| Layer { transform: &pose_soa[i], weight: lw[i], joint_weights: jw_of(i) }).collect();
        let job_add: Vec<Layer<R>> = (0..additive)
            .map(|i| Layer { transform: &delta_soa[i], weight: aw[i], joint_weights: jw_of(layers + i) })
            .collect();
        let mut out = std::vec![SoaTransform::IDENTITY; rest_soa.len()];
        BlendingJob { layers: &job_layers, additive: &job_add, rest_pose: &rest_soa, threshold, output: &mut out }
            .run()
            .unwrap();

        let f = |v: R| v.to_f32() as f64;
        let eff = |i: usize, j: usize, w: R| -> f64 {
            let jwv = if use_jw[i] { f(jw[i][j / 4][j % 4]).clamp(0.0, 1.0) } else { 1.0 };
            f(w) * jwv
        };
        for j in 0..joints {
            let l: Vec<(T64, f64)> =
                (0..layers).map(|i| (poses[i][j], f(lw[i]).max(0.0) * eff(i, j, R::ONE))).collect();
            let a: Vec<(T64, f64)> = (0..additive).map(|i| (deltas[i][j], eff(layers + i, j, aw[i]))).collect();
            let e = reference(&l, rest[j], f(threshold), &a);
            let got = from_r(&out[j / 4].lane(j % 4));
            for i in 0..3 {
                worst_v = worst_v.max((got.t[i] - e.t[i]).abs()).max((got.s[i] - e.s[i]).abs());
            }
            worst_q = worst_q.max(qangle(got.q, e.q));
        }
    }
    (worst_v, worst_q)
}

#[test]
fn f32_blend_matches_f64_reference() {
    let (v, q) = blend_errors::<f32>(0x1234_5678, 23, if cfg!(miri) { 4 } else { 300 });
    std::println!("f32 blend error: translation/scale {v:.3e}, rotation {q:.3e} rad");
    assert!(v < 1.0e-6, "translation/scale error {v:e}");
    assert!(q < 1.0e-6, "rotation error {q:e} rad");
}

#[test]
fn q16_blend_matches_f64_reference() {
    let (v, q) = blend_errors::<Q16>(0x9e37_79b9, 23, if cfg!(miri) { 2 } else { 300 });
    std::println!("Q16 blend error: translation/scale {v:.3e}, rotation {q:.3e} rad");
    assert!(v < 1.0e-3, "translation/scale error {v:e}");
    assert!(q < 1.0e-3, "rotation error {q:e} rad");
}

fn lane_t(t: f32) -> Transform<f32> {
    Transform { translation: Vec3::new(t, 0.0, 0.0), ..Transform::IDENTITY }
}

#[test]
fn weights_normalize_and_threshold_fills_rest() {
    let rest = [SoaTransform::from_transforms([lane_t(10.0); 4])];
    let a = [SoaTransform::from_transforms([lane_t(1.0); 4])];
    let b = [SoaTransform::from_transforms([lane_t(3.0); 4])];
    let run = |layers: &[Layer<f32>], threshold: f32| {
        let mut out = [SoaTransform::IDENTITY];
        BlendingJob { layers, additive: &[], rest_pose: &rest, threshold, output: &mut out }.run().unwrap();
        out[0].translation.x
    };
    // Normalized: 2 × a and 2 × b average to 2.
    assert_eq!(run(&[Layer::new(&a, 2.0), Layer::new(&b, 2.0)], 0.1), [2.0; 4]);
    // 1 : 3 weights.
    assert_eq!(run(&[Layer::new(&a, 0.5), Layer::new(&b, 1.5)], 0.1), [2.5; 4]);
    // Negative weights count as 0.
    assert_eq!(run(&[Layer::new(&a, -1.0), Layer::new(&b, 1.0)], 0.1), [3.0; 4]);
    // Below the threshold, the rest pose takes the missing weight: 0.25 a + 0.75 rest.
    assert_eq!(run(&[Layer::new(&a, 0.25)], 1.0), [0.25 * 1.0 + 0.75 * 10.0; 4]);
    // No weight at all: the rest pose.
    assert_eq!(run(&[Layer::new(&a, 0.0)], 0.1), [10.0; 4]);
    // Per-joint weights: lane 0 only a, lane 1 only b, lane 2 half each, lane 3 none (rest).
    let ja = [[1.0, 0.0, 0.5, 0.0]];
    let jb = [[0.0, 1.0, 0.5, f32::NAN]];
    let la = Layer { transform: &a, weight: 1.0, joint_weights: Some(&ja) };
    let lb = Layer { transform: &b, weight: 1.0, joint_weights: Some(&jb) };
    assert_eq!(run(&[la, lb], 0.1), [1.0, 3.0, 2.0, 10.0]);
}

/// Uniform layers (one loop with the sums in registers on hosts) and the same layers with
/// per-joint weights of 1 (one pass per layer) give the same bits; except where the build has
/// AVX2 for two layers of positive weight, whose eight-lane kernel rounds differently (then
/// within 1e-6).
#[test]
fn uniform_and_per_joint_paths_agree_bit_for_bit() {
    let mut rng = Rng(7);
    for case in 0..if cfg!(miri) { 52 } else { 200 } {
        let joints = 1 + case % 13;
        let rest = pose::<f32>(&(0..joints).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect::<Vec<_>>());
        let layers: Vec<Vec<SoaTransform<f32>>> = (0..1 + case % 4)
            .map(|_| pose(&(0..joints).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect::<Vec<_>>()))
            .collect();
        let weights: Vec<f32> = layers.iter().map(|_| rng.range(0.0, 2.0) as f32).collect();
        let ones = std::vec![[1.0f32; 4]; rest.len()];
        let uniform: Vec<Layer<f32>> = layers.iter().zip(&weights).map(|(l, &w)| Layer::new(l, w)).collect();
        let per_joint: Vec<Layer<f32>> = layers
            .iter()
            .zip(&weights)
            .map(|(l, &w)| Layer { transform: l, weight: w, joint_weights: Some(&ones) })
            .collect();
        let threshold = 0.05;
        let mut a = std::vec![SoaTransform::IDENTITY; rest.len()];
        let mut b = a.clone();
        BlendingJob { layers: &uniform, additive: &[], rest_pose: &rest, threshold, output: &mut a }.run().unwrap();
        BlendingJob { layers: &per_joint, additive: &[], rest_pose: &rest, threshold, output: &mut b }.run().unwrap();
        if crate::platform::jobs_pair() && weights.len() == 2 && weights.iter().all(|&w| w > 0.0) {
            assert!(max_difference(&a, &b) < 1.0e-6, "case {case}");
        } else {
            assert_eq!(a, b, "case {case}");
        }
    }
}

/// The largest difference between two poses' components.
fn max_difference(a: &[SoaTransform<f32>], b: &[SoaTransform<f32>]) -> f32 {
    let parts = |x: &SoaTransform<f32>| {
        let (t, q, s) = (x.translation, x.rotation, x.scale);
        [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z]
    };
    let mut worst = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        for (p, q) in parts(x).iter().zip(parts(y).iter()) {
            for l in 0..4 {
                worst = worst.max((p[l] - q[l]).abs());
            }
        }
    }
    worst
}

/// Two uniform layers of positive weights, the usual crossfade (the eight-lane kernel where the
/// build has AVX2): within the f64 reference's bounds for weights of any ratio, and a rotation
/// sum that vanishes or is NaN in some lane gives the identity there, as the passes do.
#[test]
fn two_uniform_layers_match_f64_reference_and_degenerate_sums_give_identity() {
    let mut rng = Rng(0x0bad_cafe);
    let (mut worst_v, mut worst_q) = (0.0f64, 0.0f64);
    for case in 0..if cfg!(miri) { 4 } else { 200 } {
        let joints = 1 + case % 23;
        let base: Vec<Q64> = (0..joints)
            .map(|_| qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]))
            .collect();
        let make =
            |rng: &mut Rng| -> Vec<T64> { (0..joints).map(|j| through::<f32>(&random_t64(rng, base[j]))).collect() };
        let (a, b, rest) = (make(&mut rng), make(&mut rng), make(&mut rng));
        let wa = rng.range(1.0e-3, 2.0) as f32;
        let wb = if case % 3 == 0 { 1.0 - wa } else { rng.range(1.0e-3, 2.0) as f32 };
        if wb <= 0.0 {
            continue;
        }
        let (pa, pb) = (pose::<f32>(&a), pose::<f32>(&b));
        let mut out = std::vec![SoaTransform::IDENTITY; pa.len()];
        BlendingJob {
            layers: &[Layer::new(&pa, wa), Layer::new(&pb, wb)],
            additive: &[],
            rest_pose: &pose::<f32>(&rest),
            threshold: 1.0e-3,
            output: &mut out,
        }
        .run()
        .unwrap();
        for j in 0..joints {
            let e = reference(&[(a[j], f64::from(wa)), (b[j], f64::from(wb))], rest[j], 1.0e-3, &[]);
            let got = from_r(&out[j / 4].lane(j % 4));
            for i in 0..3 {
                worst_v = worst_v.max((got.t[i] - e.t[i]).abs()).max((got.s[i] - e.s[i]).abs());
            }
            worst_q = worst_q.max(qangle(got.q, e.q));
        }
    }
    std::println!("two-layer blend error: translation/scale {worst_v:.3e}, rotation {worst_q:.3e} rad");
    assert!(worst_v < 1.0e-6, "translation/scale error {worst_v:e}");
    assert!(worst_q < 1.0e-6, "rotation error {worst_q:e} rad");

    // Lane 1: opposite zero-length sums; lane 2: a NaN rotation. The other lanes blend.
    let q = |x: f32, w: f32| Quat::new(x, 0.0, 0.0, w);
    let rot = |qs: [Quat<f32>; 4]| {
        let t = qs.map(|q| Transform { rotation: q, ..lane_t(1.0) });
        [SoaTransform::from_transforms(t)]
    };
    let pa = rot([q(0.0, 1.0), q(0.0, 0.0), q(f32::NAN, 1.0), q(0.6, 0.8)]);
    let pb = rot([q(0.6, 0.8), q(0.0, 0.0), q(0.0, 1.0), q(0.0, 1.0)]);
    let ones = [[1.0f32; 4]];
    let rest = [SoaTransform::IDENTITY];
    let mut fused = [SoaTransform::IDENTITY];
    let mut passes = [SoaTransform::IDENTITY];
    BlendingJob {
        layers: &[Layer::new(&pa, 0.5), Layer::new(&pb, 0.5)],
        additive: &[],
        rest_pose: &rest,
        threshold: 0.1,
        output: &mut fused,
    }
    .run()
    .unwrap();
    BlendingJob {
        layers: &[
            Layer { transform: &pa, weight: 0.5, joint_weights: Some(&ones) },
            Layer { transform: &pb, weight: 0.5, joint_weights: Some(&ones) },
        ],
        additive: &[],
        rest_pose: &rest,
        threshold: 0.1,
        output: &mut passes,
    }
    .run()
    .unwrap();
    for l in [1, 2] {
        assert_eq!(fused[0].rotation.lane(l), Quat::IDENTITY, "lane {l}");
    }
    assert!(max_difference(&fused, &passes) < 1.0e-6);
}

#[test]
fn rotations_take_the_shortest_path() {
    // Two rotations about Y, ±40°, the second given with the opposite sign: the blend is
    // the identity, not a rotation through the long way.
    let q1 = Quat::from_axis_angle(Vec3::Y, 0.7f32);
    let q2 = -Quat::from_axis_angle(Vec3::Y, -0.7f32);
    let mk = |q| [SoaTransform::from_transforms([Transform { rotation: q, ..Transform::IDENTITY }; 4])];
    let (a, b) = (mk(q1), mk(q2));
    let rest = [SoaTransform::IDENTITY];
    let mut out = [SoaTransform::IDENTITY];
    BlendingJob {
        layers: &[Layer::new(&a, 1.0), Layer::new(&b, 1.0)],
        additive: &[],
        rest_pose: &rest,
        threshold: 0.1,
        output: &mut out,
    }
    .run()
    .unwrap();
    assert!(out[0].rotation.lane(0).angle_between(Quat::IDENTITY) < 1.0e-6);
}

#[test]
fn additive_applies_and_subtracts_exactly() {
    let mut rng = Rng(77);
    let reference: Vec<T64> = (0..8).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect();
    let target: Vec<T64> = (0..8).map(|_| random_t64(&mut rng, [0.0, 0.0, 0.0, 1.0])).collect();
    let (r, t) = (pose::<f32>(&reference), pose::<f32>(&target));
    let mut delta = std::vec![SoaTransform::IDENTITY; 2];
    MakeAdditiveJob { pose: &t, reference: &r, output: &mut delta }.run().unwrap();
    // Weight 1 onto the reference gives the target back.
    let mut out = std::vec![SoaTransform::IDENTITY; 2];
    BlendingJob {
        layers: &[Layer::new(&r, 1.0)],
        additive: &[Layer::new(&delta, 1.0)],
        rest_pose: &r,
        threshold: 0.1,
        output: &mut out,
    }
    .run()
    .unwrap();
    let mut worst = (0.0f32, 0.0f32);
    for j in 0..8 {
        let (g, e) = (out[j / 4].lane(j % 4), t[j / 4].lane(j % 4));
        worst.0 = worst.0.max((g.translation - e.translation).max_abs()).max((g.scale - e.scale).max_abs());
        worst.1 = worst.1.max(g.rotation.angle_between(e.rotation));
    }
    assert!(worst.0 < 1.0e-5 && worst.1 < 1.0e-5, "{worst:?}");
    // Adding with weight 1 then subtracting with weight −1 returns the base.
    BlendingJob {
        layers: &[Layer::new(&t, 1.0)],
        additive: &[Layer::new(&delta, 1.0), Layer::new(&delta, -1.0)],
        rest_pose: &r,
        threshold: 0.1,
        output: &mut out,
    }
    .run()
    .unwrap();
    let mut worst = (0.0f32, 0.0f32);
    for j in 0..8 {
        let (g, e) = (out[j / 4].lane(j % 4), t[j / 4].lane(j % 4));
        worst.0 = worst.0.max((g.translation - e.translation).max_abs()).max((g.scale - e.scale).max_abs());
        worst.1 = worst.1.max(g.rotation.angle_between(e.rotation));
    }
    assert!(worst.0 < 1.0e-5 && worst.1 < 1.0e-5, "{worst:?}");
    // Weight 0.5 of a pure rotation delta of 80° about X rotates by 40°.
    let d = [SoaTransform::from_transforms(
        [Transform { rotation: Quat::from_axis_angle(Vec3::X, 1.4f32), ..Transform::IDENTITY }; 4],
    )];
    let id = [SoaTransform::IDENTITY];
    let mut o = [SoaTransform::IDENTITY];
    BlendingJob {
        layers: &[Layer::new(&id, 1.0)],
        additive: &[Layer::new(&d, 0.5)],
        rest_pose: &id,
        threshold: 0.1,
        output: &mut o,
    }
    .run()
    .unwrap();
    let a = o[0].rotation.lane(0).angle_between(Quat::IDENTITY);
    // nlerp from identity is not constant-speed: within 1° of half the angle.
    assert!((a - 0.7).abs() < 0.02, "{a}");
}

/// Random inputs for [`kernels_follow_the_rule`]: `joints` joints, each layer's rotations near
/// one rotation per joint (so that no sum's hemisphere test sits at a rounding's distance from
/// 0); up to four normal layers with weights from −0.5 to 2 (some 0), per-joint weights from
/// −0.5 to 1.5 (some 0, some NaN) on some layers, up to two additive layers on some cases.
struct RuleCase<R: Real> {
    rest: Vec<SoaTransform<R>>,
    layers: Vec<OwnedLayer<R>>,
    additive: Vec<OwnedLayer<R>>,
    threshold: R,
}

/// A layer's pose, weight and per-joint weights, owned.
type OwnedLayer<R> = (Vec<SoaTransform<R>>, R, Option<Vec<[R; 4]>>);

impl<R: Real> RuleCase<R> {
    fn random(rng: &mut Rng, joints: usize, per_joint: bool, additive: bool) -> Self {
        let bases: Vec<Q64> = (0..joints)
            .map(|_| qnorm([rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]))
            .collect();
        let pose_near = |rng: &mut Rng| pose::<R>(&bases.iter().map(|&b| random_t64(rng, b)).collect::<Vec<_>>());
        let rest = pose_near(rng);
        let soa = rest.len();
        let joint_weights = |rng: &mut Rng| {
            let w = |rng: &mut Rng| match rng.next() {
                x if x < 0.1 => R::ZERO,
                x if x < 0.15 && !R::FIXED_POINT => R::from_f32(f32::NAN),
                _ => R::from_f32(rng.range(-0.5, 1.5) as f32),
            };
            (0..soa).map(|_| [w(rng), w(rng), w(rng), w(rng)]).collect::<Vec<_>>()
        };
        let count = (rng.next() * 5.0) as usize;
        let layers = (0..count)
            .map(|_| {
                let p = pose_near(rng);
                let w = if rng.next() < 0.15 { 0.0 } else { rng.range(-0.5, 2.0) };
                let jw = (per_joint && rng.next() < 0.6).then(|| joint_weights(rng));
                (p, R::from_f32(w as f32), jw)
            })
            .collect();
        let count = if additive { (rng.next() * 3.0) as usize } else { 0 };
        let additive = (0..count)
            .map(|_| {
                let p = pose_near(rng);
                let jw = (rng.next() < 0.5).then(|| joint_weights(rng));
                (p, R::from_f32(rng.range(-1.2, 1.2) as f32), jw)
            })
            .collect();
        RuleCase { rest, layers, additive, threshold: R::from_f32(rng.range(0.05, 1.5) as f32) }
    }

    /// The job's output and the rule's for this case.
    fn run(&self) -> (Vec<SoaTransform<R>>, Vec<SoaTransform<R>>) {
        let (layers, additive) = (as_layers(&self.layers), as_layers(&self.additive));
        let mut job = std::vec![SoaTransform::IDENTITY; self.rest.len()];
        let mut rule = job.clone();
        BlendingJob {
            layers: &layers,
            additive: &additive,
            rest_pose: &self.rest,
            threshold: self.threshold,
            output: &mut job,
        }
        .run()
        .unwrap();
        super::rule::blend(&layers, &additive, &self.rest, self.threshold, &mut rule);
        (job, rule)
    }
}

/// [`Layer`]s over a [`RuleCase`]'s poses, weights and per-joint weights.
fn as_layers<R: Real>(l: &[OwnedLayer<R>]) -> Vec<Layer<'_, R>> {
    l.iter().map(|(p, w, jw)| Layer { transform: p, weight: *w, joint_weights: jw.as_deref() }).collect()
}

/// Each component of `x`, four lanes each.
fn components<R: Real>(x: &SoaTransform<R>) -> [[R; 4]; 10] {
    let (t, q, s) = (x.translation, x.rotation, x.scale);
    [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z]
}

/// The kernels against the rule (`blending/rule.rs`) on random inputs, in each kernel set this
/// build and CPU have: every path (the passes with per-joint weights, a rest pose filled in
/// below the threshold and additive layers; the uniform blend in one loop; the two-layer
/// crossfade, eight lanes wide where the set has AVX2) in `f32`, and the passes in Q16. Kernels
/// that do not fuse multiply-adds give the rule's bits; fused ones (the x86-64-v3 set, an
/// x86-64-v3 build) stay within 2⁻¹⁸ of them, relative to values above 1.
#[test]
fn kernels_follow_the_rule() {
    fn check<R: Real>(seed: u32, cases: usize) {
        let mut rng = Rng(seed);
        for case in 0..cases {
            let joints = 1 + case % 11;
            let c = RuleCase::<R>::random(&mut rng, joints, case % 3 != 0, case % 4 == 1);
            for kernels in [Kernels::Build, Kernels::X86_64V3] {
                let Some((exact, (job, rule))) =
                    crate::platform::dispatch::with_kernels(kernels, || (!crate::platform::jobs_fuse(), c.run()))
                else {
                    continue;
                };
                for (e, (a, b)) in job.iter().zip(&rule).enumerate() {
                    for (ca, cb) in components(a).iter().zip(components(b).iter()) {
                        for l in 0..4 {
                            let (x, y) = (ca[l], cb[l]);
                            let ok = if R::FIXED_POINT {
                                x == y
                            } else if exact {
                                x.to_f32().to_bits() == y.to_f32().to_bits()
                            } else {
                                let (x, y) = (x.to_f32(), y.to_f32());
                                x.to_bits() == y.to_bits() || (x - y).abs() <= x.abs().max(1.0) / 262_144.0
                            };
                            assert!(ok, "case {case}, {kernels:?}, element {e}, lane {l}: job {x:?}, rule {y:?}");
                        }
                    }
                }
            }
        }
    }
    let cases = if cfg!(miri) { 12 } else { 600 };
    check::<f32>(0x5eed_0001, cases);
    check::<Q16>(0x5eed_0002, cases / 2);
}
