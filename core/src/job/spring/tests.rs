extern crate std;

use std::vec::Vec;

use super::*;
use crate::job::LocalToModelJob;
use crate::math::Transform;
use crate::real::Q16;
use crate::skeleton::{Skeleton, NO_PARENT};
use crate::test_support::Rng64 as Rng;

mod reference;

use reference::{
    add, compose, dot, inverse, len, mul, norm, point, position, q_axis_angle, q_mul, scale, sub, Joint, Reference,
    Shape, Trs, IDENTITY, M, Q, V,
};

/// Joints of the test rig.
const JOINTS: usize = 16;
/// Steps per second.
const RATE: f64 = 60.0;
/// Shape kinds, in the order of the contact counts.
const KINDS: [&str; 5] = ["sphere", "inside sphere", "capsule", "inside capsule", "plane"];

/// Steps of the long runs (fewer under miri).
fn steps() -> usize {
    if cfg!(miri) {
        20
    } else {
        600
    }
}

/// The rigs of the long runs (one under miri).
fn seeds() -> &'static [u64] {
    if cfg!(miri) {
        &[0x5eed_0002]
    } else {
        &[0x5eed_0001, 0x5eed_0002, 0x5eed_0003]
    }
}

/// `x` rounded to `f32`, so that the job and the reference start from the same numbers.
fn r32(x: f64) -> f64 {
    f64::from(x as f32)
}
fn rv(v: V) -> V {
    v.map(r32)
}
fn rq(q: Q) -> Q {
    q.map(r32)
}

fn to_v<R: Real>(v: Vec3<R>) -> V {
    [v.x, v.y, v.z].map(|c| f64::from(c.to_f32()))
}
fn from_v<R: Real>(v: V) -> Vec3<R> {
    Vec3::new(R::from_f32(v[0] as f32), R::from_f32(v[1] as f32), R::from_f32(v[2] as f32))
}
fn from_q<R: Real>(q: Q) -> Quat<R> {
    Quat::new(R::from_f32(q[0] as f32), R::from_f32(q[1] as f32), R::from_f32(q[2] as f32), R::from_f32(q[3] as f32))
}
fn from_m<R: Real>(m: &M) -> Mat4<R> {
    Mat4 { cols: m.map(|c| c.map(|x| R::from_f32(x as f32))) }
}
fn to_m<R: Real>(m: &Mat4<R>) -> M {
    m.cols.map(|c| c.map(|x| f64::from(x.to_f32())))
}
fn transform<R: Real>(t: &Trs) -> Transform<R> {
    Transform::new(from_v(t.t), from_q(t.q), from_v(t.s))
}

/// A rig: a hierarchy with hair chains on a head, a skirt on the root and a branching chain,
/// its spring joints in run order and its colliders, every number exact in `f32`.
///
/// ```text
/// 0 root ─ 1 spine ─ 2 head ─ 3 A0* ─ 4 twist ─ 5 A1* ─ 6 A2* (virtual tail)
///  │                    ├─ 7 B0* ─ 8 B1* ─ 9 B end            (* spring joints)
///  │                    └─ 13 branch* ─┬─ 14 left* (virtual tail)
///  │                                   └─ 15 right* (virtual tail)
///  └─ 10 skirt0* ─ 11 skirt1* ─ 12 skirt end                  (center: the root)
/// ```
///
/// Colliders, placed on the rest pose so that each is met: a sphere on the head at A's first
/// tail; a sphere on B1 (a spring joint) at A's last tail; a capsule on the head across B's
/// end; a plane on the root just in front of the skirt's end; an inside sphere about the root
/// a little smaller than the skirt's reach; an inside capsule on the head along the branch,
/// narrower than its right leaf's reach. Chain B runs first: chain A collides with B1.
struct Rig {
    parents: Vec<Option<usize>>,
    rest: Vec<Trs>,
    joints: Vec<Joint>,
    colliders: Vec<(usize, Shape)>,
}

fn rig(seed: u64) -> Rig {
    let mut rng = Rng(seed);
    let parents = [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(5), Some(2), Some(7), Some(8), Some(0)];
    let parents: Vec<Option<usize>> =
        parents.into_iter().chain([Some(10), Some(11), Some(2), Some(13), Some(13)]).collect();
    // Each joint's distance from its parent.
    let reach = [
        (0.0, 0.0),
        (0.3, 0.4),
        (0.2, 0.3),
        (0.05, 0.08),
        (0.02, 0.04),
        (0.06, 0.1),
        (0.06, 0.1),
        (0.05, 0.08),
        (0.06, 0.1),
        (0.06, 0.1),
        (0.1, 0.15),
        (0.15, 0.2),
        (0.15, 0.2),
        (0.05, 0.06),
        (0.07, 0.09),
        (0.07, 0.09),
    ];
    let rest: Vec<Trs> = reach
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| {
            let t = if j == 0 {
                add([0.0, 1.0, 0.0], scale(rng.direction(), 0.05))
            } else {
                scale(rng.direction(), rng.range(lo, hi))
            };
            Trs { t: rv(t), q: rq(rng.rotation(core::f64::consts::PI)), s: [1.0; 3] }
        })
        .collect();
    let mut model = Vec::<M>::new();
    for j in 0..JOINTS {
        let up = parents[j].map_or(IDENTITY, |p| model[p]);
        model.push(mul(&up, &compose(&rest[j])));
    }
    let at = |j: usize| position(&model[j]);
    let local = |j: usize, p: V| rv(point(&inverse(&model[j]), p));
    let virtual_tail = |j: usize| rv(scale(norm(rest[j].t), 0.07));

    let cap_dir = rng.direction();
    let below_b = add(at(9), [0.0, -0.035, 0.0]);
    let side = norm(add([0.0, 1.0, 0.0], scale(rng.direction(), 0.3)));
    let mut n0 = inverse(&model[0]);
    n0[3] = [0.0, 0.0, 0.0, 1.0];
    let leaf = point(&model[15], virtual_tail(15));
    let (s0, s1) = (at(13), at(14));
    let u = (dot(sub(leaf, s0), sub(s1, s0)) / dot(sub(s1, s0), sub(s1, s0))).clamp(0.0, 1.0);
    let off_axis = len(sub(leaf, add(s0, scale(sub(s1, s0), u))));
    let colliders = Vec::from([
        (2, Shape::Sphere { offset: local(2, add(at(5), [0.0, -0.045, 0.0])), radius: 0.05, inside: false }),
        (8, Shape::Sphere { offset: local(8, point(&model[6], virtual_tail(6))), radius: 0.015, inside: false }),
        (
            2,
            Shape::Capsule {
                offset: local(2, add(below_b, scale(cap_dir, 0.04))),
                tail: local(2, sub(below_b, scale(cap_dir, 0.04))),
                radius: 0.04,
                inside: false,
            },
        ),
        (0, Shape::Plane { offset: local(0, add(at(12), [0.0, 0.03, 0.0])), normal: rv(point(&n0, side)) }),
        (0, Shape::Sphere { offset: [0.0; 3], radius: r32(0.93 * len(sub(at(12), at(0)))), inside: true }),
        (2, Shape::Capsule { offset: local(2, s0), tail: local(2, s1), radius: r32(0.7 * off_axis), inside: true }),
    ]);

    let mut spring = |joint: usize, child: Option<usize>, center: Option<usize>, colliders: &[usize]| Joint {
        joint,
        child,
        tail: child.map_or_else(|| virtual_tail(joint), |c| rest[c].t),
        hit: r32(rng.range(0.005, 0.02)),
        stiffness: r32(rng.range(0.5, 2.0)),
        gravity_power: r32(rng.range(0.2, 1.0)),
        gravity_dir: rv([rng.range(-0.2, 0.2), rng.range(-1.2, -0.8), rng.range(-0.2, 0.2)]),
        drag: r32(rng.range(0.3, 0.6)),
        center,
        colliders: colliders.to_vec(),
    };
    let joints = Vec::from([
        spring(7, Some(8), None, &[2]),
        spring(8, Some(9), None, &[2]),
        spring(3, Some(5), None, &[0, 1, 2]),
        spring(5, Some(6), None, &[0, 1, 2]),
        spring(6, None, None, &[0, 1, 2]),
        spring(10, Some(11), Some(0), &[3, 4]),
        spring(11, Some(12), Some(0), &[3, 4]),
        spring(13, Some(14), None, &[5, 0]),
        spring(14, None, None, &[5, 0]),
        spring(15, None, None, &[5, 0]),
    ]);
    Rig { parents, rest, joints, colliders }
}

/// The animated joints' local transforms at time `t`: the root bobs and turns, the spine
/// sways.
fn animation(rig: &Rig, t: f64) -> [(usize, Trs); 2] {
    let tau = core::f64::consts::TAU;
    let (root, spine) = (rig.rest[0], rig.rest[1]);
    let bob = [0.05 * (tau * 0.9 * t).sin(), 0.03 * (tau * 1.3 * t).sin(), 0.04 * (tau * 0.7 * t).sin()];
    let turn = q_axis_angle([0.0, 1.0, 0.0], 0.5 * (tau * 0.6 * t).sin());
    let sway = q_axis_angle(norm([1.0, 0.0, 0.3]), 0.4 * (tau * 1.1 * t).sin());
    [
        (0, Trs { t: rv(add(root.t, bob)), q: rq(q_mul(root.q, turn)), s: root.s }),
        (1, Trs { t: spine.t, q: rq(q_mul(spine.q, sway)), s: spine.s }),
    ]
}

/// Model space to world at time `t`: a translation and two turns, each swinging.
fn world_at(t: f64) -> M {
    let tau = core::f64::consts::TAU;
    let move_to = [0.3 * (tau * 0.5 * t).sin(), 0.1 * (tau * 0.3 * t).sin(), 0.15 * (tau * 0.8 * t).sin()];
    let yaw = q_axis_angle([0.0, 1.0, 0.0], 0.8 * (tau * 0.3 * t).sin());
    let roll = q_axis_angle([0.0, 0.0, 1.0], 0.4 * (tau * 0.7 * t).sin());
    compose(&Trs { t: move_to, q: q_mul(yaw, roll), s: [1.0; 3] }).map(|c| c.map(r32))
}

/// The locals, model matrices and tails of a [`Sim`].
type Snapshot<R> = (Vec<SoaTransform<R>>, Vec<Mat4<R>>, Vec<SpringTail<R>>);

/// The rig in the crate's types, with its pose, model matrices and tails.
struct Sim<R: Real> {
    skeleton: Skeleton<R, 4>,
    joints: Vec<SpringJoint<R>>,
    colliders: Vec<SpringCollider<R>>,
    table: Vec<u16>,
    locals: Vec<SoaTransform<R>>,
    models: Vec<Mat4<R>>,
    tails: Vec<SpringTail<R>>,
}

impl<R: Real> Sim<R> {
    fn new(rig: &Rig) -> Self {
        let parents: Vec<i16> = rig.parents.iter().map(|p| p.map_or(NO_PARENT, |p| p as i16)).collect();
        let rest: Vec<Transform<R>> = rig.rest.iter().map(transform).collect();
        let names: Vec<std::string::String> = (0..rig.parents.len()).map(|i| std::format!("j{i}")).collect();
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let skeleton = Skeleton::new(&parents, &rest, &names).unwrap();
        let mut table = Vec::new();
        let mut joints = Vec::new();
        let index = |j: Option<usize>| j.map_or(NO_JOINT, |j| j as u16);
        for s in &rig.joints {
            let start = table.len() as u16;
            table.extend(s.colliders.iter().map(|&c| c as u16));
            joints.push(SpringJoint {
                joint: s.joint as u16,
                child: index(s.child),
                tail: from_v(s.tail),
                hit_radius: R::from_f32(s.hit as f32),
                stiffness: R::from_f32(s.stiffness as f32),
                gravity_power: R::from_f32(s.gravity_power as f32),
                gravity_dir: from_v(s.gravity_dir),
                drag_force: R::from_f32(s.drag as f32),
                center: index(s.center),
                colliders_start: start,
                colliders_len: s.colliders.len() as u16,
            });
        }
        let shape = |s: &Shape| match *s {
            Shape::Sphere { offset, radius, inside } => {
                ColliderShape::Sphere { offset: from_v(offset), radius: R::from_f32(radius as f32), inside }
            }
            Shape::Capsule { offset, tail, radius, inside } => ColliderShape::Capsule {
                offset: from_v(offset),
                tail: from_v(tail),
                radius: R::from_f32(radius as f32),
                inside,
            },
            Shape::Plane { offset, normal } => ColliderShape::Plane { offset: from_v(offset), normal: from_v(normal) },
        };
        let colliders =
            rig.colliders.iter().map(|(j, s)| SpringCollider { joint: *j as u16, shape: shape(s) }).collect();
        let locals = skeleton.rest_pose().to_vec();
        let n = rig.joints.len();
        Sim {
            skeleton,
            joints,
            colliders,
            table,
            locals,
            models: std::vec![Mat4::IDENTITY; JOINTS],
            tails: std::vec![SpringTail::default(); n],
        }
    }

    /// Sets the animated joints and recomputes the model matrices.
    fn pose(&mut self, animated: &[(usize, Trs)]) {
        for (j, t) in animated {
            self.locals[j / 4].set_lane(j % 4, &transform(t));
        }
        LocalToModelJob::new(self.skeleton.view(), &self.locals, &mut self.models).run().unwrap();
    }

    fn job(&mut self, world: &M) -> SpringBoneJob<'_, R> {
        SpringBoneJob {
            skeleton: self.skeleton.view(),
            springs: SpringBones { joints: &self.joints, colliders: &self.colliders, joint_colliders: &self.table },
            world: from_m(world),
            locals: &mut self.locals,
            models: &mut self.models,
            tails: &mut self.tails,
        }
    }

    /// Joint `j`'s world position (in `f64`, from the job's `f32` or `Q16` numbers).
    fn world_position(&self, world: &M, j: usize) -> V {
        point(&to_m(&from_m::<R>(world)), to_v(self.models[j].translation()))
    }

    /// A fresh local-to-model of the current locals.
    fn fresh_models(&self) -> Vec<Mat4<R>> {
        let mut fresh = std::vec![Mat4::IDENTITY; JOINTS];
        LocalToModelJob::new(self.skeleton.view(), &self.locals, &mut fresh).run().unwrap();
        fresh
    }

    /// Everything the job writes, for the checks that nothing changed.
    fn snapshot(&self) -> Snapshot<R> {
        (self.locals.clone(), self.models.clone(), self.tails.clone())
    }
}

/// The job and the reference side by side on one rig.
struct Pair {
    rig: Rig,
    reference: Reference,
    sim: Sim<f32>,
}

impl Pair {
    fn new(seed: u64) -> Self {
        let rig = rig(seed);
        let reference =
            Reference::new(rig.parents.clone(), rig.rest.clone(), rig.joints.clone(), rig.colliders.clone());
        let sim = Sim::new(&rig);
        Pair { rig, reference, sim }
    }

    /// Poses both at time `t`.
    fn pose(&mut self, t: f64) -> M {
        let animated = animation(&self.rig, t);
        for (j, x) in animated {
            self.reference.local[j] = x;
        }
        self.sim.pose(&animated);
        let world = world_at(t);
        self.reference.world = world;
        world
    }

    /// The largest distance between the job's and the reference's tails (current and
    /// previous) and world positions of the joints.
    fn error(&self, world: &M) -> (f64, f64) {
        let mut tails = 0.0f64;
        for (t, (c, p)) in self.sim.tails.iter().zip(&self.reference.tails) {
            tails = tails.max(len(sub(to_v(t.current), *c))).max(len(sub(to_v(t.prev), *p)));
        }
        let mut joints = 0.0f64;
        for j in 0..JOINTS {
            joints = joints.max(len(sub(self.sim.world_position(world, j), position(&self.reference.w[j]))));
        }
        (tails, joints)
    }
}

/// Bound on the distances between the `f32` job and the `f64` reference over the runs below,
/// tails and joints, in model units (the rig is about 1 unit tall, its bones 0.02 to 0.4
/// long, the world moves it by up to 0.35): measured up to 4.3e-6, where a tail passes close
/// to a capsule's axis and the push's direction is ill-conditioned.
const F32_TOLERANCE: f64 = 1.0e-5;
/// Bound on the median over the steps of the largest distance: measured up to 4e-7.
const F32_TYPICAL: f64 = 1.0e-6;

#[test]
fn matches_the_f64_reference() {
    let n = steps();
    let dt = r32(1.0 / RATE);
    for &seed in seeds() {
        let mut pair = Pair::new(seed);
        let world = pair.pose(0.0);
        pair.reference.reset();
        pair.sim.job(&world).reset().unwrap();
        let (mut worst_tail, mut worst_joint) = pair.error(&world);
        let mut hit_steps = [0usize; 5];
        let mut per_step = Vec::with_capacity(n);
        let (mut job_contacts, mut ref_contacts) = (0u64, 0u64);
        for k in 1..=n {
            let world = pair.pose(k as f64 / RATE);
            let kinds = pair.reference.step(dt);
            let report = pair.sim.job(&world).step(dt as f32).unwrap();
            assert_eq!(report.skipped, 0);
            for (steps, &c) in hit_steps.iter_mut().zip(&kinds) {
                *steps += usize::from(c > 0);
            }
            ref_contacts += kinds.iter().map(|&c| u64::from(c)).sum::<u64>();
            job_contacts += u64::from(report.contacts);
            let (t, j) = pair.error(&world);
            per_step.push(t.max(j));
            worst_tail = worst_tail.max(t);
            worst_joint = worst_joint.max(j);
        }
        per_step.sort_by(f64::total_cmp);
        let median = per_step.get(n / 2).copied().unwrap_or(0.0);
        std::println!(
            "seed {seed:#x}: {n} steps, largest tail error {worst_tail:.3e}, joint error {worst_joint:.3e}, \
             median of the steps' largest {median:.3e}; contacts {job_contacts} (reference {ref_contacts}), \
             steps with a hit by kind {hit_steps:?}"
        );
        assert!(worst_tail < F32_TOLERANCE && worst_joint < F32_TOLERANCE, "seed {seed:#x}");
        assert!(median < F32_TYPICAL, "seed {seed:#x}");
        // Each shape is met in at least one step in twenty.
        for (kind, &s) in KINDS.iter().zip(&hit_steps) {
            assert!(s * 20 >= n, "seed {seed:#x}: {kind} met in {s} of {n} steps");
        }
        // The contacts counted agree with the reference's (a test near a distance of 0 may fall
        // either way).
        assert!(job_contacts.abs_diff(ref_contacts) * 100 <= ref_contacts, "{job_contacts} vs {ref_contacts}");
        // The end state is a local-to-model of the final locals.
        assert_eq!(pair.sim.models, pair.sim.fresh_models());
    }
}

impl<R: Real> Sim<R> {
    /// One step of `dt` seconds under `world`.
    fn step(&mut self, world: &M, dt: f64) -> SpringReport {
        self.job(world).step(R::from_f32(dt as f32)).unwrap()
    }

    /// The rig posed at time 0 and reset, then run for `steps` steps.
    fn run(rig: &Rig, steps: usize) -> Self {
        let mut sim = Sim::new(rig);
        sim.pose(&animation(rig, 0.0));
        sim.job(&world_at(0.0)).reset().unwrap();
        for k in 1..=steps {
            let t = k as f64 / RATE;
            sim.pose(&animation(rig, t));
            sim.step(&world_at(t), 1.0 / RATE);
        }
        sim
    }
}

/// Bound on the distances between the Q16 and the `f32` job over the runs below, tails and
/// joints, model units: measured up to 1.8e-3, at the moments the `f32` job is furthest from
/// the `f64` reference too (a push whose direction is ill-conditioned), where Q16's coarser
/// rounding is amplified the same way (see `core/docs/spring-bones.md`).
const Q16_TOLERANCE: f64 = 3.0e-3;
/// Bound on the median over the steps of the largest distance: measured up to 1.6e-4.
const Q16_TYPICAL: f64 = 3.0e-4;

#[test]
fn q16_follows_f32() {
    let n = steps();
    for &seed in seeds() {
        let rig = rig(seed);
        let mut a = Sim::<f32>::run(&rig, 0);
        let mut b = Sim::<Q16>::run(&rig, 0);
        let mut per_step = Vec::with_capacity(n);
        let (mut worst_tail, mut worst_joint) = (0.0f64, 0.0f64);
        let (mut contacts_a, mut contacts_b) = (0u64, 0u64);
        for k in 1..=n {
            let t = k as f64 / RATE;
            let (animated, world) = (animation(&rig, t), world_at(t));
            a.pose(&animated);
            b.pose(&animated);
            contacts_a += u64::from(a.step(&world, 1.0 / RATE).contacts);
            contacts_b += u64::from(b.step(&world, 1.0 / RATE).contacts);
            let mut step = 0.0f64;
            for (ta, tb) in a.tails.iter().zip(&b.tails) {
                let e = len(sub(to_v(ta.current), to_v(tb.current)));
                worst_tail = worst_tail.max(e);
                step = step.max(e);
            }
            for j in 0..JOINTS {
                let e = len(sub(a.world_position(&world, j), b.world_position(&world, j)));
                worst_joint = worst_joint.max(e);
                step = step.max(e);
            }
            per_step.push(step);
        }
        per_step.sort_by(f64::total_cmp);
        let median = per_step.get(n / 2).copied().unwrap_or(0.0);
        std::println!(
            "Q16 against f32, seed {seed:#x}, {n} steps: largest tail distance {worst_tail:.3e}, joint distance \
             {worst_joint:.3e}, median of the steps' largest {median:.3e}; contacts {contacts_b} (f32 {contacts_a})"
        );
        assert!(worst_tail < Q16_TOLERANCE && worst_joint < Q16_TOLERANCE, "seed {seed:#x}");
        assert!(median < Q16_TYPICAL, "seed {seed:#x}");
        assert!(contacts_a.abs_diff(contacts_b) * 50 <= contacts_a, "{contacts_b} vs {contacts_a}");
        assert_eq!(b.models, b.fresh_models());
    }
}

/// What a validity case changes.
struct Case {
    joints: Vec<SpringJoint<f32>>,
    colliders: Vec<SpringCollider<f32>>,
    table: Vec<u16>,
    world: Mat4<f32>,
    lengths: [usize; 3],
}

#[test]
fn validity() {
    let rig = rig(0x5eed_0001);
    let mut sim = Sim::<f32>::run(&rig, 3);
    let base = Case {
        joints: sim.joints.clone(),
        colliders: sim.colliders.clone(),
        table: sim.table.clone(),
        world: from_m(&world_at(0.05)),
        lengths: [sim.locals.len(), sim.models.len(), sim.tails.len()],
    };
    let case = |edit: &dyn Fn(&mut Case)| {
        let mut c =
            Case { joints: base.joints.clone(), colliders: base.colliders.clone(), table: base.table.clone(), ..base };
        edit(&mut c);
        c
    };
    let dt = 1.0 / 60.0;
    let cases: [(&str, Case, JobError); 17] = [
        ("short locals", case(&|c| c.lengths[0] = 3), JobError::InputTooSmall),
        ("short models", case(&|c| c.lengths[1] = JOINTS - 1), JobError::OutputTooSmall),
        ("short tails", case(&|c| c.lengths[2] = base.joints.len() - 1), JobError::ContextTooSmall),
        ("joint", case(&|c| c.joints[2].joint = JOINTS as u16), JobError::JointIndexOutOfRange),
        ("child", case(&|c| c.joints[2].child = JOINTS as u16), JobError::JointIndexOutOfRange),
        ("center", case(&|c| c.joints[5].center = 200), JobError::JointIndexOutOfRange),
        ("collider joint", case(&|c| c.colliders[1].joint = JOINTS as u16), JobError::JointIndexOutOfRange),
        ("collider range", case(&|c| c.joints[9].colliders_len = 3), JobError::InvalidRange),
        ("collider index", case(&|c| c.table[0] = 6), JobError::InvalidRange),
        ("child not below", case(&|c| c.joints[0].child = 3), JobError::InvalidRange),
        ("child on the joint", case(&|c| c.joints[0].child = 7), JobError::InvalidRange),
        ("stiffness", case(&|c| c.joints[4].stiffness = f32::NAN), JobError::InvalidTransform),
        ("gravity", case(&|c| c.joints[4].gravity_dir.y = f32::INFINITY), JobError::InvalidTransform),
        ("hit radius", case(&|c| c.joints[4].hit_radius = -0.1), JobError::InvalidTransform),
        (
            "collider radius",
            case(&|c| c.colliders[0].shape = ColliderShape::Sphere { offset: Vec3::ZERO, radius: -1.0, inside: false }),
            JobError::InvalidTransform,
        ),
        (
            "plane",
            case(&|c| {
                c.colliders[3].shape =
                    ColliderShape::Plane { offset: Vec3::ZERO, normal: Vec3::new(f32::NAN, 0.0, 0.0) }
            }),
            JobError::InvalidTransform,
        ),
        ("world", case(&|c| c.world.cols[3][1] = f32::NAN), JobError::InvalidTransform),
    ];
    let before = sim.snapshot();
    for (name, c, error) in &cases {
        let (mut locals, mut models, mut tails) = sim.snapshot();
        let [l, m, t] = c.lengths;
        let mut job = SpringBoneJob {
            skeleton: sim.skeleton.view(),
            springs: SpringBones { joints: &c.joints, colliders: &c.colliders, joint_colliders: &c.table },
            world: c.world,
            locals: &mut locals[..l],
            models: &mut models[..m],
            tails: &mut tails[..t],
        };
        assert_eq!(job.validate(), Err(*error), "{name}");
        assert_eq!(job.reset(), Err(*error), "{name}");
        assert_eq!(job.step(dt), Err(*error), "{name}");
        assert!((locals, models, tails) == before, "{name}: an output changed");
    }
    // Bad steps: a NaN or infinite step, a NaN tail.
    for dt in [f32::NAN, f32::INFINITY] {
        assert_eq!(sim.job(&world_at(0.05)).step(dt), Err(JobError::InvalidTransform));
        assert!(sim.snapshot() == before);
    }
    for nan in [|t: &mut SpringTail<f32>| t.prev.z = f32::NAN, |t: &mut SpringTail<f32>| t.rotation.w = f32::NAN] {
        nan(&mut sim.tails[3]);
        let nan_tail = sim.snapshot();
        assert_eq!(sim.job(&world_at(0.05)).step(dt), Err(JobError::InvalidTransform));
        assert_eq!(sim.locals, nan_tail.0);
        assert_eq!(sim.models, nan_tail.1);
    }
    // A reset starts the tails afresh.
    assert!(sim.job(&world_at(0.05)).reset().is_ok());
    assert!(sim.tails.iter().all(|t| t.current.is_finite() && t.prev == t.current));
}

#[test]
fn reset_puts_the_springs_at_rest() {
    let rig = rig(0x5eed_0002);
    let mut sim = Sim::<f32>::run(&rig, if cfg!(miri) { 5 } else { 30 });
    let rest = sim.skeleton.rest_pose().to_vec();
    let lane = |pose: &[SoaTransform<f32>], j: usize| pose[j / 4].lane(j % 4);
    let turned =
        rig.joints.iter().filter(|s| lane(&sim.locals, s.joint).rotation != lane(&rest, s.joint).rotation).count();
    assert_eq!(turned, rig.joints.len(), "the steps turned every spring joint");

    let t = 0.77;
    sim.pose(&animation(&rig, t));
    let world = world_at(t);
    let before = sim.locals.clone();
    assert_eq!(sim.job(&world).reset(), Ok(SpringReport::default()));
    let spring = |j: usize| rig.joints.iter().any(|s| s.joint == j);
    for j in 0..JOINTS {
        let (now, was) = (lane(&sim.locals, j), lane(&before, j));
        if spring(j) {
            assert_eq!(now.rotation, lane(&rest, j).rotation, "joint {j}: the rest rotation");
            assert_eq!((now.translation, now.scale), (was.translation, was.scale), "joint {j}: as animated");
        } else {
            assert_eq!(now, was, "joint {j} is not a spring joint");
        }
    }
    assert_eq!(sim.models, sim.fresh_models());
    // Both tail points at C⁻¹ × world × model × tail, in f64 from the matrices.
    for (s, tail) in rig.joints.iter().zip(&sim.tails) {
        assert_eq!(tail.current, tail.prev);
        assert_eq!(tail.rotation, lane(&rest, s.joint).rotation);
        let at = point(&world, point(&to_m(&sim.models[s.joint]), s.tail));
        let expected = match s.center {
            Some(c) => point(&inverse(&mul(&world, &to_m(&sim.models[c]))), at),
            None => at,
        };
        let e = len(sub(to_v(tail.current), expected));
        assert!(e < 1e-6, "joint {}: {e:e}", s.joint);
    }
}

#[test]
fn a_step_starts_from_the_rotations_it_left() {
    // One run keeps the spring joints' rotations in its locals from step to step, the other
    // gets other rotations for them (as a clip would give) before each local-to-model: the
    // steps start from the tails' rotations, so both runs are the same, bit for bit.
    let rig = rig(0x5eed_0001);
    let mut kept = Sim::<f32>::run(&rig, 0);
    let mut resampled = Sim::<f32>::run(&rig, 0);
    let mut rng = Rng(0x0dd5);
    for k in 1..=if cfg!(miri) { 5 } else { 60 } {
        let t = k as f64 / RATE;
        let (animated, world) = (animation(&rig, t), world_at(t));
        kept.pose(&animated);
        let mut other = animated.to_vec();
        other.extend(rig.joints.iter().map(|s| (s.joint, Trs { q: rq(rng.rotation(3.0)), ..rig.rest[s.joint] })));
        resampled.pose(&other);
        assert_ne!(kept.locals, resampled.locals);
        assert_eq!(kept.step(&world, 1.0 / RATE), resampled.step(&world, 1.0 / RATE));
        assert!(kept.snapshot() == resampled.snapshot(), "step {k}");
    }
}

/// The joints' `SpringRest`s of `sim`.
fn rests_of<R: Real>(sim: &Sim<R>) -> Vec<SpringRest<R>> {
    let mut rests = std::vec![SpringRest::default(); sim.joints.len()];
    SpringRest::fill(&sim.skeleton.view(), &sim.joints, &mut rests).unwrap();
    rests
}

/// Poses `a` and `b` alike on `rig`'s animation and world path and steps each its own way
/// (`step(sim, world, dt)`) for 60 steps (3 under miri): both report and write the same, and
/// `a`'s matrices are a local-to-model of its locals after each step.
fn lockstep<R: Real>(
    rig: &Rig,
    a: &mut Sim<R>,
    b: &mut Sim<R>,
    step_a: impl Fn(&mut Sim<R>, &M, R) -> Result<SpringReport, JobError>,
    step_b: impl Fn(&mut Sim<R>, &M, R) -> Result<SpringReport, JobError>,
) {
    let dt = R::from_f32((1.0 / RATE) as f32);
    for k in 1..=if cfg!(miri) { 3 } else { 60 } {
        let t = k as f64 / RATE;
        let (animated, world) = (animation(rig, t), world_at(t));
        a.pose(&animated);
        b.pose(&animated);
        assert_eq!(step_a(a, &world, dt), step_b(b, &world, dt));
        assert!(a.snapshot() == b.snapshot(), "step {k}");
        assert_eq!(a.models, a.fresh_models(), "step {k}");
    }
}

/// `step_validated_springs` with the plan and the rests made once gives `step`'s bits.
fn the_prepared_step_is_the_step<R: Real>() {
    let rig = rig(0x5eed_0004);
    let mut plain = Sim::<R>::run(&rig, 0);
    let mut prepared = Sim::<R>::run(&rig, 0);
    let plan = SpringPlan::new(&prepared.skeleton.view(), &prepared.joints);
    let rests = rests_of(&prepared);
    lockstep(
        &rig,
        &mut plain,
        &mut prepared,
        |sim, world, dt| sim.job(world).step(dt),
        |sim, world, dt| sim.job(world).step_validated_springs(dt, &plan, &rests),
    );
    let dt = R::from_f32((1.0 / RATE) as f32);
    // Too few rests: refused, nothing written.
    let before = prepared.snapshot();
    let short = &rests[..rests.len() - 1];
    let world = world_at(1.5);
    assert_eq!(prepared.job(&world).step_validated_springs(dt, &plan, short), Err(JobError::ContextTooSmall));
    assert!(prepared.snapshot() == before);
}

#[test]
fn the_prepared_step_gives_the_steps_bits() {
    the_prepared_step_is_the_step::<f32>();
    the_prepared_step_is_the_step::<Q16>();
}

/// Chain B and the skirt alone run in an order whose matrices are all final when computed
/// ([`SpringPlan`]'s `ordered`): the step's shortcut gives the bits of the general bookkeeping,
/// and a local-to-model's.
fn ordered_is_general<R: Real>() {
    let rig = rig(0x5eed_0006);
    let make = || {
        let mut sim = Sim::<R>::new(&rig);
        sim.joints.retain(|s| matches!(s.joint, 7 | 8 | 10 | 11));
        sim.tails.truncate(sim.joints.len());
        sim.pose(&animation(&rig, 0.0));
        sim.job(&world_at(0.0)).reset().unwrap();
        sim
    };
    let (mut ordered, mut general) = (make(), make());
    assert_eq!(ordered.joints.len(), 4);
    let plan = SpringPlan::new(&ordered.skeleton.view(), &ordered.joints);
    assert!(plan.ordered);
    assert!(!SpringPlan::new(&ordered.skeleton.view(), &Sim::<R>::new(&rig).joints).ordered);
    let mut other = plan.clone();
    other.ordered = false;
    let rests = rests_of(&ordered);
    lockstep(
        &rig,
        &mut ordered,
        &mut general,
        |sim, world, dt| sim.job(world).step_validated_springs(dt, &plan, &rests),
        |sim, world, dt| sim.job(world).step_validated_springs(dt, &other, &rests),
    );
}

#[test]
fn an_ordered_plan_gives_the_general_bits() {
    ordered_is_general::<f32>();
    ordered_is_general::<Q16>();
}

#[test]
fn rests_refuse_a_short_buffer_or_a_missing_joint() {
    let rig = rig(0x5eed_0005);
    let sim = Sim::<f32>::new(&rig);
    let view = sim.skeleton.view();
    let n = sim.joints.len();
    let mut rests = std::vec![SpringRest::default(); n];
    assert_eq!(SpringRest::fill(&view, &sim.joints, &mut rests[..n - 1]), Err(JobError::ContextTooSmall));
    let mut bad = sim.joints.clone();
    bad[n - 1].joint = JOINTS as u16;
    assert_eq!(SpringRest::fill(&view, &bad, &mut rests), Err(JobError::JointIndexOutOfRange));
    assert!(rests.iter().all(|r| *r == SpringRest::default()), "nothing written");
    assert_eq!(SpringRest::of(&view, &bad[n - 1]), None);
    SpringRest::fill(&view, &sim.joints, &mut rests).unwrap();
    for (s, r) in sim.joints.iter().zip(&rests) {
        assert_eq!(Some(*r), SpringRest::of(&view, s));
        assert_eq!(r.axis, dir(s.tail));
    }
}

#[test]
fn a_step_of_zero_or_less_changes_nothing() {
    let rig = rig(0x5eed_0003);
    let mut sim = Sim::<f32>::run(&rig, 4);
    let before = sim.snapshot();
    let world = world_at(0.5);
    for dt in [0.0f32, -0.0, -1.0 / 60.0, -1e30] {
        assert_eq!(sim.job(&world).step(dt), Ok(SpringReport::default()));
        assert!(sim.snapshot() == before, "dt {dt}");
    }
    let mut q = Sim::<Q16>::run(&rig, 4);
    let before = q.snapshot();
    assert_eq!(q.job(&world).step(Q16::ZERO), Ok(SpringReport::default()));
    assert_eq!(q.job(&world).step(-Q16::ONE), Ok(SpringReport::default()));
    assert!(q.snapshot() == before);
}

/// Degenerate bones in one skeleton: a bone whose child sits on it, a virtual tail of length
/// 0, a center with a zero scale, a bone under a zero scale.
fn degenerate<R: Real>() {
    let at = |x: f32, y: f32, s: f32| {
        Transform::new(from_v([x.into(), y.into(), 0.0]), Quat::IDENTITY, Vec3::splat(R::from_f32(s)))
    };
    let rest = [
        at(0.0, 1.0, 1.0),
        at(0.1, 0.0, 1.0),
        at(0.0, 0.0, 1.0),
        at(0.0, 0.0, 1.0),
        at(0.0, -0.2, 1.0),
        at(0.0, -0.2, 1.0),
        at(0.3, 0.0, 0.0),
        at(0.1, 0.0, 1.0),
        at(0.0, -0.1, 1.0),
    ];
    let parents = [NO_PARENT, 0, 1, 0, 0, 4, 0, 6, 0];
    let names = ["root", "a", "b", "c", "d", "e", "f", "g", "h"];
    let skeleton = Skeleton::<R, 3>::new(&parents, &rest, &names).unwrap();
    let joint = |joint: u16, child: u16, tail: Vec3<R>, center: u16| SpringJoint {
        joint,
        child,
        tail,
        hit_radius: R::ratio(1, 50),
        stiffness: R::ONE,
        gravity_power: R::ONE,
        gravity_dir: Vec3::new(R::ZERO, -R::ONE, R::ZERO),
        drag_force: R::ratio(2, 5),
        center,
        colliders_start: 0,
        colliders_len: 1,
    };
    let v = |x: f32, y: f32| from_v::<R>([x.into(), y.into(), 0.0]);
    let joints = [
        joint(1, 2, Vec3::ZERO, NO_JOINT),
        joint(3, NO_JOINT, Vec3::ZERO, NO_JOINT),
        joint(4, 5, v(0.0, -0.2), 6),
        joint(7, NO_JOINT, v(0.07, 0.0), NO_JOINT),
        // Still (no stiffness, no gravity), its tail on the sphere's centre.
        SpringJoint { stiffness: R::ZERO, gravity_power: R::ZERO, ..joint(8, NO_JOINT, v(0.0, -0.07), 8) },
    ];
    // A sphere on the last joint's tail: the push has no direction at its centre.
    let colliders = [SpringCollider {
        joint: 8,
        shape: ColliderShape::Sphere { offset: v(0.0, -0.07), radius: R::ZERO, inside: false },
    }];
    let mut locals = skeleton.rest_pose().to_vec();
    let mut models = [Mat4::IDENTITY; 9];
    LocalToModelJob::new(skeleton.view(), &locals, &mut models).run().unwrap();
    let mut tails = [SpringTail::default(); 5];
    let mut job = SpringBoneJob {
        skeleton: skeleton.view(),
        springs: SpringBones { joints: &joints, colliders: &colliders, joint_colliders: &[0] },
        world: Mat4::from_translation(v(0.5, 0.0)),
        locals: &mut locals,
        models: &mut models,
        tails: &mut tails,
    };
    // The singular center leaves its joint's tail unset.
    assert_eq!(job.reset(), Ok(SpringReport { contacts: 0, skipped: 1 }));
    for _ in 0..if cfg!(miri) { 5 } else { 60 } {
        let report = job.step(R::ratio(1, 60)).unwrap();
        // The zero-length bone, the zero-length tail, the singular center, the bone under the
        // zero scale are skipped; the still tail meets its sphere at the centre and is not
        // pushed.
        assert_eq!(report, SpringReport { contacts: 1, skipped: 4 });
    }
    let still = locals[2].rotation.lane(0);
    assert!(still.xyz() == Vec3::ZERO && (still.w.to_f32() - 1.0).abs() < 1e-4, "the still joint has not turned");
    let finite = |m: &Mat4<R>| m.is_finite();
    assert!(models.iter().all(finite));
    assert!(tails.iter().all(|t| t.current.is_finite() && t.prev.is_finite()));
    assert!(locals.iter().all(|s| s.rotation.x.iter().chain(&s.rotation.w).all(|c| c.is_finite())));
    let mut fresh = [Mat4::IDENTITY; 9];
    LocalToModelJob::new(skeleton.view(), &locals, &mut fresh).run().unwrap();
    assert_eq!(models, fresh);
}

#[test]
fn degenerate_bones_stay_finite() {
    degenerate::<f32>();
    degenerate::<Q16>();
}
