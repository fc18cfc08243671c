use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;

use sinew::job::spring::{ColliderShape, SpringBoneJob, SpringCollider, SpringJoint, SpringTail, NO_JOINT};
use sinew::job::JobError;
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};

use super::*;
use crate::character::{outputs, Character, CharacterError, Work};
use crate::limits::WebRig;
use crate::model::Model;

static CHARACTER: &[u8] = include_bytes!("../../../../../core/fixtures/character.sinew");

fn model() -> Rc<Model> {
    Rc::new(Model::open::<64>(CHARACTER.into(), Some(usize::MAX)).unwrap())
}

type Rig = (Character<WebRig>, Work<WebRig>);

fn character() -> Rig {
    (Character::new(model()).unwrap(), Work::new())
}

/// The fixture's joints: chest, the left arm's upper arm, forearm and hand.
const CHEST: u16 = 3;
const L_UPPER_ARM: u16 = 7;
const L_FOREARM: u16 = 8;
const L_HAND: u16 = 9;

/// The left arm as a spring chain (the hand with a virtual tail), falling under gravity
/// through a sphere beside the chest.
fn arm() -> SpringSet {
    let joint = |joint, child, tail: Vec3<f32>| SpringJoint {
        joint,
        child,
        tail,
        hit_radius: 0.03,
        stiffness: 0.3,
        gravity_power: 1.0,
        gravity_dir: Vec3::new(0.0, -1.0, 0.0),
        drag_force: 0.3,
        center: NO_JOINT,
        colliders_start: 0,
        colliders_len: 1,
    };
    SpringSet {
        joints: vec![
            joint(L_UPPER_ARM, L_FOREARM, Vec3::new(0.28, 0.0, 0.0)),
            joint(L_FOREARM, L_HAND, Vec3::new(0.26, 0.0, 0.0)),
            joint(L_HAND, NO_JOINT, Vec3::new(0.07, 0.0, 0.0)),
        ],
        colliders: vec![SpringCollider {
            joint: CHEST,
            shape: ColliderShape::Sphere { offset: Vec3::new(0.4, 0.0, 0.0), radius: 0.1, inside: false },
        }],
        joint_colliders: vec![0],
    }
}

/// A world that moves: a sway along x and a turn about y at time `t`.
fn world(t: f32) -> Mat4<f32> {
    Mat4::from_trs(
        Vec3::new(0.4 * (3.0 * t).sin(), 0.0, 0.0),
        Quat::from_axis_angle(Vec3::new(0.0, 1.0, 0.0), 0.5 * (2.0 * t).sin()),
        Vec3::ONE,
    )
}

/// The frames: at 60 Hz, at 144 Hz (a step every second or third frame), one long stall
/// (more than `max_steps` steps due) and at 30 Hz (two steps a frame).
fn frames() -> Vec<f32> {
    let mut f = vec![1.0 / 60.0; 10];
    f.extend([1.0 / 144.0; 30]);
    f.push(0.5);
    f.extend([1.0 / 30.0; 5]);
    f
}

/// The stage against the core's job run by hand on a plain character's pose: a reset at the
/// first update, then per update the steps the frames' running sum makes due (a step each
/// time the sum passes a multiple of 1/60 s), at most `max_steps` (the rest dropped), and on
/// an update with no step, the spring joints at their last rotations. Equal bits.
#[test]
fn the_stage_steps_at_its_rate_as_the_job_by_hand() {
    let (mut a, mut wa) = character();
    let settings = SpringSettings { rate: 60.0, max_steps: 4 };
    a.set_springs(arm(), settings, true).unwrap();
    let (mut b, mut wb) = character();
    let set = arm();
    let mut tails = vec![SpringTail::default(); set.joints.len()];
    let mut locals: Vec<SoaTransform<f32>> = Vec::new();
    let mut models: Vec<Mat4<f32>> = Vec::new();
    let (mut time, mut stepped, mut contacts, mut dropped_frames) = (0.0f64, 0u64, 0u32, 0);
    for (k, dt) in core::iter::once(0.0).chain(frames()).enumerate() {
        let w = world(time as f32);
        a.set_world(w);
        if dt > 0.0 {
            a.advance(dt, &mut wa).unwrap();
            b.advance(dt, &mut wb).unwrap();
        }
        time += f64::from(dt);
        a.update(outputs::PALETTES, &mut wa).unwrap();
        b.update(outputs::PALETTES, &mut wb).unwrap();
        locals.clone_from(&b.pose);
        models.clone_from(&b.joints);
        let skeleton = b.model.skeleton();
        let mut job = SpringBoneJob {
            skeleton,
            springs: set.bones(),
            world: w,
            locals: &mut locals,
            models: &mut models,
            tails: &mut tails,
        };
        let frame = a.spring_frame().unwrap();
        if k == 0 {
            job.reset().unwrap();
            assert!(frame.reset && frame.steps == 0);
        } else {
            // Steps due by the running sum since the reset, less those run.
            let due = ((time * 60.0) + 1e-6).floor() as u64 - stepped;
            let expect = due.min(4) as u32;
            assert_eq!(frame.steps, expect, "frame {k} ({dt} s): steps");
            if due > 4 {
                dropped_frames += 1;
                assert!(frame.dropped > 0.0, "frame {k}: the time beyond 4 steps is dropped");
                // The running sum starts again from this update.
                stepped = (time * 60.0 + 1e-6).floor() as u64;
            } else {
                stepped += due;
            }
            let mut c = 0;
            for _ in 0..expect {
                c += job.step(1.0 / 60.0).unwrap().contacts;
            }
            assert_eq!(frame.contacts, c, "frame {k}: contacts");
            contacts += c;
            if expect == 0 {
                for (s, t) in set.joints.iter().zip(&tails) {
                    let j = usize::from(s.joint);
                    locals[j / 4].rotation.set_lane(j % 4, t.rotation);
                }
                crate::jobs::local_to_model(skeleton, &locals, &mut models).unwrap();
            }
        }
        for (j, (x, y)) in a.joints.iter().zip(&models).enumerate() {
            assert_eq!(x.cols, y.cols, "frame {k}: joint {j}");
        }
    }
    assert_eq!(dropped_frames, 1, "one stall");
    assert!(contacts > 0, "the arm meets the sphere");
    // The arm hangs away from the animated one: the stage did something.
    let hand = usize::from(L_HAND);
    assert!((a.joints[hand].translation() - b.joints[hand].translation()).length() > 0.05);
}

/// A seek resets the springs (the next update puts them at rest in its pose); off, the
/// character is the plain one; on again, a reset first.
#[test]
fn seeks_and_switches_reset() {
    let (mut a, mut wa) = character();
    a.set_springs(arm(), SpringSettings::default(), true).unwrap();
    let (mut b, mut wb) = character();
    for _ in 0..5 {
        a.advance(1.0 / 60.0, &mut wa).unwrap();
        a.update(outputs::PALETTES, &mut wa).unwrap();
    }
    assert_eq!(a.spring_frame().unwrap().steps, 1);
    a.seek(0.25);
    a.update(outputs::PALETTES, &mut wa).unwrap();
    assert!(a.spring_frame().unwrap().reset);
    a.set_springs_enabled(false).unwrap();
    b.seek(0.25);
    a.advance(0.1, &mut wa).unwrap();
    b.advance(0.1, &mut wb).unwrap();
    a.update(outputs::PALETTES, &mut wa).unwrap();
    b.update(outputs::PALETTES, &mut wb).unwrap();
    assert!(a.joints.iter().zip(&b.joints).all(|(x, y)| x.cols == y.cols), "off: the plain pose");
    a.set_springs_enabled(true).unwrap();
    a.update(outputs::PALETTES, &mut wa).unwrap();
    assert!(a.spring_frame().unwrap().reset, "switched on: a reset");
    assert!(a.springs_enabled());
}

/// Paused, the clip holds and the springs swing on: a paused character steps its springs as
/// a playing one does, on the clip's pose at the pause.
#[test]
fn springs_swing_while_the_clip_is_paused() {
    let (mut a, mut wa) = character();
    a.set_springs(arm(), SpringSettings::default(), true).unwrap();
    let (mut plain, mut wp) = character();
    a.advance(0.2, &mut wa).unwrap();
    plain.advance(0.2, &mut wp).unwrap();
    a.set_playing(false);
    a.update(outputs::PALETTES, &mut wa).unwrap();
    let clip_time = a.time();
    let hand = usize::from(L_HAND);
    let (mut steps, mut moved) = (0, 0.0f32);
    let mut last = a.joints[hand].translation();
    for k in 1..=30 {
        a.set_world(world(k as f32 / 60.0));
        a.advance(1.0 / 60.0, &mut wa).unwrap();
        a.update(outputs::PALETTES, &mut wa).unwrap();
        steps += a.spring_frame().unwrap().steps;
        let at = a.joints[hand].translation();
        moved = moved.max((at - last).length());
        last = at;
    }
    assert_eq!(a.time(), clip_time, "the clip holds");
    assert_eq!(steps, 30, "a step per frame while paused");
    assert!(moved > 1e-3, "the hand swings: largest move per frame {moved}");
    // The joints above the springs keep the clip's pose at the pause.
    plain.update(outputs::PALETTES, &mut wp).unwrap();
    let chest = usize::from(CHEST);
    let unmoved = a.joints[chest].cols == plain.joints[chest].cols;
    assert!(unmoved, "the chest holds the paused pose");
}

/// Set-ups the job refuses change nothing; the switch without a set-up is an error.
#[test]
fn bad_set_ups_are_refused() {
    let (mut a, _) = character();
    assert_eq!(a.set_springs_enabled(true), Err(CharacterError::NoSprings));
    let mut bad = arm();
    bad.joints[1].joint = 200;
    assert_eq!(
        a.set_springs(bad, SpringSettings::default(), true),
        Err(CharacterError::Job(JobError::JointIndexOutOfRange))
    );
    let mut bad = arm();
    // The forearm's child is not below the hand.
    bad.joints[2].child = L_FOREARM;
    assert_eq!(a.set_springs(bad, SpringSettings::default(), true), Err(CharacterError::Job(JobError::InvalidRange)));
    for settings in [SpringSettings { rate: 0.0, max_steps: 4 }, SpringSettings { rate: 60.0, max_steps: 0 }] {
        assert_eq!(a.set_springs(arm(), settings, true), Err(CharacterError::Job(JobError::InvalidWeight)));
    }
    assert!(a.spring_frame().is_none() && a.spring_set().is_none());
    a.set_springs(arm(), SpringSettings::default(), false).unwrap();
    assert!(!a.springs_enabled());
    a.clear_springs();
    assert!(a.spring_frame().is_none());
}

/// The character's collider lines: the arm's sphere on the chest, and an inside capsule on the
/// forearm, each where the last update's model matrix of its joint and the world put it
/// (computed here point by point: the joint's matrix, then the world's); every point of a
/// sphere's lines at its radius from its center, of a capsule's at its radius from its segment.
#[test]
fn collider_lines_lie_on_the_colliders_where_the_pose_and_world_put_them() {
    use super::colliders::{ColliderLines, CIRCLE_SEGMENTS};
    let (mut a, mut wa) = character();
    assert!(a.collider_lines(0.1).is_empty(), "no springs, no lines");
    let mut set = arm();
    let (head, tail) = (Vec3::new(0.02, 0.01, 0.0), Vec3::new(0.2, -0.03, 0.02));
    set.colliders.push(SpringCollider {
        joint: L_FOREARM,
        shape: ColliderShape::Capsule { offset: head, tail, radius: 0.05, inside: true },
    });
    a.set_springs(set, SpringSettings::default(), true).unwrap();
    for k in 0..4 {
        let w = world(0.3 * k as f32);
        a.set_world(w);
        a.advance(1.0 / 60.0, &mut wa).unwrap();
        a.update(outputs::PALETTES, &mut wa).unwrap();
        let place = |joint: u16, p: Vec3<f32>| w.transform_point3(a.joints[usize::from(joint)].transform_point3(p));
        let center = place(CHEST, Vec3::new(0.4, 0.0, 0.0));
        let (p, q) = (place(L_FOREARM, head), place(L_FOREARM, tail));
        let lines = a.collider_lines(0.1);
        assert_eq!(lines.outside.len(), 3 * CIRCLE_SEGMENTS);
        assert!(lines.inside.len() > 4 * CIRCLE_SEGMENTS);
        for x in lines.outside.iter().flatten() {
            assert!(((*x - center).length() - 0.1).abs() < 1e-5, "frame {k}: {x:?}");
        }
        let pq = q - p;
        for x in lines.inside.iter().flatten() {
            let t = ((*x - p).dot(pq) / pq.dot(pq)).clamp(0.0, 1.0);
            assert!(((*x - (p + pq * t)).length() - 0.05).abs() < 1e-5, "frame {k}: {x:?}");
        }
        let mut into = ColliderLines { outside: vec![[Vec3::ZERO; 2]; 3], inside: Vec::new() };
        a.collider_lines_into(0.1, &mut into);
        assert_eq!(into, lines);
    }
    // Off, the colliders are still drawn.
    a.set_springs_enabled(false).unwrap();
    assert!(!a.collider_lines(0.1).is_empty());
}
