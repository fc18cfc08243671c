//! Spring bones as a stage of a character ([`Character::set_springs`](super::Character::set_springs)):
//! the core's [`SpringBoneJob`] on the model's springs, after local-to-model, foot placement
//! and chain IK, before skinning, stepped at a fixed rate by the seconds the character
//! advances.
//!
//! Per update: a pending reset (the set-up, a seek, a switch on, [`Character::reset_springs`](super::Character::reset_springs))
//! puts the springs at rest in the current pose and drops the time owed; otherwise the time
//! advanced since the last update is cut into steps of `1 / rate` seconds, at most
//! `max_steps` of them (the rest is dropped and reported: a long stall does not turn into a
//! burst of steps), each on the current pose and world. An update with no step due still
//! puts every spring joint at the rotation its last step left, so that a frame rate above
//! the spring rate does not show the animated rotations between steps.

use alloc::vec::Vec;

use sinew::asset::Asset;
use sinew::job::spring::{SpringBoneJob, SpringBones, SpringCollider, SpringJoint, SpringPlan, SpringRest, SpringTail};
use sinew::job::JobError;
use sinew::math::{Mat4, SoaTransform};
use sinew::skeleton::SkeletonView;

/// A model's spring bones in the core's form, owned: what [`SpringBones`] borrows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpringSet {
    /// The spring joints, in run order.
    pub joints: Vec<SpringJoint<f32>>,
    /// The colliders.
    pub colliders: Vec<SpringCollider<f32>>,
    /// Each joint's colliders, as ranges of this table ([`SpringJoint::colliders_start`]).
    pub joint_colliders: Vec<u16>,
}

impl SpringSet {
    /// The spring bones of a file's spring section, copied out; `None` when it has none.
    #[must_use]
    pub fn from_asset(asset: &Asset<'_>) -> Option<SpringSet> {
        let s = asset.springs()?;
        Some(SpringSet {
            joints: (0..s.num_joints()).filter_map(|i| s.joint(i)).collect(),
            colliders: (0..s.num_colliders()).filter_map(|i| s.collider(i)).collect(),
            joint_colliders: (0..s.num_joint_colliders()).filter_map(|i| s.joint_collider(i)).collect(),
        })
    }

    /// The set as the core's job takes it.
    #[must_use]
    pub fn bones(&self) -> SpringBones<'_, f32> {
        SpringBones { joints: &self.joints, colliders: &self.colliders, joint_colliders: &self.joint_colliders }
    }
}

/// How the stage steps its springs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringSettings {
    /// Steps per second (a fixed step of `1 / rate` seconds); above 0.
    pub rate: f32,
    /// The most steps one update runs; at least 1.
    pub max_steps: u32,
}

impl Default for SpringSettings {
    /// 60 steps per second, at most 4 per update (a frame of up to 1/15 s keeps its time).
    fn default() -> Self {
        SpringSettings { rate: 60.0, max_steps: 4 }
    }
}

impl SpringSettings {
    /// Whether the rate is a positive finite number of steps per second and at least one step
    /// runs per update.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.rate.is_finite() && self.rate > 0.0 && (1.0 / self.rate).is_finite() && self.max_steps >= 1
    }
}

/// What the stage did in the last update.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpringFrame {
    /// Whether the update reset the springs (then no step ran).
    pub reset: bool,
    /// Steps run.
    pub steps: u32,
    /// Joint-collider contacts over those steps.
    pub contacts: u32,
    /// Seconds dropped because more than `max_steps` steps were due.
    pub dropped: f32,
}

/// The stage's state.
#[derive(Debug)]
pub(super) struct Springs {
    pub(super) set: SpringSet,
    /// The set's spring joints and the joints below them, on the model's skeleton.
    pub(super) plan: SpringPlan,
    /// The set's joints' constants on the model's skeleton, one per joint.
    pub(super) rests: Vec<SpringRest<f32>>,
    pub(super) settings: SpringSettings,
    pub(super) tails: Vec<SpringTail<f32>>,
    pub(super) enabled: bool,
    /// The next update resets instead of stepping.
    pub(super) reset: bool,
    /// Seconds advanced and not yet stepped.
    pub(super) dt: f32,
    pub(super) frame: SpringFrame,
}

impl Springs {
    /// Whether the stage runs in the next update.
    pub(super) fn active(&self) -> bool {
        self.enabled && !self.set.joints.is_empty()
    }

    /// Validates the set on `skeleton` (nothing written).
    pub(super) fn validate(&self, skeleton: SkeletonView<'_, f32>) -> Result<(), JobError> {
        if !self.settings.is_valid() {
            return Err(JobError::InvalidWeight);
        }
        self.set.bones().validate(&skeleton)
    }

    /// Gives the spring joints of `locals` the rotations their last step left (nothing when the
    /// next run is a reset); whether one changed.
    pub(super) fn keep_rotations(&self, locals: &mut [SoaTransform<f32>]) -> bool {
        let mut changed = false;
        if self.reset {
            return changed;
        }
        for (s, tail) in self.set.joints.iter().zip(&self.tails) {
            let j = usize::from(s.joint);
            if let Some(group) = locals.get_mut(j / 4) {
                changed |= group.rotation.lane(j % 4) != tail.rotation;
                group.rotation.set_lane(j % 4, tail.rotation);
            }
        }
        changed
    }

    /// One update's run on the placed pose and its model matrices (up to date on entry and on
    /// return).
    pub(super) fn run(
        &mut self,
        skeleton: SkeletonView<'_, f32>,
        locals: &mut [SoaTransform<f32>],
        models: &mut [Mat4<f32>],
        world: Mat4<f32>,
    ) -> Result<(), JobError> {
        let mut frame = SpringFrame::default();
        let h = 1.0 / self.settings.rate;
        let mut job = SpringBoneJob {
            skeleton,
            springs: self.set.bones(),
            world,
            locals: &mut *locals,
            models: &mut *models,
            tails: &mut self.tails,
        };
        if self.reset {
            job.reset()?;
            self.reset = false;
            self.dt = 0.0;
            frame.reset = true;
        } else {
            // Whole steps due; a thousandth of a step's slack keeps a frame of exactly one
            // step's length from rounding down to none.
            let due = self.dt * self.settings.rate + 1e-3;
            let steps = if due >= self.settings.max_steps as f32 {
                let kept = self.settings.max_steps;
                frame.dropped = (self.dt - kept as f32 * h).max(0.0);
                self.dt = 0.0;
                kept
            } else {
                // `due` is below `max_steps` here: the cast truncates a non-negative number.
                let n = due.max(0.0) as u32;
                self.dt = (self.dt - n as f32 * h).max(0.0);
                n
            };
            for _ in 0..steps {
                // The set was validated and planned on this skeleton at set-up (`set_springs`)
                // and does not change after.
                let report = job.step_validated_springs(h, &self.plan, &self.rests)?;
                frame.steps += 1;
                frame.contacts = frame.contacts.saturating_add(report.contacts);
            }
            if steps == 0 && self.keep_rotations(locals) {
                // The rotations the last step left, on this update's pose.
                crate::jobs::local_to_model(skeleton, locals, models)?;
            }
        }
        self.frame = frame;
        Ok(())
    }
}

pub mod colliders;
mod draw;

#[cfg(test)]
mod tests;
