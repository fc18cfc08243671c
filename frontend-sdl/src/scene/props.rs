//! The poses of the scene's procedural props: the tentacle waving by `sin()` of time
//! ([`tentacle_pose`]) and the candy wrapper's twist ([`twist_angle`], [`twist_pose`],
//! [`scale_root`]).

use std::f32::consts::{PI, TAU};

use sinew::math::{SoaTransform, Transform, Vec3};
use sinew_offline::builtin::{rx, ry, rz, TENTACLE_JOINTS, TWIST_PERIOD};
use sinew_offline::model::Model;

/// The tentacle's local pose at time `t`: joint `i` swings `amplitude · sin(2π·speed·t − 0.9 i)`
/// about Z (half as much at the base) and a third of that, slower, about X.
#[must_use]
pub fn tentacle_pose(model: &Model, t: f32, speed: f32, amplitude: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    let w = TAU * speed;
    for i in 0..model.skeleton().num_joints().min(TENTACLE_JOINTS) {
        let Some(rest) = model.skeleton().rest_transform(i) else { continue };
        let k = if i == 0 { 0.5 } else { 1.0 };
        let bend = k * amplitude * (w * t - 0.9 * i as f32).sin();
        let sway = k * amplitude / 3.0 * (0.7 * w * t - 0.7 * i as f32).sin();
        let tr = Transform::new(rest.translation, rz(bend) * rx(sway), rest.scale);
        if let Some(g) = pose.get_mut(i / 4) {
            g.set_lane(i % 4, &tr);
        }
    }
    pose
}

/// The candy wrapper's twist angle at time `t`: 0 → π → 0 over [`TWIST_PERIOD`].
#[must_use]
pub fn twist_angle(t: f32) -> f32 {
    PI * (0.5 - 0.5 * (TAU * t / TWIST_PERIOD).cos())
}

/// The candy wrapper's local pose with its second joint twisted by `angle` about +Y.
#[must_use]
pub fn twist_pose(model: &Model, angle: f32) -> Vec<SoaTransform<f32>> {
    let mut pose = model.skeleton().rest_pose().to_vec();
    if let (Some(rest), Some(g)) = (model.skeleton().rest_transform(1), pose.first_mut()) {
        g.set_lane(1, &Transform::new(rest.translation, ry(angle), rest.scale));
    }
    pose
}

/// Multiplies the root joint's scale in `pose` by `scale`.
pub fn scale_root(model: &Model, pose: &mut [SoaTransform<f32>], scale: Vec3<f32>) {
    if let (Some(rest), Some(g)) = (model.skeleton().rest_transform(0), pose.first_mut()) {
        let mut root = g.lane(0);
        root.scale = rest.scale.mul_elem(scale);
        g.set_lane(0, &root);
    }
}
