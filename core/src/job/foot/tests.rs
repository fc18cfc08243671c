extern crate std;

use std::vec::Vec;

use super::state::{exp_neg, spring_frequency};
use super::*;
use crate::math::Transform;
use crate::real::Q16;
use crate::skeleton::{Skeleton, NO_PARENT};

/// Joints of the test rig: root, pelvis, then per leg hip, knee, ankle, toe.
const JOINTS: usize = 10;
const ROOT: usize = 0;
const PELVIS: usize = 1;
/// Hip, knee, ankle and toe of the left (first) and right leg.
const LEGS: [[usize; 4]; 2] = [[2, 3, 4, 5], [6, 7, 8, 9]];
/// The knees' bend at rest (the thigh swings forward by it, the shin back by twice it).
const BEND: f32 = 0.25;
/// Frames per second of the multi-frame tests.
const FPS: f32 = 60.0;

fn v<R: Real>(x: f32, y: f32, z: f32) -> Vec3<R> {
    Vec3::new(R::from_f32(x), R::from_f32(y), R::from_f32(z))
}
fn to_f<R: Real>(p: Vec3<R>) -> Vec3<f32> {
    Vec3::new(p.x.to_f32(), p.y.to_f32(), p.z.to_f32())
}
fn qf<R: Real>(q: Quat<R>) -> Quat<f32> {
    Quat::new(q.x.to_f32(), q.y.to_f32(), q.z.to_f32(), q.w.to_f32())
}
fn rx<R: Real>(a: f32) -> Quat<R> {
    Quat::from_axis_angle(Vec3::X, R::from_f32(a))
}

/// A standing humanoid's legs: the pelvis 0.93 above the root, each thigh 0.1 aside and 0.05
/// below it, thigh 0.42, shin 0.40, the toe 0.05 below and 0.13 ahead of the ankle; the knees
/// bent forward by [`BEND`], the feet level (ankles about 0.085 up).
fn skeleton<R: Real>() -> Skeleton<R, 3> {
    let t = |p: Vec3<R>, q: Quat<R>| Transform::new(p, q, Vec3::ONE);
    let mut rest = Vec::from([t(Vec3::ZERO, Quat::IDENTITY), t(v(0.0, 0.93, 0.0), Quat::IDENTITY)]);
    for side in [1.0, -1.0] {
        rest.push(t(v(0.1 * side, -0.05, 0.0), rx(-BEND)));
        rest.push(t(v(0.0, -0.42, 0.0), rx(2.0 * BEND)));
        rest.push(t(v(0.0, -0.40, 0.0), rx(-BEND)));
        rest.push(t(v(0.0, -0.05, 0.13), Quat::IDENTITY));
    }
    let parents = [NO_PARENT, 0, 1, 2, 3, 4, 1, 6, 7, 8];
    let names = ["root", "pelvis", "l_hip", "l_knee", "l_ankle", "l_toe", "r_hip", "r_knee", "r_ankle", "r_toe"];
    Skeleton::new(&parents, &rest, &names).unwrap()
}

/// Every joint's model-space position.
type Positions = [Vec3<f32>; JOINTS];

/// The rig, its pose and model matrices, and the stage's state.
struct Rig<R: Real> {
    skeleton: Skeleton<R, 3>,
    legs: [FootLeg<R>; 2],
    settings: FootSettings<R>,
    state: FootState<R>,
    leg_states: [LegState<R>; 2],
    world: Mat4<R>,
    pose: [SoaTransform<R>; 3],
    model: [Mat4<R>; JOINTS],
}

impl<R: Real> Rig<R> {
    /// The rig at rest, the stage enabled and settling; standing heights from the rest pose.
    fn new() -> Self {
        let skeleton = skeleton::<R>();
        let mut rig = Rig {
            legs: [FootLeg { hip: 0, knee: 0, ankle: 0, toe: None, standing_height: R::ZERO }; 2],
            settings: FootSettings::new(),
            state: FootState::new(true),
            leg_states: [LegState::new(); 2],
            world: Mat4::IDENTITY,
            pose: [SoaTransform::IDENTITY; 3],
            model: [Mat4::IDENTITY; JOINTS],
            skeleton,
        };
        rig.animate(Vec3::ZERO);
        for (leg, [hip, knee, ankle, toe]) in rig.legs.iter_mut().zip(LEGS) {
            let standing_height = rig.model[ankle].translation().y;
            *leg = FootLeg { hip, knee, ankle, toe: Some(toe), standing_height };
        }
        rig
    }

    /// The animation: the rest pose with the root at `root` (model space), and its model
    /// matrices.
    fn animate(&mut self, root: Vec3<f32>) {
        self.pose.copy_from_slice(self.skeleton.rest_pose());
        self.pose[0].translation.set_lane(ROOT, v(root.x, root.y, root.z));
        LocalToModelJob::new(self.skeleton.view(), &self.pose, &mut self.model).run().unwrap();
    }

    fn place(&mut self, dt: f32, ground: &mut dyn Ground<R>) -> Result<(), JobError> {
        FootPlacementJob {
            skeleton: self.skeleton.view(),
            pelvis: PELVIS,
            legs: &self.legs,
            settings: self.settings,
            state: &mut self.state,
            leg_states: &mut self.leg_states,
            world: self.world,
            dt: R::from_f32(dt),
            pose: &mut self.pose,
            model: &mut self.model,
            ground,
        }
        .run()
    }

    /// Joint `j`'s model-space position.
    fn at(&self, j: usize) -> Vec3<f32> {
        to_f(self.model[j].translation())
    }

    /// Joint `j`'s world position.
    fn world_at(&self, j: usize) -> Vec3<f32> {
        to_f(self.world.transform_point3(self.model[j].translation()))
    }

    /// Joint `j`'s model-space rotation.
    fn rotation(&self, j: usize) -> Quat<f32> {
        qf(rotation_of(&self.model[j]).unwrap())
    }

    /// Every joint's model position.
    fn positions(&self) -> Positions {
        core::array::from_fn(|j| self.at(j))
    }
}

fn flat<R: Real>(height: f32) -> GroundPlane<R> {
    GroundPlane::flat(R::from_f32(height))
}

/// A plane through the origin whose normal is +Y tilted by `degrees` towards −X (it rises
/// towards +X).
fn slope<R: Real>(degrees: f32) -> (GroundPlane<R>, Vec3<f32>) {
    let a = degrees.to_radians();
    let n = Vec3::new(-a.sin(), a.cos(), 0.0);
    (GroundPlane { height: R::ZERO, normal: v(n.x, n.y, n.z) }, n)
}

/// The angle of the rotation taking `from` to `to`, radians.
fn turn(from: Quat<f32>, to: Quat<f32>) -> f32 {
    from.angle_between(to)
}

fn lengths(rig: &Rig<f32>, leg: [usize; 4]) -> (f32, f32) {
    ((rig.at(leg[1]) - rig.at(leg[0])).length(), (rig.at(leg[2]) - rig.at(leg[1])).length())
}

#[test]
fn raised_plane_raises_the_ankles() {
    let mut rig = Rig::<f32>::new();
    let before = rig.positions();
    let bones: [(f32, f32); 2] = LEGS.map(|l| lengths(&rig, l));
    let rotations = LEGS.map(|l| rig.rotation(l[2]));
    rig.place(0.0, &mut flat(0.1)).unwrap();
    for (i, leg) in LEGS.into_iter().enumerate() {
        let (ankle, was) = (rig.at(leg[2]), before[leg[2]]);
        std::println!("raised 0.1: ankle {i} rose {:.6}", ankle.y - was.y);
        assert!((ankle - (was + Vec3::new(0.0, 0.1, 0.0))).length() < 1.0e-4, "{ankle:?} from {was:?}");
        let (a, b) = lengths(&rig, leg);
        assert!((a - bones[i].0).abs() < 1.0e-5 && (b - bones[i].1).abs() < 1.0e-5, "bone lengths {a} {b}");
        // Flat ground: the foot keeps its animated orientation, the toe rises with it.
        assert!(turn(rotations[i], rig.rotation(leg[2])) < 1.0e-3);
        assert!((rig.at(leg[3]) - (before[leg[3]] + Vec3::new(0.0, 0.1, 0.0))).length() < 1.0e-4);
        // The knee still bends forward, more than before.
        assert!(rig.at(leg[1]).z > before[leg[1]].z + 0.01, "knee {:?}", rig.at(leg[1]));
    }
    assert!((rig.at(PELVIS) - before[PELVIS]).length() < 1.0e-6, "the pelvis does not rise");
    assert_eq!(rig.state.pelvis_offset(), 0.0);
    assert!(rig.leg_states.iter().all(|l| matches!(l.lock(), FootLock::Locked(_))));
}

#[test]
fn lowered_plane_lowers_the_pelvis() {
    let mut rig = Rig::<f32>::new();
    let before = rig.positions();
    rig.place(0.0, &mut flat(-0.1)).unwrap();
    let down = Vec3::new(0.0, -0.1, 0.0);
    assert!((rig.state.pelvis_offset() + 0.1).abs() < 1.0e-5);
    // The whole body goes down by 0.1 and the legs keep their shape.
    for j in PELVIS..JOINTS {
        assert!((rig.at(j) - (before[j] + down)).length() < 1.0e-4, "joint {j}: {:?} from {:?}", rig.at(j), before[j]);
    }
    assert!((rig.at(ROOT) - before[ROOT]).length() < 1.0e-6);
}

#[test]
fn world_placement_scales_and_turns() {
    // The character turned a quarter about +Y, scaled 1.5, its model origin at (3, 0.2, −1):
    // the clip's ground is at world height 0.2 and a clip height reads 1.5 times as high.
    let mut rig = Rig::<f32>::new();
    let turn = Quat::from_axis_angle(Vec3::Y, core::f32::consts::FRAC_PI_2);
    rig.world = Mat4::from_trs(Vec3::new(3.0, 0.2, -1.0), turn, Vec3::splat(1.5));
    let before: [Vec3<f32>; JOINTS] = core::array::from_fn(|j| rig.world_at(j));
    rig.place(0.0, &mut flat(0.35)).unwrap();
    for leg in LEGS {
        let h = rig.legs[0].standing_height;
        let (ankle, was) = (rig.world_at(leg[2]), before[leg[2]]);
        assert!((ankle.y - (0.35 + 1.5 * h)).abs() < 1.0e-4, "{ankle:?}");
        assert!((ankle.x - was.x).abs() < 1.0e-4 && (ankle.z - was.z).abs() < 1.0e-4);
    }
    // 0.15 above the clip's ground in the world is 0.1 in model space; the pelvis stays.
    assert!((rig.world_at(PELVIS) - before[PELVIS]).length() < 1.0e-5);
    // A tilted world is refused.
    rig.world = Mat4::from_trs(Vec3::ZERO, Quat::from_axis_angle(Vec3::X, 0.1), Vec3::ONE);
    assert_eq!(rig.place(0.0, &mut flat(0.0)), Err(JobError::InvalidTransform));
}

#[test]
fn slope_tilts_the_feet_up_to_the_largest_angle() {
    for degrees in [10.0f32, 40.0] {
        let mut rig = Rig::<f32>::new();
        let rotations = LEGS.map(|l| rig.rotation(l[2]));
        let (mut plane, n) = slope::<f32>(degrees);
        rig.place(0.0, &mut plane).unwrap();
        let expected = degrees.min(30.0).to_radians();
        let up = Vec3::new(-expected.sin(), expected.cos(), 0.0);
        for (i, leg) in LEGS.into_iter().enumerate() {
            let change = rig.rotation(leg[2]) * rotations[i].conjugate();
            let angle = turn(rotations[i], rig.rotation(leg[2]));
            std::println!("slope {degrees}°: foot {i} tilted {:.3}°", angle.to_degrees());
            assert!((angle - expected).abs() < 0.2f32.to_radians(), "tilt {angle}");
            assert!((change.rotate(Vec3::Y) - up).length() < 1.0e-3);
            // The ankle at its clip height above the ground, across the tilted sole.
            let ankle = rig.at(leg[2]);
            let ground = plane.height_at(ankle).unwrap();
            let h = rig.legs[i].standing_height;
            if degrees < 30.0 {
                // Flat on the slope: the sole under the ankle lies on the plane.
                let sole = ankle - up * h;
                assert!(sole.dot(n).abs() < 1.0e-3, "sole {:.5} off the plane", sole.dot(n));
            }
            let above = ankle.y - ground;
            assert!(above >= h / expected.cos() - 1.0e-3 && above < h / expected.cos() + 0.005, "ankle {above} above");
        }
    }
}

#[test]
fn a_step_puts_each_foot_on_its_ground() {
    let mut rig = Rig::<f32>::new();
    let before = rig.positions();
    let heights = [0.06f32, -0.04];
    let mut step = |leg: usize, _at: Vec3<f32>| Some(GroundHit { height: heights[leg], normal: Vec3::Y });
    rig.place(0.0, &mut step).unwrap();
    for (i, leg) in LEGS.into_iter().enumerate() {
        let ankle = rig.at(leg[2]);
        assert!((ankle.y - (heights[i] + rig.legs[i].standing_height)).abs() < 1.0e-4, "ankle {i}: {ankle:?}");
        assert!((ankle.x - before[leg[2]].x).abs() < 1.0e-4 && (ankle.z - before[leg[2]].z).abs() < 1.0e-4);
    }
    assert!((rig.at(PELVIS).y - (before[PELVIS].y - 0.04)).abs() < 1.0e-5);
}

#[test]
fn a_toe_over_a_step_edge_lifts_the_foot() {
    // The ground steps up by 0.05 at z = 0.08: under the ankles (z ≈ 0.005) it is 0, under
    // the toes (z ≈ 0.135) 0.05.
    let mut rig = Rig::<f32>::new();
    let before = rig.positions();
    let mut edge =
        |_: usize, at: Vec3<f32>| Some(GroundHit { height: if at.z >= 0.08 { 0.05 } else { 0.0 }, normal: Vec3::Y });
    rig.place(0.0, &mut edge).unwrap();
    for leg in LEGS {
        assert!((rig.at(leg[2]).y - (before[leg[2]].y + 0.05)).abs() < 1.0e-4);
        assert!((rig.at(leg[3]).y - (before[leg[3]].y + 0.05)).abs() < 1.0e-4, "toe {:?}", rig.at(leg[3]));
    }
}

#[test]
fn a_leg_without_ground_follows_the_animation() {
    let mut rig = Rig::<f32>::new();
    let before = rig.positions();
    let mut half = |leg: usize, _: Vec3<f32>| (leg == 0).then_some(GroundHit { height: -0.1, normal: Vec3::Y });
    rig.place(0.0, &mut half).unwrap();
    assert!((rig.at(PELVIS).y - (before[PELVIS].y - 0.1)).abs() < 1.0e-5);
    assert!((rig.at(LEGS[0][2]).y - (before[LEGS[0][2]].y - 0.1)).abs() < 1.0e-4);
    // The right ankle stays where the animation has it, and so does its foot's orientation.
    assert!((rig.at(LEGS[1][2]) - before[LEGS[1][2]]).length() < 1.0e-4);
    assert!((rig.at(LEGS[1][3]) - before[LEGS[1][3]]).length() < 1.0e-4);
    assert_eq!(rig.leg_states[1].lock(), FootLock::Free);
    assert!(rig.leg_states[1].target().is_none() && rig.leg_states[0].target().is_some());
}

/// The critically damped spring's offset `t` seconds after its target stepped by `step` from
/// rest: `x* − step·(1 + ωt)·e^(−ωt)`, in `f64`.
fn spring_reference(target: f64, step: f64, omega: f64, t: f64) -> f64 {
    target - step * (1.0 + omega * t) * (-omega * t).exp()
}

#[test]
fn the_pelvis_follows_a_step_on_a_critically_damped_spring() {
    let mut rig = Rig::<f32>::new();
    let dt = 1.0 / FPS;
    let rest_pelvis = rig.at(PELVIS).y;
    rig.place(dt, &mut flat(0.0)).unwrap();
    let half_life = rig.settings.pelvis_half_life;
    let omega = 1.678_346_990_016_661 / f64::from(half_life);
    // The largest move in one frame after a step of 0.1 from rest: 0.1·ω·dt/e.
    let bound = 0.1 * omega * f64::from(dt) / core::f64::consts::E;
    for (from, to) in [(0.0f32, -0.1f32), (-0.1, 0.0)] {
        let (mut last, mut worst, mut biggest) = (f64::from(from), 0.0f64, 0.0f64);
        for frame in 0..(2.0 * FPS) as usize {
            rig.animate(Vec3::ZERO);
            rig.place(dt, &mut flat(to)).unwrap();
            let x = f64::from(rig.state.pelvis_offset());
            let t = (frame + 1) as f64 * f64::from(dt);
            let reference = spring_reference(f64::from(to), f64::from(to - from), omega, t);
            worst = worst.max((x - reference).abs());
            biggest = biggest.max((x - last).abs());
            // No overshoot: the offset moves towards the target only, and never past it.
            assert!((x - last) * f64::from(to - from) >= -1.0e-7, "frame {frame}: {last} → {x}");
            assert!((x - f64::from(to)) * f64::from(to - from) <= 1.0e-7, "frame {frame}: past {to}: {x}");
            if frame + 1 == (f64::from(half_life) * f64::from(FPS)).round() as usize {
                assert!((x - f64::from(from + to) / 2.0).abs() < 1.0e-4, "half-life: {x}");
            }
            // The pelvis joint carries the offset.
            assert!((f64::from(rig.at(PELVIS).y - rest_pelvis) - x).abs() < 1.0e-5);
            last = x;
        }
        std::println!(
            "pelvis spring {from} → {to}: error {worst:.2e} against the closed form, largest frame step {biggest:.5} (bound {bound:.5})"
        );
        assert!(worst < 2.0e-6, "{worst}");
        assert!(biggest <= bound + 1.0e-6);
        assert!((last - f64::from(to)).abs() < 1.0e-5, "converged to {last}");
    }
}

#[test]
fn a_planted_foot_holds_its_lock_then_releases_smoothly() {
    let mut rig = Rig::<f32>::new();
    let dt = 1.0 / FPS;
    let mut ground = flat(0.0);
    rig.place(dt, &mut ground).unwrap();
    let locks = LEGS.map(|l| rig.at(l[2]));
    // The animation drifts at 0.05 m/s, under the lock speed: the feet stay.
    let mut root = Vec3::<f32>::ZERO;
    for frame in 0..30 {
        root.x += 0.05 * dt;
        rig.animate(root);
        let animated = LEGS.map(|l| rig.at(l[2]));
        rig.place(dt, &mut ground).unwrap();
        for (i, leg) in LEGS.into_iter().enumerate() {
            assert!((rig.at(leg[2]) - locks[i]).length() < 1.0e-4, "frame {frame}: {:?}", rig.at(leg[2]));
            assert!((animated[i] - locks[i]).x > 0.0);
            assert!(matches!(rig.leg_states[i].lock(), FootLock::Locked(_)));
        }
    }
    // Then at 1 m/s: released, back to the animation over the release time with no jump.
    let release = rig.settings.release_time;
    let mut last = LEGS.map(|l| rig.at(l[2]));
    let mut released = [false; 2];
    for frame in 0..20 {
        root.x += dt;
        rig.animate(root);
        let animated = LEGS.map(|l| rig.at(l[2]));
        rig.place(dt, &mut ground).unwrap();
        for (i, leg) in LEGS.into_iter().enumerate() {
            let ankle = rig.at(leg[2]);
            // The animation's own step, plus the offset's fade (smoothstep's slope is at most 1.5).
            let offset = (locks[i] - animated[i]).length();
            let bound = dt + 1.5 * offset * dt / release + 1.0e-4;
            assert!((ankle - last[i]).length() <= bound, "frame {frame}: jump {}", (ankle - last[i]).length());
            last[i] = ankle;
            match rig.leg_states[i].lock() {
                FootLock::Releasing { elapsed, .. } => {
                    assert!(elapsed < release);
                    released[i] = true;
                }
                FootLock::Free => {
                    assert!(released[i]);
                    assert!((ankle - animated[i]).length() < 1.0e-4, "frame {frame}: free ankle off the animation");
                }
                FootLock::Locked(_) => panic!("frame {frame}: still locked at 1 m/s"),
            }
        }
        if frame == 0 {
            // The release frame still holds the lock.
            for (i, leg) in LEGS.into_iter().enumerate() {
                assert!((rig.at(leg[2]) - locks[i]).length() < 1.0e-4);
            }
        }
    }
    assert!(rig.leg_states.iter().all(|l| l.lock() == FootLock::Free));
}

#[test]
fn a_lock_holds_in_the_world_under_root_motion() {
    // The character moves along +X in the world while its pose moves back in model space by as
    // much: the animated feet stand still in the world, though they move at 1.2 m/s in model
    // space. The locks hold them there.
    let mut rig = Rig::<f32>::new();
    let dt = 1.0 / FPS;
    let mut ground = flat(0.0);
    rig.place(dt, &mut ground).unwrap();
    let locks = LEGS.map(|l| rig.world_at(l[2]));
    for frame in 1..=30 {
        let moved = 1.2 * dt * frame as f32;
        rig.world = Mat4::from_translation(Vec3::new(moved, 0.0, 0.0));
        rig.animate(Vec3::new(-moved, 0.0, 0.0));
        rig.place(dt, &mut ground).unwrap();
        for (i, leg) in LEGS.into_iter().enumerate() {
            assert!(matches!(rig.leg_states[i].lock(), FootLock::Locked(_)), "frame {frame}");
            assert!((rig.world_at(leg[2]) - locks[i]).length() < 1.0e-4);
        }
    }
}

#[test]
fn enabling_and_disabling_ramp_the_effect() {
    for height in [0.1f32, -0.1] {
        let mut rig = Rig::<f32>::new();
        let animated = rig.positions();
        let mut ground = flat(height);
        rig.place(0.0, &mut ground).unwrap();
        let full = rig.positions();
        let dt = 1.0 / FPS;
        let step = dt / rig.settings.blend_time;
        // The largest move over the blend step's share: other joints, knees.
        let mut worst = [0.0f32; 2];
        for enabled in [false, true] {
            rig.state.set_enabled(enabled);
            let mut last = rig.positions();
            let mut last_weight = rig.state.weight();
            for frame in 0..30 {
                rig.animate(Vec3::ZERO);
                rig.place(dt, &mut ground).unwrap();
                let w = rig.state.weight();
                assert!((w - last_weight).abs() <= step + 1.0e-6, "weight {last_weight} → {w}");
                let now = rig.positions();
                for j in 0..JOINTS {
                    // What the blend step alone moves the joint by. The placed joints (pelvis,
                    // ankles, toes) move with the weight; a knee follows its ankle's goal on a
                    // curve, faster near the animated pose.
                    let share = (full[j] - animated[j]).length() * (w - last_weight).abs();
                    let moved = (now[j] - last[j]).length();
                    let knee = usize::from(LEGS.iter().any(|l| l[1] == j));
                    if share > 1.0e-4 {
                        worst[knee] = worst[knee].max(moved / share);
                    }
                    let factor = [1.01, 2.0][knee];
                    assert!(
                        moved <= factor * share + 1.0e-5,
                        "frame {frame}, joint {j}: moved {moved}, blend step {share}"
                    );
                }
                last = now;
                last_weight = w;
            }
            let end = if enabled { full } else { animated };
            assert_eq!(rig.state.weight(), if enabled { 1.0 } else { 0.0 });
            for j in 0..JOINTS {
                assert!((rig.at(j) - end[j]).length() < 1.0e-4, "joint {j} did not reach the end of the ramp");
            }
        }
        std::println!(
            "ground {height}: largest move over the blend step's share {:.3}, knees {:.3}",
            worst[0],
            worst[1]
        );
    }
}

#[test]
fn q16_agrees_with_f32() {
    fn run<R: Real>(ground: &mut dyn Ground<R>) -> Positions {
        let mut rig = Rig::<R>::new();
        rig.place(0.0, ground).unwrap();
        rig.positions()
    }
    let mut worst = 0.0f32;
    let step = |leg: usize| if leg == 0 { 0.06f32 } else { -0.04 };
    let cases: [(&str, Positions, Positions); 4] = [
        ("raised", run::<f32>(&mut flat(0.1)), run::<Q16>(&mut flat(0.1))),
        ("lowered", run::<f32>(&mut flat(-0.1)), run::<Q16>(&mut flat(-0.1))),
        (
            "step",
            run::<f32>(&mut |leg: usize, _: Vec3<f32>| Some(GroundHit { height: step(leg), normal: Vec3::Y })),
            run::<Q16>(&mut |leg: usize, _: Vec3<Q16>| {
                Some(GroundHit { height: Q16::from_f32(step(leg)), normal: Vec3::Y })
            }),
        ),
        ("slope 10°", run::<f32>(&mut slope(10.0).0), run::<Q16>(&mut slope(10.0).0)),
    ];
    for (name, a, b) in cases {
        let e = (0..JOINTS).map(|j| (a[j] - b[j]).length()).fold(0.0f32, f32::max);
        std::println!("Q16 against f32, {name}: largest joint distance {e:.2e}");
        worst = worst.max(e);
    }
    assert!(worst < 5.0e-4, "{worst}");
}

#[test]
fn bad_input_is_refused_and_nothing_written() {
    let nan = f32::NAN;
    type Edit = fn(&mut Rig<f32>, &mut usize, &mut f32);
    let cases: [(&str, Edit, JobError); 12] = [
        ("pelvis past the end", |_, p, _| *p = JOINTS, JobError::JointIndexOutOfRange),
        ("knee past the end", |r, _, _| r.legs[1].knee = 40, JobError::JointIndexOutOfRange),
        ("toe past the end", |r, _, _| r.legs[0].toe = Some(JOINTS), JobError::JointIndexOutOfRange),
        ("knee not under the hip", |r, _, _| r.legs[0].knee = 7, JobError::InvalidRange),
        ("hip is the pelvis", |r, _, _| r.legs[0].hip = PELVIS, JobError::InvalidRange),
        ("two legs on one hip", |r, _, _| r.legs[1] = r.legs[0], JobError::InvalidRange),
        ("NaN dt", |_, _, dt| *dt = f32::NAN, JobError::InvalidTransform),
        ("negative dt", |_, _, dt| *dt = -0.01, JobError::InvalidTransform),
        ("infinite half-life", |r, _, _| r.settings.pelvis_half_life = f32::INFINITY, JobError::InvalidTransform),
        ("tilt of 90°", |r, _, _| r.settings.max_tilt = core::f32::consts::FRAC_PI_2, JobError::InvalidTransform),
        ("zero forward", |r, _, _| r.settings.forward = Vec3::ZERO, JobError::InvalidAxis),
        ("NaN model matrix", |r, _, _| r.model[3].cols[0][0] = f32::NAN, JobError::InvalidTransform),
    ];
    let grounds: [(&str, GroundHit<f32>, JobError); 3] = [
        ("NaN height", GroundHit { height: nan, normal: Vec3::Y }, JobError::InvalidTransform),
        (
            "infinite normal",
            GroundHit { height: 0.0, normal: Vec3::new(0.0, f32::INFINITY, 0.0) },
            JobError::InvalidTransform,
        ),
        ("zero normal", GroundHit { height: 0.0, normal: Vec3::ZERO }, JobError::InvalidAxis),
    ];
    let settled = || {
        let mut rig = Rig::<f32>::new();
        rig.place(1.0 / FPS, &mut flat(-0.05)).unwrap();
        rig.animate(Vec3::new(0.001, 0.0, 0.0));
        rig
    };
    let untouched = |rig: &Rig<f32>, before: &Rig<f32>, name: &str| {
        assert_eq!(rig.pose, before.pose, "{name}: pose written");
        assert!(
            rig.model
                .iter()
                .zip(&before.model)
                .all(|(a, b)| a.to_cols_array().map(f32::to_bits) == b.to_cols_array().map(f32::to_bits)),
            "{name}: model written"
        );
        assert_eq!(rig.state, before.state, "{name}: state written");
        for (a, b) in rig.leg_states.iter().zip(&before.leg_states) {
            assert_eq!((a.lock(), a.previous()), (b.lock(), b.previous()), "{name}: lock written");
        }
    };
    for (name, edit, error) in cases {
        let mut rig = settled();
        let (mut pelvis, mut dt) = (PELVIS, 1.0 / FPS);
        edit(&mut rig, &mut pelvis, &mut dt);
        let before = Rig { skeleton: skeleton(), ..rig };
        let result = FootPlacementJob {
            skeleton: rig.skeleton.view(),
            pelvis,
            legs: &rig.legs,
            settings: rig.settings,
            state: &mut rig.state,
            leg_states: &mut rig.leg_states,
            world: rig.world,
            dt,
            pose: &mut rig.pose,
            model: &mut rig.model,
            ground: &mut flat(0.0),
        }
        .run();
        assert_eq!(result, Err(error), "{name}");
        untouched(&rig, &before, name);
    }
    for (name, hit, error) in grounds {
        for bad_leg in 0..2 {
            let mut rig = settled();
            let before = Rig { skeleton: skeleton(), ..rig };
            let mut ground = |leg: usize, _: Vec3<f32>| {
                Some(if leg == bad_leg { hit } else { GroundHit { height: 0.0, normal: Vec3::Y } })
            };
            assert_eq!(rig.place(1.0 / FPS, &mut ground), Err(error), "{name}, leg {bad_leg}");
            untouched(&rig, &before, name);
        }
    }
    // Short buffers.
    let mut rig = settled();
    let mut short = [LegState::new()];
    let mut job = FootPlacementJob {
        skeleton: rig.skeleton.view(),
        pelvis: PELVIS,
        legs: &rig.legs,
        settings: rig.settings,
        state: &mut rig.state,
        leg_states: &mut short,
        world: rig.world,
        dt: 0.0,
        pose: &mut rig.pose,
        model: &mut rig.model,
        ground: &mut flat(0.0),
    };
    assert_eq!(job.run(), Err(JobError::ContextTooSmall));
    job.leg_states = &mut rig.leg_states;
    job.model = &mut [];
    assert_eq!(job.run(), Err(JobError::OutputTooSmall));
    job.pose = &mut [];
    assert_eq!(job.run(), Err(JobError::InputTooSmall));
}

#[test]
fn a_reset_settles_the_next_run() {
    let mut rig = Rig::<f32>::new();
    let dt = 1.0 / FPS;
    rig.place(dt, &mut flat(0.0)).unwrap();
    // Without a reset, a drop of the ground moves the pelvis by one spring step only.
    rig.animate(Vec3::ZERO);
    rig.place(dt, &mut flat(-0.1)).unwrap();
    assert!(rig.state.pelvis_offset() > -0.05);
    rig.state.reset();
    assert!(rig.state.settling());
    rig.animate(Vec3::new(0.3, 0.0, 0.0));
    rig.place(dt, &mut flat(-0.1)).unwrap();
    assert!((rig.state.pelvis_offset() + 0.1).abs() < 1.0e-6);
    assert_eq!(rig.state.pelvis_velocity(), 0.0);
    // The locks are taken where the feet are now, though they moved 0.3 in one frame.
    for (i, leg) in LEGS.into_iter().enumerate() {
        match rig.leg_states[i].lock() {
            FootLock::Locked(at) => assert!((at.x - rig.at(leg[2]).x).abs() < 1.0e-4),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn exp_neg_and_the_spring_constant() {
    // Relative error of f32 where e^(−x) ≥ 1e-6, absolute error everywhere, Q16's absolute error.
    let mut worst = [0.0f64; 3];
    for i in 0..=3000 {
        let x = i as f64 / 100.0;
        // Against the exponential of the argument as it reaches each type.
        let e = (-f64::from(x as f32)).exp();
        let f = (f64::from(exp_neg(x as f32)) - e).abs();
        if e >= 1.0e-6 {
            worst[0] = worst[0].max(f / e);
        }
        worst[1] = worst[1].max(f);
        let q = Q16::from_f32(x as f32);
        worst[2] = worst[2].max((f64::from(exp_neg(q).to_f32()) - (-f64::from(q.to_f32())).exp()).abs());
    }
    std::println!(
        "exp(−x): f32 relative error {:.2e}, absolute {:.2e}; Q16 absolute error {:.2e}",
        worst[0],
        worst[1],
        worst[2]
    );
    assert!(worst[0] < 1.0e-6 && worst[1] < 2.0e-7 && worst[2] < 1.0e-4, "{worst:?}");
    // A step from rest covers half its distance in one half-life.
    let omega = f64::from(spring_frequency(0.25f32));
    let t = 0.25;
    assert!(((1.0 + omega * t) * (-omega * t).exp() - 0.5).abs() < 1.0e-6);
}

#[test]
fn ground_plane_heights() {
    let (plane, _) = slope::<f32>(45.0);
    assert!((plane.height_at(Vec3::new(2.0, 9.0, 5.0)).unwrap() - 2.0).abs() < 1.0e-5);
    let wall = GroundPlane { height: 0.0f32, normal: Vec3::X };
    assert_eq!(wall.height_at(Vec3::ZERO), None);
    let mut flat = GroundPlane::flat(0.5f32);
    assert_eq!(flat.ground(3, Vec3::new(1.0, 2.0, 3.0)), Some(GroundHit { height: 0.5, normal: Vec3::Y }));
}

#[test]
fn disabled_from_the_start_leaves_the_pose() {
    let mut rig = Rig::<f32>::new();
    rig.state = FootState::new(false);
    let (pose, model) = (rig.pose, rig.model);
    rig.place(0.0, &mut flat(0.1)).unwrap();
    assert_eq!(rig.pose, pose);
    assert_eq!(rig.model, model);
    assert_eq!(rig.state.weight(), 0.0);
    assert!(rig.leg_states.iter().all(|l| l.lock() == FootLock::Free && l.previous().is_some()));
}

#[test]
fn a_joint_between_knee_and_ankle() {
    // One leg whose ankle hangs from a twist joint half way down the shin, the twist turned
    // about the shin: the IK chain spans it and the foot's rotation is taken under it.
    let t = |p: Vec3<f32>, q: Quat<f32>| Transform::new(p, q, Vec3::ONE);
    let twist = Quat::from_axis_angle(Vec3::Y, 0.7);
    let rest = [
        t(Vec3::ZERO, Quat::IDENTITY),
        t(Vec3::new(0.0, 0.93, 0.0), Quat::IDENTITY),
        t(Vec3::new(0.1, -0.05, 0.0), rx(-BEND)),
        t(Vec3::new(0.0, -0.42, 0.0), rx(2.0 * BEND)),
        t(Vec3::new(0.0, -0.2, 0.0), twist),
        t(Vec3::new(0.0, -0.2, 0.0), twist.conjugate() * rx(-BEND)),
    ];
    let names = ["root", "pelvis", "hip", "knee", "twist", "ankle"];
    let skeleton = Skeleton::<f32, 2>::new(&[NO_PARENT, 0, 1, 2, 3, 4], &rest, &names).unwrap();
    let mut pose = [SoaTransform::IDENTITY; 2];
    pose.copy_from_slice(skeleton.rest_pose());
    let mut model = [Mat4::IDENTITY; 6];
    LocalToModelJob::new(skeleton.view(), &pose, &mut model).run().unwrap();
    let before = model;
    let legs = [FootLeg { hip: 2, knee: 3, ankle: 5, toe: None, standing_height: model[5].translation().y }];
    let (mut state, mut leg_states) = (FootState::new(true), [LegState::new()]);
    FootPlacementJob {
        skeleton: skeleton.view(),
        pelvis: PELVIS,
        legs: &legs,
        settings: FootSettings::new(),
        state: &mut state,
        leg_states: &mut leg_states,
        world: Mat4::IDENTITY,
        dt: 0.0,
        pose: &mut pose,
        model: &mut model,
        ground: &mut flat(0.1),
    }
    .run()
    .unwrap();
    let rise = model[5].translation() - before[5].translation();
    assert!((rise - Vec3::new(0.0, 0.1, 0.0)).length() < 1.0e-4, "{rise:?}");
    let (was, now) = (rotation_of(&before[5]).unwrap(), rotation_of(&model[5]).unwrap());
    assert!(was.angle_between(now) < 1.0e-3, "the foot turned by {}", was.angle_between(now));
    // The twist stays on the shin, half way between knee and ankle.
    let mid = (model[3].translation() + model[5].translation()) * 0.5;
    assert!((model[4].translation() - mid).length() < 1.0e-4);
}
