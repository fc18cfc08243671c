//! Spring bones against an independent implementation: three-vrm 3.5.5's
//! `VRMSpringBoneManager` (`@pixiv/three-vrm-springbone`, pinned in
//! `frontend-sdl/web/package-lock.json`), run in Node by `tests/springs/three_springs.mjs`.
//!
//! Each shared VRM model is imported ([`import::load`]), its resolved spring joints are given to
//! the core's [`SpringBoneJob`] in `f32` on the rig's rest pose, and both sides step 600 times
//! at 60 Hz: held in place, and moved on the script's path (a sway of 0.3 × the model's height
//! and turns of up to 0.6 rad about Y and 0.3 rad about Z, so that every spring swings). After
//! every step, every node's world position must be within 1e-4 × the model's height (the
//! height of its rest nodes) of three-vrm's. Both sides count joint-collider contacts (a
//! collider test that finds the tail inside); the counts are printed, every model's spring must
//! hit its collider on each path, and the two counts may differ by at most 1 % (a tail resting
//! exactly on a collider's surface is a contact or not by rounding). The VRM 0.x model of
//! `tests/data/vrm` (its `secondaryAnimation` converted by each side) runs the same way, moved
//! on a wider path on which its hair reaches the head's colliders.
//!
//! Node and the npm packages are found as the other cross-checks find them
//! (`tests/support/npm.rs`); without `node` or `npm` the cross-check is skipped with a printed
//! reason (CI has both).

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sinew::job::spring::{SpringBoneJob, SpringBones, SpringCollider, SpringJoint, SpringTail, NO_JOINT};
use sinew::job::LocalToModelJob;
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
use sinew::skeleton::{Skeleton, NO_PARENT};
use sinew_offline::import;
use sinew_offline::rig::{self, Rig};

#[path = "support/npm.rs"]
mod npm;

/// The implementation the check runs against, as its messages name it.
const THREE: &str = "three-vrm 3.5.5 VRMSpringBoneManager";

/// Steps and rate of both runs.
const STEPS: usize = 600;
const RATE: f64 = 60.0;

/// The shared models: VRM 1.0 conformance models (a 4-joint chain under the head falling onto a
/// capsule or a sphere on the head) and three-vrm's examples (a 5-node chain, a sphere, a plane
/// and an inside sphere of `VRMC_springBone_extended_collider`).
const MODELS: [&str; 5] = [
    "vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm",
    "vrm/vrm-conformance/springbone_collider_sphere_x0p02_r0p1.vrm",
    "vrm/three-vrm/sphere-collider.gltf",
    "vrm/three-vrm/plane-collider.gltf",
    "vrm/three-vrm/inside-collider.gltf",
];

/// The shared models' path: a sway of 0.3 × the model's height, turns of up to 0.6 rad.
const MOTION: (f64, f64) = (0.3, 0.6);

/// Capacity of the test's skeletons, in SoA groups of 4 joints.
const SOA: usize = 16;

fn v3(a: [f32; 3]) -> Vec3<f32> {
    Vec3::new(a[0], a[1], a[2])
}

/// The core's spring data for the rig's resolved joints.
struct CoreSprings {
    joints: Vec<SpringJoint<f32>>,
    colliders: Vec<SpringCollider<f32>>,
    joint_colliders: Vec<u16>,
}

fn core_springs(springs: &rig::SpringBones) -> CoreSprings {
    let index = |j: usize| u16::try_from(j).expect("a joint index below u16::MAX");
    let colliders =
        springs.colliders.iter().map(|c| SpringCollider { joint: index(c.joint), shape: c.shape.to_core() }).collect();
    let mut joint_colliders = Vec::new();
    let joints = springs
        .joints
        .iter()
        .map(|j| {
            let start = index(joint_colliders.len());
            joint_colliders.extend(j.colliders.iter().map(|&c| index(c)));
            SpringJoint {
                joint: index(j.joint),
                child: j.child.map_or(NO_JOINT, index),
                tail: v3(j.tail),
                hit_radius: j.params.hit_radius,
                stiffness: j.params.stiffness,
                gravity_power: j.params.gravity_power,
                gravity_dir: v3(j.params.gravity_dir),
                drag_force: j.params.drag_force,
                center: j.center.map_or(NO_JOINT, index),
                colliders_start: start,
                colliders_len: index(j.colliders.len()),
            }
        })
        .collect();
    CoreSprings { joints, colliders, joint_colliders }
}

/// The script's path: `world(t) = T(A·sin(2π·0.5·t), 0, 0.5·A·sin(2π·0.8·t)) ·
/// Ry(Θ·sin(2π·0.3·t)) · Rz(0.5·Θ·sin(2π·0.7·t))`.
fn world(t: f64, amplitude: f64, turn: f64) -> Mat4<f32> {
    let tau = std::f64::consts::TAU;
    let t3 =
        Vec3::new((amplitude * (tau * 0.5 * t).sin()) as f32, 0.0, (0.5 * amplitude * (tau * 0.8 * t).sin()) as f32);
    let yaw = Quat::from_axis_angle(Vec3::new(0.0, 1.0, 0.0), (turn * (tau * 0.3 * t).sin()) as f32);
    let roll = Quat::from_axis_angle(Vec3::new(0.0, 0.0, 1.0), (0.5 * turn * (tau * 0.7 * t).sin()) as f32);
    Mat4::from_trs(t3, yaw * roll, Vec3::new(1.0, 1.0, 1.0))
}

/// Every joint's world position after each step (step 0: after the reset), and the contacts of
/// each step.
fn sinew_run(rig: &Rig, amplitude: f64, turn: f64) -> (Vec<Vec<[f64; 3]>>, Vec<u32>) {
    let springs = rig.springs.as_ref().expect("the model has spring bones");
    let data = core_springs(springs);
    let parents: Vec<i16> =
        rig.joints.iter().map(|j| j.parent.map_or(NO_PARENT, |p| i16::try_from(p).expect("a parent index"))).collect();
    // The core's joint names are short; the check matches joints by index.
    let names = vec![""; rig.joints.len()];
    let rest: Vec<_> = rig.joints.iter().map(|j| j.rest).collect();
    let skeleton = Box::new(Skeleton::<f32, SOA>::new(&parents, &rest, &names).expect("the rig's skeleton"));
    let view = skeleton.view();
    let n = view.num_joints();
    let mut locals: Vec<SoaTransform<f32>> = view.rest_pose().to_vec();
    let mut models = vec![Mat4::IDENTITY; n];
    let mut tails = vec![SpringTail::default(); data.joints.len()];
    let bones =
        SpringBones { joints: &data.joints, colliders: &data.colliders, joint_colliders: &data.joint_colliders };
    let mut frames = Vec::with_capacity(STEPS + 1);
    let mut contacts = Vec::with_capacity(STEPS + 1);
    for k in 0..=STEPS {
        let w = world(k as f64 / RATE, amplitude, turn);
        // The pose of this step: the rest pose held.
        locals.copy_from_slice(view.rest_pose());
        LocalToModelJob::new(view, &locals, &mut models).run().expect("local-to-model");
        let mut job = SpringBoneJob {
            skeleton: view,
            springs: bones,
            world: w,
            locals: &mut locals,
            models: &mut models,
            tails: &mut tails,
        };
        let report = if k == 0 { job.reset() } else { job.step(1.0 / RATE as f32) };
        contacts.push(report.expect("the spring job runs").contacts);
        frames.push(
            models
                .iter()
                .map(|m| {
                    let p = (w * *m).translation();
                    [f64::from(p.x), f64::from(p.y), f64::from(p.z)]
                })
                .collect(),
        );
    }
    (frames, contacts)
}

/// three-vrm's node positions after each step and its contacts per step.
fn three_run(modules: &Path, file: &Path, amplitude: f64, turn: f64) -> (Vec<String>, Vec<Vec<[f64; 3]>>, Vec<u64>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/springs/three_springs.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(modules)
        .arg(file)
        .args([STEPS.to_string(), RATE.to_string(), amplitude.to_string(), turn.to_string()])
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{THREE} on {}:\n{}", file.display(), String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    assert_eq!(v["springbone"], "3.5.5", "the cross-check is written for {THREE}");
    let names = v["nodes"].as_array().expect("nodes").iter().map(|n| n.as_str().unwrap_or("").to_owned()).collect();
    let point = |p: &Value| -> [f64; 3] { [0, 1, 2].map(|k| p[k].as_f64().expect("a coordinate")) };
    let frames = v["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s.as_array().expect("positions").iter().map(point).collect())
        .collect();
    let contacts = v["contacts"].as_array().expect("contacts").iter().map(|c| c.as_u64().expect("a count")).collect();
    (names, frames, contacts)
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Runs one model both ways, held (`motion` `None`) or on the path with a sway of `motion.0` ×
/// the model's height and turns of `motion.1` rad; returns the worst deviation over the height, and the
/// contact counts (sinew, three-vrm).
fn cross_check(modules: &Path, path: &Path, motion: Option<(f64, f64)>) -> (f64, u64, u64) {
    let rel = path.display();
    let rig = import::load(path, None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(rig.source_nodes.len(), rig.joints.len(), "{rel}: every joint names its glTF node");
    // The height of the rest nodes (three.js's step 0 is the rest pose, the path at t = 0 being
    // the identity).
    let (_, rest, _) = three_run(modules, path, 0.0, 0.0);
    let ys = rest[0].iter().map(|p| p[1]);
    let height = ys.clone().fold(f64::MIN, f64::max) - ys.fold(f64::MAX, f64::min);
    assert!(height > 0.0, "{rel}: a model with height");
    let (amplitude, turn) = motion.map_or((0.0, 0.0), |(sway, turn)| (sway * height, turn));
    let (names, three, three_contacts) = three_run(modules, path, amplitude, turn);
    let (ours, contacts) = sinew_run(&rig, amplitude, turn);
    assert_eq!(three.len(), STEPS + 1);
    let mut worst = (0.0f64, 0usize, 0usize);
    for (k, (a, b)) in ours.iter().zip(&three).enumerate() {
        for (j, &node) in rig.source_nodes.iter().enumerate() {
            let d = distance(a[j], b[node]);

            if d > worst.0 {
                worst = (d, k, node);
            }
        }
    }
    let (d, k, node) = worst;
    let (ours_total, three_total) = (contacts.iter().map(|&c| u64::from(c)).sum::<u64>(), three_contacts.iter().sum());
    eprintln!(
        "{rel} ({}): largest distance to {THREE} {:.2e} × the height ({height:.3}) at step {k}, node {} ({}); \
         joint-collider contacts: sinew {ours_total}, three-vrm {three_total}",
        if motion.is_some() { "moving" } else { "held" },
        d / height,
        node,
        names.get(node).map_or("?", String::as_str),
    );
    assert!(d <= 1e-4 * height, "{rel}: node {node} is {d} off three-vrm's at step {k} (height {height})");
    assert!(
        ours_total.abs_diff(three_total) * 100 <= three_total,
        "{rel}: {ours_total} contacts, three-vrm {three_total}"
    );
    (d / height, ours_total, three_total)
}

#[test]
fn spring_bones_match_three_vrm_on_the_shared_models() {
    let modules = match npm::node_modules() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("skipped: the cross-check against {THREE}: {why}");
            return;
        }
    };
    for rel in MODELS {
        let path = sinew_assets::path(rel);
        let conformance = rel.contains("conformance");
        // The conformance models' chains fall under gravity onto their collider with the model
        // held; three-vrm's examples have no gravity and rest where they are unless moved.
        if conformance {
            let (_, ours, three) = cross_check(&modules, &path, None);
            assert!(ours > 0 && three > 0, "{rel}: held, the chain hits its collider ({ours}, {three})");
        }
        let (_, ours, three) = cross_check(&modules, &path, Some(MOTION));
        assert!(ours > 0 && three > 0, "{rel}: moving, the chain hits its collider ({ours}, {three})");
    }
}

/// The VRM 0.x model of `tests/data/vrm` (`make_vrm0.py`): its `secondaryAnimation` read by
/// both sides (three-vrm converting it itself), a chain with a center, a virtual tail, a
/// zero-length tail and colliders on the head and on a spring joint, stepped on both paths.
#[test]
fn vrm0_spring_bones_match_three_vrm() {
    let modules = match npm::node_modules() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("skipped: the cross-check against {THREE}: {why}");
            return;
        }
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vrm/vrm0_springs.gltf");
    cross_check(&modules, &path, None);
    // Its tails rest away from the colliders: a wide sway and turns of up to 3 rad swing the
    // hair into the head's spheres.
    let (_, ours, three) = cross_check(&modules, &path, Some((2.0, 3.0)));
    assert!(ours > 0 && three > 0, "moving, the hair hits the head ({ours}, {three})");
}
