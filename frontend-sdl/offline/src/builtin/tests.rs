//! Tests of the built-in rigs: well-formed skins, clips keyed at 30 Hz with root motion and a
//! right-arm wave, the tentacle's weight falloff, the leg solve, and the baked `walk` and `run`
//! planting their feet.

use sinew::clip::RotationInterpolation;
use sinew::math::{SoaTransform, Vec3};

use super::gait::leg_angles;
use super::*;
use crate::bake::BakeOptions;
use crate::model::Model;
use crate::rig::Rig;

/// The humanoid baked as the demo's scene bakes it (no palette limit, 4 influences).
fn baked_humanoid() -> Model {
    let opts = BakeOptions { palette: None, max_influences: 4, ..BakeOptions::default() };
    Model::from_rig(&humanoid_rig(), &opts).unwrap()
}

fn weights_ok(rig: &Rig) {
    for m in &rig.meshes {
        let skin_len = rig.skins[m.skin.unwrap()].joints.len();
        for p in &m.primitives {
            let k = p.influences;
            assert_eq!(p.joint_weights.len(), p.positions.len() * k);
            for v in 0..p.positions.len() {
                let w: f32 = p.joint_weights[v * k..v * k + k].iter().sum();
                assert!((w - 1.0).abs() < 1e-5, "{}: vertex {v} weights sum to {w}", rig.name);
                assert!(p.joint_indices[v * k..v * k + k].iter().all(|&j| (j as usize) < skin_len));
            }
            assert!(p.indices.iter().all(|&i| (i as usize) < p.positions.len()));
        }
    }
}

#[test]
fn rigs_are_well_formed() {
    for rig in [tentacle_rig(), humanoid_rig(), twist_rig()] {
        weights_ok(&rig);
    }
    assert_eq!(humanoid_rig().joints.len(), humanoid::COUNT);
}

#[test]
fn clips_are_linear_at_30_hz_with_root_motion_and_a_right_arm_wave() {
    let rig = humanoid_rig();
    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["idle", "walk", "run", "wave"]);
    for c in &rig.clips {
        for ch in &c.channels {
            assert_eq!(ch.interpolation, crate::rig::Interpolation::Linear);
            assert!(ch.times.windows(2).all(|w| (w[1] - w[0] - 1.0 / KEY_RATE).abs() < 1e-5));
        }
    }
    // The wave animates the right arm from the clavicle down: the joints of its mask.
    let wave = &rig.clips[3];
    let joints: Vec<usize> = wave.channels.iter().map(|c| c.joint).collect();
    assert_eq!(joints, [humanoid::R_CLAVICLE, humanoid::R_UPPER_ARM, humanoid::R_FOREARM, humanoid::R_HAND]);
    // The baked walk and run move the root forward by speed × cycle per cycle.
    let m = &baked_humanoid();
    for (name, speed, cycle) in [("walk", WALK_SPEED, WALK_CYCLE), ("run", RUN_SPEED, RUN_CYCLE)] {
        let clip = m.find_clip(name).unwrap();
        let mut pose = Vec::new();
        let root_z = |t: f32, pose: &mut Vec<SoaTransform<f32>>| {
            m.sample(Some(clip), t, RotationInterpolation::NlerpCorrected, &mut Vec::new(), pose).unwrap();
            pose[0].lane(humanoid::ROOT).translation
        };
        let (a, b) = (root_z(0.0, &mut pose), root_z(cycle, &mut pose));
        assert!((b.z - a.z - speed * cycle).abs() < 1e-3, "{name}: {} m", b.z - a.z);
        assert!(b.x.abs() < 1e-3 && b.y.abs() < 1e-3);
    }
}

#[test]
fn tentacle_weights_fall_off_smoothly_along_the_length() {
    let rig = tentacle_rig();
    let p = &rig.meshes[0].primitives[0];
    let bone = TENTACLE_LENGTH / TENTACLE_JOINTS as f32;
    let weight_of = |v: usize, j: u16| -> f32 {
        (0..4).filter(|&k| p.joint_indices[v * 4 + k] == j).map(|k| p.joint_weights[v * 4 + k]).sum()
    };
    // Per joint, weight against height over the vertices of one side.
    let mut samples: Vec<(f32, [f32; 4])> = (0..p.positions.len())
        .filter(|&v| p.normals.as_ref().unwrap()[v][2] > 0.9)
        .map(|v| (p.positions[v][1], [0, 1, 2, 3].map(|j| weight_of(v, j))))
        .collect();
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (y, w) in &samples {
        // Full weight at a bone's center, at most two joints anywhere.
        let i = ((y / bone - 0.5).round() as usize).min(3);
        if ((y / bone - 0.5) - i as f32).abs() < 1e-4 {
            assert!((w[i] - 1.0).abs() < 1e-5, "y {y}: {w:?}");
        }
        assert!(w.iter().filter(|&&x| x > 0.0).count() <= 2);
    }
    // Smooth: no weight jumps by more than 0.25 between rings 5 cm apart.
    for pair in samples.windows(2) {
        for j in 0..4 {
            assert!((pair[1].1[j] - pair[0].1[j]).abs() <= 0.25, "{pair:?}");
        }
    }
}

fn horizontal(v: Vec3<f32>) -> f32 {
    Vec3::new(v.x, 0.0, v.z).length()
}

#[test]
fn leg_angles_reach_the_target() {
    // Forward kinematics of the sagittal chain, as `Gait::leg` builds it.
    let fk = |hip: f32, knee: f32| {
        let (a, b) = (THIGH_LENGTH, SHIN_LENGTH);
        (-a * hip.cos() - b * (hip + knee).cos(), -a * hip.sin() - b * (hip + knee).sin())
    };
    let mut worst = 0.0f32;
    for i in 0..50 {
        for j in 0..50 {
            let (y, z) = (-0.3 - 0.5 * i as f32 / 49.0, -0.45 + 0.9 * j as f32 / 49.0);
            if (y * y + z * z).sqrt() > 0.8 {
                continue;
            }
            let (hip, knee) = leg_angles(y, z);
            assert!(knee >= 0.0, "the knee bends forward");
            let (fy, fz) = fk(hip, knee);
            worst = worst.max((fy - y).abs().max((fz - z).abs()));
        }
    }
    assert!(worst < 1e-5, "{worst}");
}

/// Largest horizontal slide of a planted ankle and largest height error of a planted ankle,
/// over two cycles of a baked locomotion clip (model space, the root moving with the clip).
fn clip_foot_slide(m: &Model, name: &str, g: &Gait) -> (f32, f32) {
    let clip = m.find_clip(name).unwrap();
    let (mut slide, mut height) = (0.0f32, 0.0f32);
    let n = 1200;
    for (side, foot) in [(1.0f32, humanoid::L_FOOT), (-1.0, humanoid::R_FOOT)] {
        let mut anchor: Option<Vec3<f32>> = None;
        for k in 0..n {
            let t = 2.0 * g.cycle * k as f32 / n as f32;
            let (_, _, _, planted) = g.foot(side, t);
            if !planted {
                anchor = None;
                continue;
            }
            let (loops, local) = ((t / g.cycle).floor(), t.rem_euclid(g.cycle));
            let mut pose = Vec::new();
            m.sample(Some(clip), local, RotationInterpolation::NlerpCorrected, &mut Vec::new(), &mut pose).unwrap();
            let mut joints = Vec::new();
            m.world(&pose, &mut joints).unwrap();
            let p = joints[foot].translation() + Vec3::new(0.0, 0.0, loops * g.speed * g.cycle);
            let a = *anchor.get_or_insert(p);
            slide = slide.max(horizontal(p - a));
            height = height.max((p.y - ANKLE_HEIGHT).abs());
        }
    }
    (slide, height)
}

#[test]
fn baked_walk_and_run_plant_their_feet() {
    let m = &baked_humanoid();
    for (name, g) in [("walk", WALK_GAIT), ("run", RUN_GAIT)] {
        let (slide, height) = clip_foot_slide(m, name, &g);
        eprintln!("{name} clip: planted ankle slides {:.2} mm, height error {:.2} mm", slide * 1e3, height * 1e3);
        // Exact at the keys up to the hips' sway (the leg stays in the plane through the
        // swaying hip joint); in between, the joint angles' linear interpolation (30 keys/s)
        // moves the ankle by a few millimeters, mostly near the ends of the stance where the
        // knee is nearly straight. The demo scene's foot locking removes both.
        assert!(slide < 6.0e-3 && height < 8.0e-3, "{name}: {slide} {height}");
    }
}
