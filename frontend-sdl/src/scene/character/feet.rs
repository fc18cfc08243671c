//! Foot locking: a foot that touches down while walk or run drives the legs stays where it
//! landed ([`FootLock`]), held by two-bone IK ([`plant_foot`]) until it lifts, then eased back
//! to the animation.

use sinew::job::ik::{apply_correction, IkTwoBoneJob};
use sinew::job::{JobError, LocalToModelJob};
use sinew::math::{Mat4, Quat, SoaTransform, Vec3};
use sinew_offline::builtin::{smoothstep, ANKLE_HEIGHT, RUN_GAIT, SHIN_LENGTH, THIGH_LENGTH, WALK_GAIT};
use sinew_offline::model::Model;

use super::clip_info;
use super::schedule::{CharacterMachine, RUN, WALK};
use crate::scene::error::SceneError;

/// Seconds over which a lifted foot's IK target returns from where it was planted to the
/// animation.
const FOOT_RELEASE: f32 = 0.15;
/// Height above its standing height within which an ankle counts as touching the ground, in
/// meters.
const FOOT_CONTACT: f32 = 0.02;
/// Longest hip-to-lock distance a locked foot keeps, as a share of the leg's length.
const FOOT_LOCK_REACH: f32 = 0.995;

/// Foot locking: while a foot is planted, two-bone IK holds its ankle where it touched down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum FootLock {
    /// The foot follows the animation.
    Free,
    /// The foot is planted: its ankle stays at this world position.
    Locked(Vec3<f32>),
    /// The foot lifted off: its target returns to the animation, the world offset between the
    /// lock and the animated ankle at lift-off fading out over [`FOOT_RELEASE`].
    Releasing { offset: Vec3<f32>, elapsed: f32 },
}

impl FootLock {
    /// The ankle's world target given the animated ankle, `None` when free.
    pub(super) fn target(&self, animated: Vec3<f32>) -> Option<Vec3<f32>> {
        match *self {
            FootLock::Free => None,
            FootLock::Locked(p) => Some(p),
            FootLock::Releasing { offset, elapsed } => {
                Some(animated + offset * (1.0 - smoothstep(elapsed / FOOT_RELEASE)))
            }
        }
    }

    /// The next state after `dt` seconds, with the foot `planted` or not now and its hip joint
    /// at `hip` (world space). A free foot locks only once its animated ankle is within
    /// [`FOOT_CONTACT`] of the ground (so a blend that shortens the swing does not pin a raised
    /// foot); a locked one is released when it lifts, or when the lock gets out of the leg's
    /// reach (the body moved on further than the animation's stride, after a crossfade).
    pub(super) fn next(self, planted: bool, animated: Vec3<f32>, hip: Vec3<f32>, dt: f32) -> FootLock {
        let touching = animated.y <= ANKLE_HEIGHT + FOOT_CONTACT;
        let reach = FOOT_LOCK_REACH * (THIGH_LENGTH + SHIN_LENGTH);
        match self {
            FootLock::Locked(p) if planted && (p - hip).length() <= reach => FootLock::Locked(p),
            FootLock::Locked(p) => FootLock::Releasing { offset: p - animated, elapsed: 0.0 },
            FootLock::Releasing { offset, elapsed } if elapsed + dt < FOOT_RELEASE => {
                FootLock::Releasing { offset, elapsed: elapsed + dt }
            }
            FootLock::Releasing { .. } => FootLock::Free,
            // Touchdown: lock where the foot is.
            FootLock::Free if planted && touching => FootLock::Locked(animated),
            FootLock::Free => FootLock::Free,
        }
    }
}

/// Whether the foot on `side` (+1 left, −1 right) is on the ground in the graph's blend: only
/// while the locomotion blend space alone drives the legs (no transition: neither idle
/// blended in nor an offset from it decaying), by the phase of the heavier of walk and run
/// (they are phase-synced) and the weighted duty of their gaits.
pub(super) fn foot_planted(m: &CharacterMachine, side: f32) -> bool {
    let Some(m) = m.machine(0) else { return false };
    if m.transition().is_some() {
        return false;
    }
    let (mut duty, mut total, mut lead) = (0.0, 0.0, (0.0f32, 0.0f32));
    for (clip, gait) in [(WALK, WALK_GAIT), (RUN, RUN_GAIT)] {
        let info = clip_info(m, clip);
        let w = info.weight;
        if w > 0.0 {
            duty += w * gait.duty;
            total += w;
            if w > lead.0 {
                lead = (w, info.phase);
            }
        }
    }
    total > 0.0 && (lead.1 + if side > 0.0 { 0.0 } else { 0.5 }).rem_euclid(1.0) < duty / total
}

/// The rotation of a rigid model matrix.
fn rotation_of(m: &Mat4<f32>) -> Quat<f32> {
    let col = |i: usize| Vec3::new(m.cols[i][0], m.cols[i][1], m.cols[i][2]).normalize_or_zero();
    Quat::from_mat3_cols([col(0), col(1), col(2)]).normalize()
}

/// Puts the ankle of the leg starting at `thigh` (thigh, shin, foot) on `target` (model space)
/// with [`IkTwoBoneJob`], the knee kept in its animated plane, and keeps the foot's animated
/// model-space orientation (flat on the ground while planted). Updates `pose` and `joints`.
pub(super) fn plant_foot(
    model: &Model,
    pose: &mut [SoaTransform<f32>],
    joints: &mut [Mat4<f32>],
    thigh: usize,
    target: Vec3<f32>,
) -> Result<(), SceneError> {
    let (shin, foot) = (thigh + 1, thigh + 2);
    let get = |joints: &[Mat4<f32>], j: usize| joints.get(j).copied().ok_or(SceneError::Job(JobError::OutputTooSmall));
    let (hip_m, knee_m, ankle_m) = (get(joints, thigh)?, get(joints, shin)?, get(joints, foot)?);
    // The knee's direction away from the hip-ankle line, else the character's forward.
    let (hip, knee, ankle) = (hip_m.translation(), knee_m.translation(), ankle_m.translation());
    let axis = (ankle - hip).normalize_or_zero();
    let pole = (knee - hip - axis * (knee - hip).dot(axis)).try_normalize().unwrap_or(Vec3::Z);
    let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
    IkTwoBoneJob {
        target,
        pole_vector: pole,
        mid_axis: Vec3::X,
        twist_angle: 0.0,
        soften: 1.0,
        weight: 1.0,
        start_joint: &hip_m,
        mid_joint: &knee_m,
        end_joint: &ankle_m,
        start_correction: &mut start,
        mid_correction: &mut mid,
        reached: &mut reached,
    }
    .run()?;
    apply_correction(pose, thigh, start)?;
    apply_correction(pose, shin, mid)?;
    let l2m = |pose: &[SoaTransform<f32>], joints: &mut [Mat4<f32>], from: usize| {
        LocalToModelJob {
            skeleton: model.skeleton(),
            root: None,
            input: pose,
            output: joints,
            from: Some(from),
            to: None,
        }
        .run()
    };
    l2m(pose, joints, thigh)?;
    // The foot's local rotation that gives back its animated model rotation under the new shin.
    let local = (rotation_of(&get(joints, shin)?).conjugate() * rotation_of(&ankle_m)).normalize();
    let soa = pose.get_mut(foot / 4).ok_or(SceneError::Job(JobError::JointIndexOutOfRange))?;
    soa.rotation.set_lane(foot % 4, local);
    l2m(pose, joints, foot)?;
    Ok(())
}
