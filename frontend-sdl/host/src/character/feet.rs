//! Foot placement as a stage of a character ([`Character::set_feet`](super::Character::set_feet)):
//! the core's [`FootPlacementJob`] on the character's legs ([`Legs`], found by the humanoid
//! naming with [`Legs::humanoid`]) over the caller's ground, after local-to-model.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use sinew::job::foot::{FootLeg, FootPlacementJob, FootSettings, FootState, Ground, LegState};
use sinew::job::JobError;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::skeleton::SkeletonView;

use crate::model::Model;

/// A leg's joints by name in the humanoid namings, per part (upper leg, lower leg, foot, toes),
/// the left side's names then the right's: Mixamo (after its `mixamorig:` prefix) and CMU
/// motion capture, VRM and the glTF humanoid, VRoid, the Unreal mannequin, Blender's rigs,
/// `Left_Thigh` rigs, sinew's built-in humanoid, the glTF samples' `leg_joint` figures and
/// Biovision motion capture (no toes).
const NAMES: [[&[&str]; 2]; 4] = [
    [
        &[
            "LeftUpLeg",
            "leftUpperLeg",
            "J_Bip_L_UpperLeg",
            "thigh_l",
            "thigh.L",
            "Left_Thigh",
            "l_thigh",
            "leg_joint_L_1",
            "LeftHip",
        ],
        &[
            "RightUpLeg",
            "rightUpperLeg",
            "J_Bip_R_UpperLeg",
            "thigh_r",
            "thigh.R",
            "Right_Thigh",
            "r_thigh",
            "leg_joint_R_1",
            "RightHip",
        ],
    ],
    [
        &[
            "LeftLeg",
            "leftLowerLeg",
            "J_Bip_L_LowerLeg",
            "calf_l",
            "shin.L",
            "Left_Shin",
            "l_shin",
            "leg_joint_L_2",
            "LeftKnee",
        ],
        &[
            "RightLeg",
            "rightLowerLeg",
            "J_Bip_R_LowerLeg",
            "calf_r",
            "shin.R",
            "Right_Shin",
            "r_shin",
            "leg_joint_R_2",
            "RightKnee",
        ],
    ],
    [
        &[
            "LeftFoot",
            "leftFoot",
            "J_Bip_L_Foot",
            "foot_l",
            "foot.L",
            "Left_Foot",
            "l_foot",
            "leg_joint_L_3",
            "LeftAnkle",
        ],
        &[
            "RightFoot",
            "rightFoot",
            "J_Bip_R_Foot",
            "foot_r",
            "foot.R",
            "Right_Foot",
            "r_foot",
            "leg_joint_R_3",
            "RightAnkle",
        ],
    ],
    [
        &["LeftToeBase", "leftToes", "J_Bip_L_ToeBase", "ball_l", "toe.L", "Left_Toe", "l_toe", "leg_joint_L_5"],
        &["RightToeBase", "rightToes", "J_Bip_R_ToeBase", "ball_r", "toe.R", "Right_Toe", "r_toe", "leg_joint_R_5"],
    ],
];

/// Whether joint name `name` is `wanted`, alone or after a prefix that ends in `:`, `_` or `|`
/// (`mixamorig:LeftUpLeg`, `Armature|thigh.L`).
fn named(name: &str, wanted: &str) -> bool {
    name.strip_suffix(wanted).is_some_and(|p| p.is_empty() || p.ends_with([':', '_', '|']))
}

/// A character's legs for foot placement: the pelvis the stage lowers and each leg.
#[derive(Debug, Clone, PartialEq)]
pub struct Legs {
    /// The pelvis: the joint above every leg's hip that the stage lowers.
    pub pelvis: usize,
    /// The legs, each with the ankle's standing height.
    pub legs: Vec<FootLeg<f32>>,
    /// The longest leg's length in the rest pose, hip to knee to ankle, model units.
    pub length: f32,
    /// The mean of the hips in the rest pose, model space.
    pub middle: Vec3<f32>,
}

impl Legs {
    /// The left and right legs of a humanoid model, found by name (see
    /// [`Legs::in_skeleton`]).
    #[must_use]
    // Out of line: a set-up path, whose inlined copies only grow a wasm module.
    #[inline(never)]
    pub fn humanoid(model: &Model) -> Option<Legs> {
        let skeleton = model.skeleton();
        let mut rest = vec![Mat4::IDENTITY; skeleton.num_joints()];
        crate::jobs::local_to_model(skeleton, skeleton.rest_pose(), &mut rest).ok()?;
        Self::in_skeleton(skeleton, &rest)
    }

    /// The left and right legs of `skeleton` by the humanoid naming, `rest` being its rest
    /// pose's model matrices: per side the first joints named upper leg, lower leg and foot
    /// (and toes, when named and below the foot), each below the one before; the pelvis is the
    /// nearest joint above both hips; each ankle's standing height is its height in the rest
    /// pose (the model's ground being `y = 0`). `None` unless both legs and the pelvis are
    /// found.
    #[must_use]
    pub fn in_skeleton(skeleton: SkeletonView<'_, f32>, rest: &[Mat4<f32>]) -> Option<Legs> {
        let find = |part: usize, side: usize| {
            let names = NAMES.get(part)?.get(side)?;
            (0..skeleton.num_joints()).find(|&j| skeleton.name(j).is_some_and(|n| names.iter().any(|w| named(n, w))))
        };
        let below = |j: usize, above: usize| j != above && skeleton.is_in_subtree(j, above);
        let at = |j: usize| rest.get(j).map_or(Vec3::ZERO, Mat4::translation);
        let mut legs = Vec::with_capacity(2);
        let mut length = 0.0f32;
        for side in 0..2 {
            let (hip, knee, ankle) = (find(0, side)?, find(1, side)?, find(2, side)?);
            if !(below(knee, hip) && below(ankle, knee)) {
                return None;
            }
            let toe = find(3, side).filter(|&t| below(t, ankle));
            length = length.max((at(knee) - at(hip)).length() + (at(ankle) - at(knee)).length());
            legs.push(FootLeg { hip, knee, ankle, toe, standing_height: at(ankle).y });
        }
        let (left, right) = (legs.first()?.hip, legs.get(1)?.hip);
        let mut pelvis = skeleton.parent(left)?;
        while !below(right, pelvis) {
            pelvis = skeleton.parent(pelvis)?;
        }
        let middle = (at(left) + at(right)) * 0.5;
        Some(Legs { pelvis, legs, length, middle })
    }

    /// The core's settings ([`FootSettings::new`], for legs of a human's length in meters)
    /// with the heights and speeds scaled to these legs' length.
    #[must_use]
    pub fn settings(&self) -> FootSettings<f32> {
        /// A human's leg, hip to ankle, in meters: the length the core's defaults are for.
        const HUMAN_LEG: f32 = 0.85;
        let s = FootSettings::new();
        let scale = if self.length > 0.0 { self.length / HUMAN_LEG } else { 1.0 };
        FootSettings { lock_speed: s.lock_speed * scale, contact_height: s.contact_height * scale, ..s }
    }
}

/// The stage's set-up and what it keeps between frames.
pub(super) struct Feet {
    pub(super) pelvis: usize,
    pub(super) legs: Vec<FootLeg<f32>>,
    pub(super) settings: FootSettings<f32>,
    pub(super) state: FootState<f32>,
    pub(super) leg_states: Vec<LegState<f32>>,
    pub(super) ground: Box<dyn Ground<f32>>,
    /// Seconds advanced since the last run.
    pub(super) dt: f32,
}

impl Feet {
    /// The job on `skeleton` with the stage's state, the local pose `pose`, its model matrices
    /// `model` and `world`, over `dt` seconds.
    fn job<'a>(
        &'a mut self,
        skeleton: SkeletonView<'a, f32>,
        pose: &'a mut [SoaTransform<f32>],
        model: &'a mut [Mat4<f32>],
        world: Mat4<f32>,
        dt: f32,
    ) -> FootPlacementJob<'a, f32> {
        FootPlacementJob {
            skeleton,
            pelvis: self.pelvis,
            legs: &self.legs,
            settings: self.settings,
            state: &mut self.state,
            leg_states: &mut self.leg_states,
            world,
            dt,
            pose,
            model,
            ground: &mut *self.ground,
        }
    }

    /// Checks the set-up against `skeleton`, the local pose `pose` and its model matrices
    /// (neither is written).
    pub(super) fn validate(
        &mut self,
        skeleton: SkeletonView<'_, f32>,
        pose: &mut [SoaTransform<f32>],
        model: &mut [Mat4<f32>],
        world: Mat4<f32>,
    ) -> Result<(), JobError> {
        self.job(skeleton, pose, model, world, 0.0).validate()
    }

    /// Whether the stage has something to do: on, or off and still ramping out, or settling.
    /// Off and ramped out it is skipped: it checks no pose and counts no time, so that
    /// switching it on ramps from that moment.
    pub(super) fn active(&self) -> bool {
        let s = &self.state;
        s.enabled() || s.weight() > 0.0 || s.settling()
    }

    /// Places the feet of the local pose `pose` and its model matrices `model`, editing both,
    /// over the seconds advanced since the last run.
    // Out of line: one call site, kept apart from the update's other stages.
    #[inline(never)]
    pub(super) fn run(
        &mut self,
        skeleton: SkeletonView<'_, f32>,
        pose: &mut [SoaTransform<f32>],
        model: &mut [Mat4<f32>],
        world: Mat4<f32>,
    ) -> Result<(), JobError> {
        let dt = core::mem::take(&mut self.dt);
        self.job(skeleton, pose, model, world, dt).run()
    }
}

#[cfg(test)]
mod tests;
