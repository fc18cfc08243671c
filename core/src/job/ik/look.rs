//! Look-at over a chain: an aim spread over several joints (spine, neck, head) by weights, each
//! joint turning at most its maximum angle.
//!
//! The rule is [`IkLookChainJob`]'s.

use super::chain::validate_chain;
use super::{rotation_of, to_local, weighted, IkAimJob};
use crate::job::JobError;
use crate::math::{ops, Mat4, Quat, Vec3};
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// Most walks down the chain [`IkLookChainJob`] makes.
pub const LOOK_WALKS: usize = 4;

/// What a look-at chain reached (for the full-weight solution, whatever the job's weight).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LookReport<R> {
    /// The angle of the aim left after the last walk, radians.
    pub remaining: R,
    /// The aim is reached: `remaining` is at most 1/10 000 rad and the target is not too
    /// close for the offset ray (as [`IkAimJob`]'s `reached`).
    pub reached: bool,
}

/// Look-at over a chain (spine, neck, head): [`IkAimJob`]'s aim for the chain's last joint,
/// spread over the chain by per-joint weights, each joint turning at most its maximum angle;
/// `core/docs/ik.md` states the same rule.
///
/// The aim is [`IkAimJob`]'s rule for the chain's last joint: the ray from `offset` along
/// `forward` (both in that joint's space) through the target, `up` kept towards the pole.
/// The job walks the chain `j0 … jm` from `j0`. At joint `jk` it computes that aim from the
/// last joint's current frame (the corrections so far applied), as a model-space rotation of
/// angle `θ` about an axis `u`, and turns `jk` about `u` (at its own position) by
///
/// `ak = min(roomk, max(fk · θ, θ − Σ_{l>k} rooml))`, with `fk = wk / Σ_{l≥k} wl`
/// (1 when that sum is 0)
///
/// where `rooml` is joint `l`'s maximum less the angle it has turned so far. In the first walk
/// each joint takes its weight's share of the whole aim (exactly `ak = wk · θ` when the joints
/// share a position and no maximum binds); what a joint cannot take past its maximum stays in
/// the aim the next joints see, and a joint takes more than its share when the joints after it
/// could not take the rest. The last joint (`fm = 1`) takes what is left, as far as its room
/// allows. Turning a joint moves the joints after it, so the aim the last joint sees is not
/// quite the one the first saw: while an aim is left after a walk, another walk spends the
/// room the joints have left on it, by the same rule, at most [`LOOK_WALKS`] walks in all. A
/// joint's turns make one correction, whose angle is at most its maximum.
///
/// # Examples
///
/// A neck and a head, both looking along +Z, turn to a target on their +X side, the neck a
/// third of the way, the head the rest:
///
/// ```
/// use sinew::job::ik::IkLookChainJob;
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let up = Transform::new(Vec3::new(0.0, 0.1, 0.0), Quat::IDENTITY, Vec3::ONE);
/// let body = Skeleton::<f32, 1>::new(&[NO_PARENT, 0], &[up, up], &["neck", "head"])?;
/// let mut model = [Mat4::IDENTITY; 2];
/// LocalToModelJob::new(body.view(), body.rest_pose(), &mut model).run()?;
///
/// let mut corrections = [Quat::IDENTITY; 2];
/// let report = IkLookChainJob {
///     skeleton: body.view(),
///     models: &model,
///     chain: &[0, 1],
///     target: Vec3::new(3.0, 0.2, 0.0),
///     forward: Vec3::Z,
///     up: Vec3::Y,
///     offset: Vec3::ZERO,
///     pole_vector: Vec3::Y,
///     twist_angle: 0.0,
///     joint_weights: &[1.0 / 3.0, 2.0 / 3.0],
///     max_angles: &[1.0, 1.5],
///     weight: 1.0,
///     corrections: &mut corrections,
/// }
/// .run()?;
/// assert!(report.reached);
/// // The neck turns about a third of the quarter turn.
/// let neck = 2.0 * corrections[0].w.acos();
/// assert!((neck - core::f32::consts::FRAC_PI_2 / 3.0).abs() < 0.05);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IkLookChainJob<'a, R: Real> {
    /// The skeleton whose parents make the chain.
    pub skeleton: SkeletonView<'a, R>,
    /// Model matrices of the pose, indexed by joint.
    pub models: &'a [Mat4<R>],
    /// The chain's joints `j0 … jm`, each the parent of the next; the last one aims. At least
    /// 1, at most [`MAX_CHAIN_JOINTS`](super::MAX_CHAIN_JOINTS).
    pub chain: &'a [u16],
    /// Target position, model space.
    pub target: Vec3<R>,
    /// The aiming direction in the last joint's space. Must be non-zero.
    pub forward: Vec3<R>,
    /// The last joint's up direction in its own space, kept towards `pole_vector`. Must be
    /// non-zero and not parallel to `forward`.
    pub up: Vec3<R>,
    /// Origin of the aiming ray in the last joint's space.
    pub offset: Vec3<R>,
    /// Where `up` should point, model space.
    pub pole_vector: Vec3<R>,
    /// Extra rotation about the aim axis, radians.
    pub twist_angle: R,
    /// Each joint's share of the aim: finite, ≥ 0, summing to 1 (within 1/1000); one per
    /// chain joint.
    pub joint_weights: &'a [R],
    /// Each joint's largest turn, radians in `[0, π]`; one per chain joint.
    pub max_angles: &'a [R],
    /// Blend of the corrections with the input pose, in `[0, 1]`.
    pub weight: R,
    /// Output: the local corrections of the chain's joints, one per joint.
    pub corrections: &'a mut [Quat<R>],
}

impl<R: Real> IkLookChainJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// - [`JobError::InvalidRange`]: no joint, more than
    ///   [`MAX_CHAIN_JOINTS`](super::MAX_CHAIN_JOINTS), a joint that is not the parent of the
    ///   next, or a maximum angle outside `[0, π]` or not finite;
    /// - [`JobError::JointIndexOutOfRange`]: a joint outside the skeleton or `models`;
    /// - [`JobError::LengthMismatch`]: `joint_weights` or `max_angles` not one per joint;
    /// - [`JobError::OutputTooSmall`]: `corrections` shorter than the chain;
    /// - [`JobError::InvalidWeight`]: a joint weight negative or not finite, joint weights not
    ///   summing to 1 within 1/1000, or `weight` outside `[0, 1]` or not finite;
    /// - [`JobError::InvalidAxis`]: `forward` or `up` zero, or parallel;
    /// - [`JobError::InvalidTransform`]: a non-finite vector or angle, or a chain joint's (or
    ///   `j0`'s parent's) matrix that is not finite or has a zero column, or a last joint's
    ///   matrix that is singular.
    pub fn validate(&self) -> Result<(), JobError> {
        validate_chain(&self.skeleton, self.models, self.chain, 1)?;
        let len = self.chain.len();
        if self.joint_weights.len() != len || self.max_angles.len() != len {
            return Err(JobError::LengthMismatch);
        }
        if self.corrections.len() < len {
            return Err(JobError::OutputTooSmall);
        }
        if self.max_angles.iter().any(|&a| !a.is_finite() || a < R::ZERO || a > R::PI) {
            return Err(JobError::InvalidRange);
        }
        let valid = |w: R| w.is_finite() && w >= R::ZERO;
        let sum = self.joint_weights.iter().fold(R::ZERO, |s, &w| s + w);
        if !self.joint_weights.iter().all(|&w| valid(w))
            || (sum - R::ONE).abs() > R::ratio(1, 1000)
            || !valid(self.weight)
            || self.weight > R::ONE
        {
            return Err(JobError::InvalidWeight);
        }
        let (mut c, mut reached) = (Quat::IDENTITY, false);
        self.aim_job(&self.last_model(), self.target, &mut c, &mut reached).validate()
    }

    fn last_model(&self) -> Mat4<R> {
        self.chain.last().and_then(|&j| self.models.get(usize::from(j))).copied().unwrap_or(Mat4::IDENTITY)
    }

    /// [`IkAimJob`] with this job's aim at full weight on `joint`, towards `target`.
    fn aim_job<'j>(
        &self,
        joint: &'j Mat4<R>,
        target: Vec3<R>,
        correction: &'j mut Quat<R>,
        reached: &'j mut bool,
    ) -> IkAimJob<'j, R> {
        IkAimJob {
            target,
            forward: self.forward,
            up: self.up,
            offset: self.offset,
            pole_vector: self.pole_vector,
            twist_angle: self.twist_angle,
            weight: R::ONE,
            joint,
            joint_correction: correction,
            reached,
        }
    }

    /// [`IkAimJob`] at full weight on `joint`: its correction, and its `reached`.
    fn aim(&self, joint: &Mat4<R>, target: Vec3<R>, correction: &mut Quat<R>) -> Result<bool, JobError> {
        let mut reached = false;
        self.aim_job(joint, target, correction, &mut reached).run()?;
        Ok(reached)
    }

    /// Validates, then solves and writes the corrections.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<LookReport<R>, JobError> {
        self.validate()?;
        let len = self.chain.len();
        // The corrections, unweighted while the walks run, out of `self` so that `aim` can
        // borrow it.
        let all = core::mem::take(&mut self.corrections);
        let out = all.get_mut(..len).unwrap_or_default();
        out.fill(Quat::IDENTITY);
        let (chain, models) = (self.chain, self.models);
        let model = |k: usize| chain.get(k).and_then(|&j| models.get(usize::from(j)));
        let position = |k: usize| model(k).map_or(Vec3::ZERO, Mat4::translation);
        let rotation = |k: usize| model(k).and_then(rotation_of).unwrap_or(Quat::IDENTITY);
        let last = self.last_model();
        let sum = |s: &[R]| s.iter().fold(R::ZERO, |a, &b| a + b);
        let mut report = LookReport { remaining: R::ZERO, reached: false };
        for _ in 0..LOOK_WALKS {
            if report.reached {
                break;
            }
            // The model-space turn of the joint before `jk` and the place of `jk`, as corrected.
            let (mut parent_turn, mut at) = (Quat::IDENTITY, position(0));
            for k in 0..len {
                // The last joint's turn and place, as corrected.
                let (mut turn, mut head) = (parent_turn, at);
                for l in k..len {
                    let w = rotation(l);
                    turn = (turn * w * out.get(l).copied().unwrap_or(Quat::IDENTITY) * w.conjugate()).normalize();
                    if l + 1 < len {
                        head += turn.rotate(position(l + 1) - position(l));
                    }
                }
                // Its current matrix: the linear part turned, at its current place.
                let mut m = last;
                for c in m.cols.iter_mut().take(3) {
                    let v = turn.rotate(Vec3::new(c[0], c[1], c[2]));
                    *c = [v.x, v.y, v.z, c[3]];
                }
                m.cols[3] = [head.x, head.y, head.z, R::ONE];
                let mut c = Quat::IDENTITY;
                let aimed = self.aim(&m, self.target, &mut c).unwrap_or(false);
                // The aim in model space, as an angle about an axis.
                let frame = (turn * rotation(len - 1)).normalize();
                let aim = (frame * c * frame.conjugate()).normalize();
                let (axis, theta) = axis_angle(aim);
                // What each joint can still turn.
                let room = |l: usize| match (self.max_angles.get(l), out.get(l)) {
                    (Some(&max), Some(&q)) => (max - axis_angle(q).1).max(R::ZERO),
                    _ => R::ZERO,
                };
                let room_later = (k + 1..len).fold(R::ZERO, |s, l| s + room(l));
                let w_here = sum(self.joint_weights.get(k..).unwrap_or_default());
                let share = match self.joint_weights.get(k) {
                    Some(&w) if w_here > R::ZERO => w / w_here,
                    _ => R::ONE,
                };
                let angle = (share * theta).max(theta - room_later).min(room(k)).max(R::ZERO);
                let step = axis.map_or(Quat::IDENTITY, |a| Quat::from_axis_angle(a, angle));
                // c_k ← W_k⁻¹ · (D_k−1⁻¹ · step · D_k−1) · W_k · c_k.
                let w = rotation(k);
                if let Some(ck) = out.get_mut(k) {
                    let local = to_local((parent_turn.conjugate() * step * parent_turn).normalize(), w);
                    *ck = (local * *ck).normalize();
                }
                let turn_k =
                    (parent_turn * w * out.get(k).copied().unwrap_or(Quat::IDENTITY) * w.conjugate()).normalize();
                if k + 1 < len {
                    at += turn_k.rotate(position(k + 1) - position(k));
                } else {
                    report.remaining = (theta - angle).max(R::ZERO);
                    report.reached = aimed && report.remaining <= R::ratio(1, 10_000);
                }
                parent_turn = turn_k;
            }
        }
        for c in out.iter_mut() {
            *c = weighted(*c, self.weight);
        }
        self.corrections = all;
        Ok(report)
    }
}

/// The unit axis (`None` for the identity) and the angle, in `[0, π]`, of a unit quaternion.
fn axis_angle<R: Real>(q: Quat<R>) -> (Option<Vec3<R>>, R) {
    let q = if q.w < R::ZERO { -q } else { q };
    let v = q.xyz();
    (v.try_normalize(), R::TWO * ops::atan2(v.length(), q.w))
}

#[cfg(test)]
mod tests;
