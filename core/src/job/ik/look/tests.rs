extern crate std;

use std::vec::Vec;

use super::*;
use crate::job::ik::apply_correction;
use crate::job::LocalToModelJob;
use crate::math::{SoaTransform, Transform};
use crate::real::Q16;
use crate::skeleton::{Skeleton, NO_PARENT};

// The tests' generator, with the draws these tests add to it (`Draws`).
use crate::test_support::Rng64 as Rng;

trait Draws {
    fn unit(&mut self) -> Vec3<f32>;
    fn quat(&mut self) -> Quat<f32>;
}

impl Draws for Rng {
    fn unit(&mut self) -> Vec3<f32> {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0) as f32, self.range(-1.0, 1.0) as f32, self.range(-1.0, 1.0) as f32);
            if v.length() > 0.1 && v.length() <= 1.0 {
                return v.normalize_or_zero();
            }
        }
    }
    fn quat(&mut self) -> Quat<f32> {
        let axis = self.unit();
        Quat::from_axis_angle(axis, self.range(-3.1, 3.1) as f32)
    }
}

/// A skeleton: joint 0 a root, then the look chain's `joints` joints, each `spacing` times a
/// random length from its parent.
fn rig<R: Real>(rng: &mut Rng, joints: usize, spacing: f32) -> (Skeleton<R, 2>, Vec<u16>) {
    let mut parents = std::vec![NO_PARENT];
    let mut rest = std::vec![Transform::new(Vec3::new(0.0, 1.0, 0.0), rng.quat(), Vec3::ONE)];
    for k in 0..joints {
        parents.push(k as i16);
        let t = rng.unit() * (spacing * rng.range(0.5, 1.0) as f32);
        rest.push(Transform::new(t, rng.quat(), Vec3::ONE));
    }
    let r = |v: Vec3<f32>| Vec3::new(R::from_f32(v.x), R::from_f32(v.y), R::from_f32(v.z));
    let q =
        |q: Quat<f32>| Quat::new(R::from_f32(q.x), R::from_f32(q.y), R::from_f32(q.z), R::from_f32(q.w)).normalize();
    let rest: Vec<Transform<R>> =
        rest.iter().map(|t| Transform::new(r(t.translation), q(t.rotation), Vec3::ONE)).collect();
    let names: Vec<std::string::String> = (0..parents.len()).map(|j| std::format!("j{j}")).collect();
    let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
    (Skeleton::new(&parents, &rest, &names).unwrap(), (1..=joints as u16).collect())
}

fn model<R: Real>(s: &Skeleton<R, 2>, pose: &[SoaTransform<R>]) -> Vec<Mat4<R>> {
    let mut m = std::vec![Mat4::IDENTITY; s.num_joints()];
    LocalToModelJob::new(s.view(), pose, &mut m).run().unwrap();
    m
}

/// The angle of a rotation, in `[0, π]`.
fn angle_of(q: Quat<f32>) -> f64 {
    let v = (f64::from(q.x).powi(2) + f64::from(q.y).powi(2) + f64::from(q.z).powi(2)).sqrt();
    2.0 * v.atan2(f64::from(q.w).abs())
}

/// The model-space rotation that aims the joint `m`'s +Z at `target` with its +Y towards
/// `pole` (the aim rule with no offset), from a look-at basis in f64.
fn aim_rotation(m: &Mat4<f32>, target: Vec3<f32>, pole: Vec3<f32>) -> Quat<f32> {
    let d = (target - m.translation()).normalize_or_zero();
    let y = (pole - d * pole.dot(d)).normalize_or_zero();
    let x = y.cross(d);
    let wanted = Quat::from_mat3_cols([x, y, d]);
    let current = super::rotation_of(m).unwrap();
    (wanted * current.conjugate()).normalize()
}

/// Runs the job on the rest pose; returns the report, the corrections and the corrected model
/// matrices.
#[allow(clippy::too_many_arguments)]
fn look(
    s: &Skeleton<f32, 2>,
    chain: &[u16],
    target: Vec3<f32>,
    offset: Vec3<f32>,
    weights: &[f32],
    maxima: &[f32],
) -> (LookReport<f32>, Vec<Quat<f32>>, Vec<Mat4<f32>>) {
    let models = model(s, s.rest_pose());
    let mut corrections = std::vec![Quat::IDENTITY; chain.len()];
    let report = IkLookChainJob {
        skeleton: s.view(),
        models: &models,
        chain,
        target,
        forward: Vec3::Z,
        up: Vec3::Y,
        offset,
        pole_vector: Vec3::Y,
        twist_angle: 0.0,
        joint_weights: weights,
        max_angles: maxima,
        weight: 1.0,
        corrections: &mut corrections,
    }
    .run()
    .unwrap();
    let mut pose = s.rest_pose().to_vec();
    for (&j, &c) in chain.iter().zip(&corrections) {
        apply_correction(&mut pose, usize::from(j), c).unwrap();
    }
    (report, corrections, model(s, &pose))
}

/// How far (over its distance) the target is from the ray of the last joint's `offset` along +Z.
fn miss(m: &Mat4<f32>, offset: Vec3<f32>, target: Vec3<f32>) -> f32 {
    let origin = m.transform_point3(offset);
    let dir = m.transform_vector3(Vec3::Z).normalize_or_zero();
    let to = target - origin;
    if to.dot(dir) <= 0.0 {
        return f32::INFINITY;
    }
    (to - dir * to.dot(dir)).length() / to.length()
}

fn random_weights(rng: &mut Rng, n: usize) -> Vec<f32> {
    let w: Vec<f64> = (0..n).map(|_| rng.range(0.05, 1.0)).collect();
    let sum: f64 = w.iter().sum();
    w.iter().map(|x| (x / sum) as f32).collect()
}

/// Joints at one place: each turns its weight's share of the whole aim, about its axis.
#[test]
fn joints_take_their_weights_share() {
    let mut rng = Rng(0x10c);
    let mut worst = 0.0f64;
    for round in 0..if cfg!(miri) { 10 } else { 300 } {
        let joints = 1 + rng.below(4);
        let (s, chain) = rig::<f32>(&mut rng, joints, 0.0);
        let models = model(&s, s.rest_pose());
        let head = models[joints];
        let target = head.translation() + rng.unit() * rng.range(1.0, 5.0) as f32;
        let whole = aim_rotation(&head, target, Vec3::Y);
        let theta = angle_of(whole);
        let weights = random_weights(&mut rng, joints);
        let (report, corrections, after) =
            look(&s, &chain, target, Vec3::ZERO, &weights, &[core::f32::consts::PI; 4][..joints]);
        assert!(report.reached, "round {round}");
        for (k, c) in corrections.iter().enumerate() {
            let err = (angle_of(*c) - f64::from(weights[k]) * theta).abs();
            worst = worst.max(err);
            assert!(
                err < 2e-4,
                "round {round}: joint {k} turned {} for {}",
                angle_of(*c),
                f64::from(weights[k]) * theta
            );
        }
        // The head ends where the whole aim puts it.
        let end = super::rotation_of(&after[joints]).unwrap();
        let expect = (whole * super::rotation_of(&head).unwrap()).normalize();
        assert!(f64::from(end.angle_between(expect)) < 2e-4, "round {round}");
        assert!(miss(&after[joints], Vec3::ZERO, target) < 1e-5, "round {round}");
    }
    std::println!("look chain, shared place: share error {worst:.1e} rad");
}

/// Maxima cap a joint's turn; what it cannot take goes to the joints after it, and a joint
/// takes more than its share when the joints after it cannot take the rest.
#[test]
fn maxima_cap_and_carry() {
    let mut rng = Rng(0xca4);
    let (s, chain) = rig::<f32>(&mut rng, 3, 0.0);
    let models = model(&s, s.rest_pose());
    let head = models[3];
    // A target 1 rad from the head's forward, about its up: the whole aim is 1 rad.
    let dir = super::rotation_of(&head).unwrap().rotate(Quat::from_axis_angle(Vec3::Y, 1.0).rotate(Vec3::Z));
    let up = super::rotation_of(&head).unwrap().rotate(Vec3::Y);
    let target = head.translation() + dir * 3.0;
    let run = |weights: &[f32], maxima: &[f32]| {
        let models = model(&s, s.rest_pose());
        let mut corrections = [Quat::IDENTITY; 3];
        let report = IkLookChainJob {
            skeleton: s.view(),
            models: &models,
            chain: &chain,
            target,
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            pole_vector: up,
            twist_angle: 0.0,
            joint_weights: weights,
            max_angles: maxima,
            weight: 1.0,
            corrections: &mut corrections,
        }
        .run()
        .unwrap();
        (report, corrections.map(angle_of))
    };
    let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-4);
    // Uncapped: the shares.
    let (report, angles) = run(&[0.2, 0.3, 0.5], &[3.0; 3]);
    assert!(report.reached && close(angles, [0.2, 0.3, 0.5]), "{angles:?}");
    // Capped: 0.2 of 0.5, then 0.3 of the remaining 0.8's share of 1, then the rest, 0.5.
    let (report, angles) = run(&[0.5, 0.5, 0.0], &[0.2, 0.3, 3.0]);
    assert!(report.reached && close(angles, [0.2, 0.3, 0.5]), "{angles:?}");
    // The last joint can take 0.1 only: the first takes 0.9, more than its half.
    let (report, angles) = run(&[0.5, 0.0, 0.5], &[3.0, 0.0, 0.1]);
    assert!(report.reached && close(angles, [0.9, 0.0, 0.1]), "{angles:?}");
    // Beyond the sum of the maxima: each takes its maximum, and the rest is reported.
    let (report, angles) = run(&[0.4, 0.3, 0.3], &[0.2, 0.3, 0.1]);
    assert!(!report.reached && close(angles, [0.2, 0.3, 0.1]), "{angles:?}");
    assert!((f64::from(report.remaining) - 0.4).abs() < 1e-4, "{report:?}");
}

/// Every turn stays within its maximum. With the joints at one place the aim is reached
/// exactly when it is within the sum of the maxima (each joint at its maximum when it is not);
/// with the joints apart (a spine, a neck, a head 0.05 to 0.1 apart, the target 1 to 6 away),
/// turning a joint moves those after it, and the aim is reached whenever it is within 0.9 of
/// the sum.
#[test]
fn aim_reached_within_the_maxima() {
    for (spacing, margin) in [(0.0f32, 1e-3), (0.1, 0.1)] {
        let mut rng = Rng(0x5911e);
        let (mut reached, mut within, mut beyond) = (0, 0, 0);
        let rounds = if cfg!(miri) { 10 } else { 1000 };
        for round in 0..rounds {
            let joints = 1 + rng.below(4);
            let (s, chain) = rig::<f32>(&mut rng, joints, spacing);
            let models = model(&s, s.rest_pose());
            let head = models[joints];
            let target = head.translation() + rng.unit() * rng.range(1.0, 6.0) as f32;
            let offset = if spacing == 0.0 { Vec3::ZERO } else { rng.unit() * 0.02 };
            let theta = angle_of(aim_rotation(&head, target, Vec3::Y));
            let weights = random_weights(&mut rng, joints);
            let maxima: Vec<f32> = (0..joints).map(|_| rng.range(0.1, 1.5) as f32).collect();
            let (report, corrections, after) = look(&s, &chain, target, offset, &weights, &maxima);
            for (k, c) in corrections.iter().enumerate() {
                assert!(angle_of(*c) <= f64::from(maxima[k]) + 1e-5, "round {round}: joint {k}");
            }
            let sum: f64 = maxima.iter().map(|&m| f64::from(m)).sum();
            if theta <= (1.0 - margin) * sum {
                within += 1;
                assert!(report.reached, "spacing {spacing} round {round}: {theta} of {sum}");
            }
            if spacing == 0.0 && theta >= (1.0 + margin) * sum {
                beyond += 1;
                assert!(!report.reached, "round {round}");
                assert!((f64::from(report.remaining) - (theta - sum)).abs() < 1e-4, "round {round}");
                for (k, c) in corrections.iter().enumerate() {
                    assert!((angle_of(*c) - f64::from(maxima[k])).abs() < 1e-4, "round {round}: joint {k}");
                }
            }
            if report.reached {
                reached += 1;
                assert!(miss(&after[joints], offset, target) < 1e-4, "round {round}");
            }
        }
        std::println!(
            "look chain, joints {spacing} apart: {reached} of {rounds} reached, {within} within {} of the sum \
             of the maxima (all reached), {beyond} beyond it",
            1.0 - margin
        );
        // Both kinds of case are drawn (a fifth of the rounds each at least).
        assert!(within >= rounds / 5 && (spacing > 0.0 || beyond >= rounds / 5), "{within} {beyond}");
    }
}

/// Q16: the aim reached as in f32.
#[test]
fn q16_look() {
    let mut rng = Rng(0x16);
    for round in 0..if cfg!(miri) { 5 } else { 200 } {
        let seed = rng.0;
        let (s, chain) = rig::<Q16>(&mut Rng(seed), 3, 0.3);
        let _ = rig::<f32>(&mut rng, 3, 0.3);
        let models = model(&s, s.rest_pose());
        let head = models[3];
        let target = head.translation() + {
            let u = rng.unit() * rng.range(1.5, 4.0) as f32;
            Vec3::new(Q16::from_f32(u.x), Q16::from_f32(u.y), Q16::from_f32(u.z))
        };
        let third = Q16::ratio(1, 3);
        let mut corrections = [Quat::IDENTITY; 3];
        let report = IkLookChainJob {
            skeleton: s.view(),
            models: &models,
            chain: &chain,
            target,
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            pole_vector: Vec3::Y,
            twist_angle: Q16::ZERO,
            joint_weights: &[third, third, Q16::ONE - third - third],
            max_angles: &[Q16::PI; 3],
            weight: Q16::ONE,
            corrections: &mut corrections,
        }
        .run()
        .unwrap();
        assert!(report.reached, "round {round}");
        let mut pose = s.rest_pose().to_vec();
        for (&j, &c) in chain.iter().zip(&corrections) {
            apply_correction(&mut pose, usize::from(j), c).unwrap();
        }
        let m = model(&s, &pose)[3];
        let f = |v: Vec3<Q16>| Vec3::new(v.x.to_f32(), v.y.to_f32(), v.z.to_f32());
        let dir = f(m.transform_vector3(Vec3::Z)).normalize_or_zero();
        let to = f(target) - f(m.translation());
        let miss = (to - dir * to.dot(dir)).length() / to.length();
        assert!(miss < 2e-3, "round {round}: {miss}");
    }
}

/// Bad input: typed errors, nothing written; weight 0 is the identity.
#[test]
fn bad_input_and_weight() {
    let mut rng = Rng(3);
    let (s, chain) = rig::<f32>(&mut rng, 3, 0.3);
    let models = model(&s, s.rest_pose());
    let sentinel = Quat::new(9.0f32, 9.0, 9.0, 9.0);
    struct Case<'a> {
        chain: &'a [u16],
        target: Vec3<f32>,
        forward: Vec3<f32>,
        weights: &'a [f32],
        maxima: &'a [f32],
        weight: f32,
        out: usize,
        error: JobError,
    }
    let ok = Case {
        chain: &chain,
        target: Vec3::new(3.0, 1.0, 0.0),
        forward: Vec3::Z,
        weights: &[0.25, 0.25, 0.5],
        maxima: &[1.0, 1.0, 1.0],
        weight: 1.0,
        out: 3,
        error: JobError::InvalidRange,
    };
    let cases = [
        Case { weights: &[0.25, 0.25, 0.4], error: JobError::InvalidWeight, ..ok },
        Case { weights: &[-0.25, 0.75, 0.5], error: JobError::InvalidWeight, ..ok },
        Case { weights: &[f32::NAN, 0.5, 0.5], error: JobError::InvalidWeight, ..ok },
        Case { weight: 1.5, error: JobError::InvalidWeight, ..ok },
        Case { maxima: &[1.0, -0.1, 1.0], error: JobError::InvalidRange, ..ok },
        Case { maxima: &[1.0, 4.0, 1.0], error: JobError::InvalidRange, ..ok },
        Case { maxima: &[1.0, f32::INFINITY, 1.0], error: JobError::InvalidRange, ..ok },
        Case { weights: &[0.5, 0.5], error: JobError::LengthMismatch, ..ok },
        Case { maxima: &[1.0, 1.0], error: JobError::LengthMismatch, ..ok },
        Case { out: 2, error: JobError::OutputTooSmall, ..ok },
        Case { chain: &[1, 3, 2], error: JobError::InvalidRange, ..ok },
        Case { chain: &[], weights: &[], maxima: &[], error: JobError::InvalidRange, ..ok },
        Case { chain: &[1, 2, 9], error: JobError::JointIndexOutOfRange, ..ok },
        Case { forward: Vec3::ZERO, error: JobError::InvalidAxis, ..ok },
        Case { forward: Vec3::Y, error: JobError::InvalidAxis, ..ok },
        Case { target: Vec3::new(f32::NAN, 0.0, 0.0), error: JobError::InvalidTransform, ..ok },
    ];
    for (i, c) in cases.iter().enumerate() {
        let mut out = std::vec![sentinel; c.out];
        let mut job = IkLookChainJob {
            skeleton: s.view(),
            models: &models,
            chain: c.chain,
            target: c.target,
            forward: c.forward,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            pole_vector: Vec3::Y,
            twist_angle: 0.0,
            joint_weights: c.weights,
            max_angles: c.maxima,
            weight: c.weight,
            corrections: &mut out,
        };
        assert_eq!(job.validate(), Err(c.error), "case {i}");
        assert_eq!(job.run().map(|_| ()), Err(c.error), "case {i}");
        assert!(out.iter().all(|&q| q == sentinel), "case {i}");
    }
    let mut out = [sentinel; 3];
    IkLookChainJob {
        skeleton: s.view(),
        models: &models,
        chain: &chain,
        target: Vec3::new(3.0, 1.0, 0.0),
        forward: Vec3::Z,
        up: Vec3::Y,
        offset: Vec3::ZERO,
        pole_vector: Vec3::Y,
        twist_angle: 0.0,
        joint_weights: &[0.25, 0.25, 0.5],
        max_angles: &[1.0; 3],
        weight: 0.0,
        corrections: &mut out,
    }
    .run()
    .unwrap();
    assert_eq!(out, [Quat::IDENTITY; 3]);
}
