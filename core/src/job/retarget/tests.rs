use super::*;
use crate::job::LocalToModelJob;
use crate::math::Transform;
use crate::real::Q16;
use crate::skeleton::{Skeleton, NO_PARENT};

const PARENTS: [i16; 4] = [NO_PARENT, 0, 1, 2];
const NAMES: [&str; 4] = ["armature", "hips", "spine", "head"];

fn trs<R: Real>(t: [f32; 3], axis: [f32; 3], angle: f32, s: f32) -> Transform<R> {
    let v = |a: [f32; 3]| Vec3::new(R::from_f32(a[0]), R::from_f32(a[1]), R::from_f32(a[2]));
    Transform {
        translation: v(t),
        rotation: Quat::from_axis_angle(v(axis).normalize_or_zero(), R::from_f32(angle)),
        scale: v([s; 3]),
    }
}

/// A source rig: an armature node scaled by 0.01 and turned -90° about X (a Z-up exporter's),
/// hips 95 units up, a spine and a head.
fn source<R: Real>() -> Skeleton<R, 1> {
    source_scaled(0.01)
}

/// The source rig with its armature scaled by `scale`.
fn source_scaled<R: Real>(scale: f32) -> Skeleton<R, 1> {
    let rest = [
        trs([0.0; 3], [1.0, 0.0, 0.0], -core::f32::consts::FRAC_PI_2, scale),
        trs([0.0, 0.0, 95.0], [0.0, 0.0, 1.0], 0.3, 1.0),
        trs([0.0, 0.0, 20.0], [1.0, 0.0, 0.0], 0.1, 1.0),
        trs([0.0, 0.0, 30.0], [0.0, 1.0, 0.0], -0.2, 1.0),
    ];
    Skeleton::new(&PARENTS, &rest, &NAMES).unwrap()
}

/// A target rig: no armature transform, hips 1.2 m up, other rest orientations and lengths.
fn target<R: Real>() -> Skeleton<R, 1> {
    let rest = [
        trs([0.0; 3], [0.0, 1.0, 0.0], 0.0, 1.0),
        trs([0.0, 1.2, 0.0], [0.0, 1.0, 0.0], 1.1, 1.0),
        trs([0.0, 0.3, 0.0], [0.0, 0.0, 1.0], -0.4, 1.0),
        trs([0.0, 0.25, 0.0], [1.0, 0.0, 0.0], 0.7, 1.0),
    ];
    Skeleton::new(&PARENTS, &rest, &NAMES).unwrap()
}

fn model<R: Real>(s: &Skeleton<R, 1>, pose: &[SoaTransform<R>]) -> [Mat4<R>; 4] {
    let mut m = [Mat4::IDENTITY; 4];
    LocalToModelJob::new(s.view(), pose, &mut m).run().unwrap();
    m
}

fn rotations<R: Real>(m: &[Mat4<R>; 4]) -> [Quat<R>; 4] {
    let mut q = [Quat::IDENTITY; 4];
    world_rotations(m, &mut q).unwrap();
    q
}

/// The source rig in a pose: hips moved and turned, spine and head bent.
fn source_pose<R: Real>(s: &Skeleton<R, 1>) -> [SoaTransform<R>; 1] {
    let mut pose = [s.rest_pose()[0]];
    let mut hips = pose[0].lane(1);
    hips.translation += Vec3::new(R::from_f32(10.0), R::from_f32(-4.0), R::from_f32(3.0));
    hips.rotation = Quat::from_axis_angle(Vec3::new(R::ZERO, R::ZERO, R::ONE), R::from_f32(0.9));
    pose[0].set_lane(1, &hips);
    let mut spine = pose[0].lane(2);
    spine.rotation = Quat::from_axis_angle(Vec3::new(R::ONE, R::ZERO, R::ZERO), R::from_f32(0.5)) * spine.rotation;
    pose[0].set_lane(2, &spine);
    pose
}

struct Setup<R: Real> {
    source: Skeleton<R, 1>,
    target: Skeleton<R, 1>,
    joints: [RetargetJoint<R>; 4],
    root: RetargetRoot<R>,
}

/// The target's armature is left at rest; hips, spine and head follow the source's.
fn setup<R: Real>() -> Setup<R> {
    setup_from(source::<R>())
}

fn setup_from<R: Real>(s: Skeleton<R, 1>) -> Setup<R> {
    let t = target::<R>();
    let (ms, mt) = (model(&s, s.rest_pose()), model(&t, t.rest_pose()));
    let mut joints = [RetargetJoint::UNMAPPED; 4];
    RetargetJoint::offsets(&[NO_SOURCE, 1, 2, 3], &rotations(&ms), &rotations(&mt), &mut joints).unwrap();
    let root = RetargetRoot::new(1, 1, t.view(), &mt, &ms, None).unwrap();
    Setup { source: s, target: t, joints, root }
}

fn run<R: Real>(k: &Setup<R>, source_model: &[Mat4<R>; 4]) -> [SoaTransform<R>; 1] {
    let mut world = [Quat::IDENTITY; 4];
    let mut out = [SoaTransform::IDENTITY; 1];
    RetargetJob {
        target: k.target.view(),
        joints: &k.joints,
        root: Some(k.root),
        source: source_model,
        world: &mut world,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

#[test]
fn the_rest_pose_retargets_to_the_targets_rest_pose() {
    let k = setup::<f32>();
    let out = run(&k, &model(&k.source, k.source.rest_pose()));
    for j in 0..4 {
        let (a, b) = (out[0].lane(j), k.target.rest_pose()[0].lane(j));
        assert!((a.translation - b.translation).max_abs() < 1e-5, "joint {j}");
        assert!(a.rotation.angle_between(b.rotation) < 1e-3, "joint {j}: {:?} {:?}", a.rotation, b.rotation);
    }
}

#[test]
fn a_skeleton_retargeted_onto_itself_keeps_the_pose() {
    let s = source::<f32>();
    let ms = model(&s, s.rest_pose());
    let mut joints = [RetargetJoint::UNMAPPED; 4];
    let r = rotations(&ms);
    RetargetJoint::offsets(&[0, 1, 2, 3], &r, &r, &mut joints).unwrap();
    let root = RetargetRoot::new(1, 1, s.view(), &ms, &ms, None).unwrap();
    assert_eq!(root.scale, 1.0);
    let pose = source_pose(&s);
    let k = Setup { source: s.clone(), target: s, joints, root };
    let out = run(&k, &model(&k.source, &pose));
    for j in 0..4 {
        let (a, b) = (out[0].lane(j), pose[0].lane(j));
        assert!((a.translation - b.translation).max_abs() < 1e-3, "joint {j}: {:?} {:?}", a.translation, b.translation);
        assert!(a.rotation.angle_between(b.rotation) < 1e-3, "joint {j}");
    }
}

#[test]
fn world_rotations_follow_the_source_from_each_rest_and_the_hips_path_scales() {
    let k = setup::<f32>();
    let pose = source_pose(&k.source);
    let ms = model(&k.source, &pose);
    let out = run(&k, &ms);
    let mt = model(&k.target, &out);
    let (rs, rs_rest) = (rotations(&ms), rotations(&model(&k.source, k.source.rest_pose())));
    let (rt, rt_rest) = (rotations(&mt), rotations(&model(&k.target, k.target.rest_pose())));
    for j in 1..4 {
        let want = rs[j] * rs_rest[j].conjugate() * rt_rest[j];
        assert!(rt[j].angle_between(want) < 1e-3, "joint {j}");
    }
    // The armature stays at rest.
    assert!(rt[0].angle_between(rt_rest[0]) < 1e-6);
    // Hips: the source moved 10, -4, 3 in its armature's frame (0.01 and -90° about X), that is
    // 0.1, 0.03, 0.04 m in the world; scaled by 1.2 / 0.95.
    let d = mt[1].translation() - k.target.rest_pose()[0].lane(1).translation;
    let s = 1.2 / 0.95;
    for (got, want) in [(d.x, 0.1 * s), (d.y, 0.03 * s), (d.z, 0.04 * s)] {
        assert!((got - want).abs() < 1e-5, "{d:?}");
    }
}

#[test]
fn in_place_keeps_the_vertical_part_of_the_hips_motion() {
    let mut k = setup::<f32>();
    k.root.in_place = true;
    let out = run(&k, &model(&k.source, &source_pose(&k.source)));
    let t = out[0].lane(1).translation;
    assert!(t.x.abs() < 1e-6 && t.z.abs() < 1e-6);
    assert!((t.y - (1.2 + 0.03 * 1.2 / 0.95)).abs() < 1e-5);
}

#[test]
fn q16_follows_f32() {
    // An armature scale of 0.01 leaves Q16.16 a handful of bits per axis in the model matrices;
    // at 0.5 the two follow each other.
    let (k, q) = (setup_from(source_scaled::<f32>(0.5)), setup_from(source_scaled::<Q16>(0.5)));
    let a = run(&k, &model(&k.source, &source_pose(&k.source)));
    let b = run(&q, &model(&q.source, &source_pose(&q.source)));
    for j in 0..4 {
        let (x, y) = (a[0].lane(j), b[0].lane(j));
        let yt = Vec3::new(y.translation.x.to_f32(), y.translation.y.to_f32(), y.translation.z.to_f32());
        assert!((x.translation - yt).max_abs() < 2e-3, "joint {j}: {:?} {yt:?}", x.translation);
        let yq = Quat::new(y.rotation.x.to_f32(), y.rotation.y.to_f32(), y.rotation.z.to_f32(), y.rotation.w.to_f32());
        assert!(x.rotation.angle_between(yq) < 2e-3, "joint {j}");
    }
}

#[test]
fn bad_inputs_are_refused_and_nothing_is_written() {
    let k = setup::<f32>();
    let ms = model(&k.source, k.source.rest_pose());
    let mut world = [Quat::IDENTITY; 4];
    let mut out = [SoaTransform::IDENTITY; 1];
    let mut job = |joints: &[RetargetJoint<f32>], root: Option<RetargetRoot<f32>>, source: &[Mat4<f32>]| {
        RetargetJob { target: k.target.view(), joints, root, source, world: &mut world, output: &mut out }.run()
    };
    assert_eq!(job(&k.joints[..3], None, &ms), Err(JobError::InputTooSmall));
    assert_eq!(job(&k.joints, None, &ms[..2]), Err(JobError::JointIndexOutOfRange));
    let far = RetargetRoot { target: 9, ..k.root };
    assert_eq!(job(&k.joints, Some(far), &ms), Err(JobError::JointIndexOutOfRange));
    assert_eq!(out[0], SoaTransform::IDENTITY);
    let mut small = [SoaTransform::IDENTITY; 0];
    let r = RetargetJob {
        target: k.target.view(),
        joints: &k.joints,
        root: None,
        source: &ms,
        world: &mut world,
        output: &mut small,
    }
    .run();
    assert_eq!(r, Err(JobError::OutputTooSmall));
    let mut joints = [RetargetJoint::<f32>::UNMAPPED; 4];
    let q = [Quat::IDENTITY; 4];
    assert_eq!(RetargetJoint::offsets(&[0, 1, 2, 7], &q, &q, &mut joints), Err(JobError::JointIndexOutOfRange));
    let flat = [Mat4::IDENTITY; 4];
    assert_eq!(
        RetargetRoot::new(1, 1, k.target.view(), &flat, &flat, None),
        Err(JobError::InvalidTransform),
        "hips at height 0"
    );
}
