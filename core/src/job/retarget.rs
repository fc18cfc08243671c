//! Retargeting: a pose of one skeleton (the source) turned into a local pose of another (the
//! target), whose joints have other names, proportions and rest orientations.
//!
//! The method works in world space (the model space of skeletons imported with every node of
//! their scene, so an armature's scale or rotation is part of it), from both rest poses:
//!
//! - a mapped target joint `k` following source joint `j` gets the world rotation
//!   `Rs[j] · Rs_rest[j]⁻¹ · Rt_rest[k]`: the source joint's rotation away from its rest, in
//!   world space, applied to the target joint's rest. Its local rotation is that taken relative
//!   to its parent's world rotation in the retargeted pose. An unmapped joint keeps its rest local
//!   rotation;
//! - every joint keeps its rest local translation and scale, except the retarget root (the
//!   hips), whose world position is `Pt_rest + (Ps − Ps_rest) · scale`: the source hips'
//!   displacement from their rest, in world space, scaled (by the ratio of the hips' rest
//!   heights, usually), optionally without its horizontal part, then expressed in the target
//!   hips' parent frame (the nodes above the hips stay at rest).
//!
//! [`RetargetJoint::offsets`] computes the per-joint constants `Rs_rest[j]⁻¹ · Rt_rest[k]` once,
//! from both skeletons' rest world rotations ([`world_rotations`]); they and the [`RetargetRoot`]
//! can be baked. [`RetargetJob`] then runs every frame over caller-owned buffers, in `f32` or
//! `Q16`, with no allocation: the source pose comes in as model-space matrices (from
//! [`LocalToModelJob`](crate::job::LocalToModelJob) on the source skeleton), the target's local
//! pose comes out, ready to blend with the target's own clips like any other layer.

use crate::math::{Mat4, Quat, SoaTransform, Vec3};
use crate::real::Real;
use crate::skeleton::SkeletonView;

use super::JobError;

/// [`RetargetJoint::source`] of a target joint that follows no source joint.
pub const NO_SOURCE: u16 = u16::MAX;

/// What one target joint needs: the source joint it follows and the constant rotation between
/// the two rests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetargetJoint<R> {
    /// The source joint whose motion this joint follows, or [`NO_SOURCE`] (the joint keeps its
    /// rest local rotation).
    pub source: u16,
    /// `Rs_rest[source]⁻¹ · Rt_rest[joint]`: the source joint's world rotation times this gives
    /// the target joint's (identity when unmapped).
    pub offset: Quat<R>,
}

impl<R: Real> RetargetJoint<R> {
    /// An unmapped joint.
    pub const UNMAPPED: RetargetJoint<R> = RetargetJoint { source: NO_SOURCE, offset: Quat::IDENTITY };

    /// Fills `out` (one entry per target joint) from the map (`map[k]`: the source joint target
    /// joint `k` follows, or [`NO_SOURCE`]) and both rest poses' world rotations
    /// ([`world_rotations`] of each skeleton's rest model matrices).
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when `out` is shorter than `target_rest`,
    /// [`JobError::InputTooSmall`] when `map` is, and [`JobError::JointIndexOutOfRange`] for a
    /// map entry past `source_rest`.
    pub fn offsets(
        map: &[u16],
        source_rest: &[Quat<R>],
        target_rest: &[Quat<R>],
        out: &mut [RetargetJoint<R>],
    ) -> Result<(), JobError> {
        let n = target_rest.len();
        if out.len() < n {
            return Err(JobError::OutputTooSmall);
        }
        if map.len() < n {
            return Err(JobError::InputTooSmall);
        }
        for ((o, &j), &rt) in out.iter_mut().zip(map).zip(target_rest) {
            *o = if j == NO_SOURCE {
                Self::UNMAPPED
            } else {
                let rs = *source_rest.get(j as usize).ok_or(JobError::JointIndexOutOfRange)?;
                RetargetJoint { source: j, offset: (rs.conjugate() * rt).normalize() }
            };
        }
        Ok(())
    }
}

/// How the retarget root (the hips) moves: the source hips' displacement from rest, scaled,
/// added to the target hips' rest position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetargetRoot<R> {
    /// The target's hips joint.
    pub target: u16,
    /// The source's hips joint.
    pub source: u16,
    /// The source hips' world position at rest.
    pub source_rest: Vec3<R>,
    /// The target hips' world position at rest.
    pub target_rest: Vec3<R>,
    /// The factor on the displacement: the ratio of the hips' rest heights (target over
    /// source), or the caller's own.
    pub scale: R,
    /// Keep only the vertical part of the displacement (the character runs in place).
    pub in_place: bool,
    /// The inverse of the target hips' parent's world matrix at rest (identity for a hips
    /// joint without parent): the displaced world position becomes a local translation with it.
    pub parent_inverse: Mat4<R>,
}

impl<R: Real> RetargetRoot<R> {
    /// The root of target joint `target` following source joint `source`, from both rest
    /// poses' model matrices, with `scale` (`None`: the ratio of the hips' rest heights, their
    /// world Y above the origin).
    ///
    /// # Errors
    ///
    /// [`JobError::JointIndexOutOfRange`] for a joint past its skeleton,
    /// [`JobError::InvalidTransform`] for a hips height ≤ 0 (with `scale` `None`), a
    /// non-finite scale, or a parent matrix that cannot be inverted.
    pub fn new(
        target: usize,
        source: usize,
        target_skeleton: SkeletonView<'_, R>,
        target_rest_model: &[Mat4<R>],
        source_rest_model: &[Mat4<R>],
        scale: Option<R>,
    ) -> Result<Self, JobError> {
        let pt = target_rest_model.get(target).ok_or(JobError::JointIndexOutOfRange)?.translation();
        let ps = source_rest_model.get(source).ok_or(JobError::JointIndexOutOfRange)?.translation();
        let scale = match scale {
            Some(s) => s,
            None if pt.y > R::ZERO && ps.y > R::ZERO => pt.y / ps.y,
            None => return Err(JobError::InvalidTransform),
        };
        if !scale.is_finite() {
            return Err(JobError::InvalidTransform);
        }
        let parent_inverse = match target_skeleton.parent(target) {
            Some(p) => target_rest_model
                .get(p)
                .ok_or(JobError::JointIndexOutOfRange)?
                .inverse()
                .ok_or(JobError::InvalidTransform)?,
            None => Mat4::IDENTITY,
        };
        let joint = |i: usize| u16::try_from(i).map_err(|_| JobError::JointIndexOutOfRange);
        Ok(RetargetRoot {
            target: joint(target)?,
            source: joint(source)?,
            source_rest: ps,
            target_rest: pt,
            scale,
            in_place: false,
            parent_inverse,
        })
    }
}

/// The rotation of each model matrix into `out`: its first column's direction, the second's
/// part orthogonal to it, and their cross product (scale, such as an armature's 0.01, is left
/// out; a matrix whose scale is not along its axes, which skeletons rarely give, is not
/// rotation × scale, and this is the rotation closest to its first two axes). [`RetargetJob`]
/// takes each frame's source rotations the same way.
///
/// # Errors
///
/// [`JobError::OutputTooSmall`] when `out` is shorter than `model`.
pub fn world_rotations<R: Real>(model: &[Mat4<R>], out: &mut [Quat<R>]) -> Result<(), JobError> {
    if out.len() < model.len() {
        return Err(JobError::OutputTooSmall);
    }
    for (m, q) in model.iter().zip(out.iter_mut()) {
        *q = rotation_of(m);
    }
    Ok(())
}

/// The rotation of a model matrix's upper 3×3 (Gram-Schmidt on its first two columns: a few
/// multiplies and two square roots, where a polar decomposition iterates).
fn rotation_of<R: Real>(m: &Mat4<R>) -> Quat<R> {
    let col = |c: usize| Vec3::new(m.cols[c][0], m.cols[c][1], m.cols[c][2]);
    let x = col(0).normalize_or_zero();
    let y = col(1);
    let y = (y - x * x.dot(y)).normalize_or_zero();
    Quat::from_mat3_cols([x, y, x.cross(y)])
}

/// Turns a source pose into the target's local pose (see the [module](self) for the method).
#[derive(Debug)]
pub struct RetargetJob<'a, R: Real> {
    /// The target skeleton: its parents, and its rest pose for what is not retargeted.
    pub target: SkeletonView<'a, R>,
    /// One entry per target joint ([`RetargetJoint::offsets`]).
    pub joints: &'a [RetargetJoint<R>],
    /// The hips' motion; `None` keeps every translation at rest.
    pub root: Option<RetargetRoot<R>>,
    /// The source pose as model-space (world) matrices, one per source joint.
    pub source: &'a [Mat4<R>],
    /// Work space: the target joints' world rotations, at least one per target joint.
    pub world: &'a mut [Quat<R>],
    /// The target's local pose, at least `target.num_soa_joints()` elements.
    pub output: &'a mut [SoaTransform<R>],
}

impl<R: Real> RetargetJob<'_, R> {
    /// Runs the job.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `joints` is shorter than the target skeleton,
    /// [`JobError::OutputTooSmall`] when `world` or `output` is, and
    /// [`JobError::JointIndexOutOfRange`] for a source joint (of a joint or the root) past
    /// `source`, or a root past the target. Nothing is written then.
    pub fn run(&mut self) -> Result<(), JobError> {
        let n = self.target.num_joints();
        if self.joints.len() < n {
            return Err(JobError::InputTooSmall);
        }
        if self.world.len() < n || self.output.len() < self.target.num_soa_joints() {
            return Err(JobError::OutputTooSmall);
        }
        let past = |j: u16| j != NO_SOURCE && j as usize >= self.source.len();
        if self.joints[..n].iter().any(|j| past(j.source))
            || self.root.is_some_and(|r| r.source == NO_SOURCE || past(r.source) || r.target as usize >= n)
        {
            return Err(JobError::JointIndexOutOfRange);
        }
        let rest = self.target.rest_pose();
        for k in 0..n {
            let mut local = self.target.rest_transform(k).unwrap_or(crate::math::Transform::IDENTITY);
            let parent = self.target.parent(k).and_then(|p| self.world.get(p)).copied().unwrap_or(Quat::IDENTITY);
            let joint = self.joints[k];
            let world = match self.source.get(joint.source as usize) {
                // Products of unit quaternions: only the output is normalized again.
                Some(m) if joint.source != NO_SOURCE => {
                    let world = rotation_of(m) * joint.offset;
                    local.rotation = (parent.conjugate() * world).normalize();
                    world
                }
                _ => parent * local.rotation,
            };
            self.world[k] = world;
            if let Some(root) = self.root.filter(|r| r.target as usize == k) {
                let ps = self.source.get(root.source as usize).map_or(root.source_rest, Mat4::translation);
                let mut d = (ps - root.source_rest) * root.scale;
                if root.in_place {
                    d = Vec3::new(R::ZERO, d.y, R::ZERO);
                }
                local.translation = root.parent_inverse.transform_point3(root.target_rest + d);
            }
            if let Some(out) = self.output.get_mut(k / 4) {
                out.set_lane(k % 4, &local);
            }
        }
        // Lanes past the last joint keep the rest pose's padding.
        if let (Some(out), Some(r), true) = (self.output.get_mut(n / 4), rest.get(n / 4), n % 4 != 0) {
            for lane in n % 4..4 {
                out.set_lane(lane, &r.lane(lane));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
