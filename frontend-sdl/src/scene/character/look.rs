//! Where the character looks and how: the [`scripted_look_target`] circling inside its path or
//! a [`LookRay`] (the mouse cursor's), and the look-at that turns its neck and head towards the
//! target with [`IkAimJob`].

use std::f32::consts::PI;

use sinew::job::ik::{apply_correction, IkAimJob};
use sinew::job::{JobError, LocalToModelJob};
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
use sinew_offline::builtin::{humanoid, smoothstep};
use sinew_offline::model::Model;

use super::path::PATH_CENTER;
use crate::scene::error::SceneError;

/// Where the character looks when no [`LookRay`] is given: a point circling inside its path
/// at about head height, a function of the scene time `t`.
#[must_use]
pub fn scripted_look_target(t: f32) -> Vec3<f32> {
    let a = 0.45 * t;
    PATH_CENTER + Vec3::new(0.8 * a.cos(), 1.45 + 0.2 * (1.3 * t).sin(), 0.35 * a.sin())
}

/// A ray in world space (from the camera through the mouse cursor, say) that the character
/// looks along: its target is where the ray crosses the vertical plane facing the ray that
/// passes [`LOOK_PLANE_DISTANCE`] in front of the character's head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookRay {
    /// Start of the ray.
    pub origin: Vec3<f32>,
    /// Direction of the ray (any non-zero length).
    pub direction: Vec3<f32>,
}

/// Distance in front of the character's head of the plane a [`LookRay`] is projected on, in
/// meters.
pub const LOOK_PLANE_DISTANCE: f32 = 1.0;

impl LookRay {
    /// The point of the ray on the vertical plane facing it through `anchor` (the closest point
    /// to `anchor` for a vertical ray); `None` when that point is behind the origin or the ray
    /// is degenerate.
    #[must_use]
    pub fn target(&self, anchor: Vec3<f32>) -> Option<Vec3<f32>> {
        let d = self.direction.try_normalize()?;
        let n = Vec3::new(d.x, 0.0, d.z).try_normalize().filter(|n| n.dot(d) > 1.0e-3).unwrap_or(d);
        let s = (anchor - self.origin).dot(n) / d.dot(n);
        let p = self.origin + d * s;
        (s > 0.0 && p.is_finite()).then_some(p)
    }
}

/// Where the eyes are in the head joint's space (it faces +Z with +Y up).
pub(in crate::scene) const EYES: Vec3<f32> = Vec3 { x: 0.0, y: 0.11, z: 0.08 };
/// Horizontal angle from the character's facing up to which it looks at a target fully, and
/// beyond which it no longer does (the weight fades out smoothly in between), radians.
const LOOK_FULL: f32 = 90.0 * PI / 180.0;
const LOOK_LIMIT: f32 = 130.0 * PI / 180.0;
/// Share of the look-at turn taken by the neck; the head takes the rest.
const NECK_SHARE: f32 = 0.5;

/// Turns the neck and head of the humanoid posed by `pose` (model matrices `joints`, placed by
/// `world`) towards `target` (world space) with [`IkAimJob`]: the neck takes [`NECK_SHARE`]
/// of the turn, the head the rest, so the eyes' forward ray passes through the target. The
/// weight fades out for targets behind the character. Updates `pose` and `joints`; returns
/// the weight.
pub(super) fn look_at(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    joints: &mut [Mat4<f32>],
    world: &Mat4<f32>,
    target: Vec3<f32>,
) -> Result<f32, SceneError> {
    use humanoid::{HEAD, NECK};
    let inverse = world.inverse().ok_or(SceneError::Job(JobError::InvalidTransform))?;
    let target = inverse.transform_point3(target);
    let head = *joints.get(HEAD).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
    let to = target - head.translation();
    let angle = to.x.abs().atan2(to.z);
    let weight = 1.0 - smoothstep((angle - LOOK_FULL) / (LOOK_LIMIT - LOOK_FULL));
    if weight <= 0.0 {
        return Ok(0.0);
    }
    for (joint, share) in [(NECK, NECK_SHARE), (HEAD, 1.0)] {
        let head = *joints.get(HEAD).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
        let m = *joints.get(joint).ok_or(SceneError::Job(JobError::OutputTooSmall))?;
        let inv = m.inverse().ok_or(SceneError::Job(JobError::InvalidTransform))?;
        let (mut correction, mut reached) = (Quat::IDENTITY, false);
        IkAimJob {
            target,
            forward: inv.transform_vector3(head.transform_vector3(Vec3::Z)),
            up: inv.transform_vector3(head.transform_vector3(Vec3::Y)),
            offset: inv.transform_point3(head.transform_point3(EYES)),
            pole_vector: Vec3::Y,
            twist_angle: 0.0,
            weight: share * weight,
            joint: &m,
            joint_correction: &mut correction,
            reached: &mut reached,
        }
        .run()
        .map_err(SceneError::Job)?;
        apply_correction(pose, joint, correction).map_err(SceneError::Job)?;
        LocalToModelJob {
            skeleton: model.skeleton(),
            root: None,
            input: pose,
            output: joints,
            from: Some(joint),
            to: None,
        }
        .run()
        .map_err(SceneError::Job)?;
    }
    Ok(weight)
}
