//! Spring bones (VRMC_springBone-1.0): hair, skirts and accessories that swing after the
//! animated pose, pushed out of (or kept inside) colliders on the body.
//!
//! The stage follows three-vrm 3.5.5's `VRMSpringBoneManager` and `VRMSpringBoneJoint` step by
//! step. It runs after the pose's model matrices ([`LocalToModelJob`](crate::job::LocalToModelJob)
//! with no root: model space); `world` places model space in the world, where the tails move.
//! Each spring joint keeps a tail point from one step to the next ([`SpringTail`], owned by the
//! caller) and turns its bone towards it.
//!
//! # A step
//!
//! [`SpringBoneJob::step`] takes the spring joints in their run order. For joint `j`, with
//! `W_x = world × model_x` the world matrix of joint `x` *as the stage holds it at that moment*
//! (below), `pos(M)` a matrix's translation and `dir(v) = v / |v|` (zero for a zero `v`):
//!
//! 1. `W_j = W_parent × local_j` (`local_j` the animated local transform; `W_parent = world`
//!    for a root).
//! 2. The bone length `L = |pos(W_j) − pos(W_child)|`, or `|pos(W_j) − W_j × tail|` for a
//!    virtual tail.
//! 3. The inertia: `next = C × (current + (current − prev)(1 − drag_force)) + axis ×
//!    stiffness·dt + gravity_dir × gravity_power·dt`, with `C` the center's world matrix
//!    (identity without a center) and `axis = dir(W_parent₃ × dir(rest_j₃ × dir(tail)))`
//!    (`rest_j` the joint's rest local matrix, `M₃` a matrix's upper 3×3);
//!    then `next = pos(W_j) + dir(next − pos(W_j)) × L`.
//! 4. Collisions, each of the joint's colliders in order: the collider's matrix is its joint's
//!    world matrix with the translation moved to `W_c × offset`; when the shape's distance
//!    `d` ([`ColliderShape`]) is negative, `next += n × (−d)` and `next` goes back onto the
//!    sphere of radius `L` about `pos(W_j)`. Each such test counts as one contact.
//! 5. `prev = current`, `current = C⁻¹ × next`.
//! 6. The rotation: `local_j.rotation = rest_j.rotation × arc(dir(tail), dir(A⁻¹ × next))`
//!    with `A = W_parent × rest_j` and `arc(a, b)` three.js's `setFromUnitVectors`, then
//!    `W_j = W_parent × local_j`.
//!
//! In `f32` the stage leaves out a normalization where a later one gives the same direction
//! (the inner `dir`s of `axis`, `dir` before `arc`, and the product's as three-vrm's
//! `premultiply` leaves it): the same quantities up to rounding, with fewer dependent roots and
//! divisions per joint. Fixed point keeps each, for its precision.
//!
//! **Where a step starts.** three-vrm's bones keep the rotation the springs gave them from one
//! update to the next. So does the stage: each joint's last rotation is kept in its
//! [`SpringTail`], and a step first gives the spring joints those rotations (the ones `locals`
//! holds for them, a clip's or the rest pose's, are not used) and recomputes the matrices
//! below them when they changed. On entry `models` must be up to date with `locals` otherwise.
//!
//! **Which matrices a joint reads.** As in three-vrm, a spring joint's matrix is recomputed at
//! its own turn (step 1) and after its rotation (step 6); the joints below a moved spring joint
//! that are not spring joints themselves are brought up to date with it; a spring joint further
//! down keeps the matrix it had on entry until its own turn. So a chain's child that is itself a
//! spring joint gives step 2 its position from the pose on entry, exactly as three-vrm's
//! `matrixWorld` does. A collider on a spring joint, or under one, reads the joint's matrix on
//! entry until that joint has moved. On return every model matrix is up to date: `models`
//! equals a [`LocalToModelJob`](crate::job::LocalToModelJob) run on the final `locals`.
//!
//! A joint whose step meets a zero length (`L = 0`, `next` on the joint, a singular matrix
//! where one is inverted) is left as it is: rotation, matrix and tail unchanged
//! ([`SpringReport::skipped`]).
//!
//! # Reset
//!
//! [`SpringBoneJob::reset`] (three-vrm's `reset()`, for the first frame and after a teleport or
//! a seek) gives each spring joint, in run order, its rest rotation (translation and scale stay
//! as animated; kept in [`SpringTail::rotation`] too), recomputes its matrix from its parent's,
//! and puts both tail points at `C⁻¹ × W_j × tail`.
//!
//! `core/docs/spring-bones.md` describes the data, the steps and the measured accuracy.

use crate::job::JobError;
use crate::math::{Mat4, Quat, SoaTransform, Vec3};
use crate::real::Real;
use crate::skeleton::SkeletonView;

mod affine;
mod collide;
mod pose;

use affine::{point, product, vector};
use collide::{
    arc, arc_toward, collide, dir, inverse_point, length, place, scale_to, unit, Contact, InverseDirection, Placed,
};
use pose::Pose;
pub use pose::SpringPlan;

/// The `child` and `center` of a [`SpringJoint`] that has none: a virtual tail, world space.
pub const NO_JOINT: u16 = u16::MAX;

/// One spring joint: a bone that swings, with its tail and its settings (one entry of a
/// VRMC_springBone spring's `joints`, all but the last).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringJoint<R> {
    /// The bone that turns (a skeleton joint).
    pub joint: u16,
    /// The joint at the bone's tail, which must descend from `joint` (and differ from it), or
    /// [`NO_JOINT`] for a virtual tail at `joint × tail`.
    pub child: u16,
    /// The tail in the joint's local space, model units: the child's rest translation, or for a
    /// virtual tail `dir(joint's rest translation) × 0.07` (three-vrm's
    /// `initialLocalChildPosition`). Its direction is the bone's axis.
    pub tail: Vec3<R>,
    /// Radius of the tail's sphere against colliders, world units (≥ 0).
    pub hit_radius: R,
    /// Pull back towards the rest direction, per second.
    pub stiffness: R,
    /// Strength of `gravity_dir`, world units per second.
    pub gravity_power: R,
    /// Direction of gravity, world space, used as given (not normalized, as three-vrm).
    pub gravity_dir: Vec3<R>,
    /// Share of the tail's speed lost per step, in `[0, 1]`.
    pub drag_force: R,
    /// The joint whose space the tail points are kept in ([`NO_JOINT`]: world space).
    pub center: u16,
    /// First entry of [`SpringBones::joint_colliders`] this joint collides with.
    pub colliders_start: u16,
    /// Number of entries of [`SpringBones::joint_colliders`] from `colliders_start`.
    pub colliders_len: u16,
}

/// A collider's shape, in its joint's local space (model units).
///
/// The signed distance `d` of the tail sphere (centre `p`, radius `h`) and the push direction
/// `n`, three-vrm's `calculateCollision`, with `c` the collider's centre in the world:
/// - sphere: `d = |p − c| − h − radius` (inside: `radius − h − |p − c|`), `n = dir(p − c)`
///   (inside: its opposite);
/// - capsule: the same from the closest point of the segment `c`…`W_c × tail`;
/// - plane: `d = (p − c)·n − h` with `n` the normal through the collider's normal matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColliderShape<R> {
    /// A sphere (or, with `inside`, the inside of one).
    Sphere {
        /// Centre.
        offset: Vec3<R>,
        /// Radius (≥ 0).
        radius: R,
        /// True: the tail is kept inside the sphere instead of outside.
        inside: bool,
    },
    /// A capsule from `offset` to `tail` (or, with `inside`, the inside of one).
    Capsule {
        /// Centre of the first cap.
        offset: Vec3<R>,
        /// Centre of the second cap.
        tail: Vec3<R>,
        /// Radius (≥ 0).
        radius: R,
        /// True: the tail is kept inside the capsule instead of outside.
        inside: bool,
    },
    /// A plane through `offset` the tail stays in front of.
    Plane {
        /// A point of the plane.
        offset: Vec3<R>,
        /// The plane's normal, towards the side the tail is kept on (need not be unit length).
        normal: Vec3<R>,
    },
}

impl<R: Real> ColliderShape<R> {
    /// True when every number is finite and the radius is not negative.
    fn is_valid(&self) -> bool {
        match *self {
            ColliderShape::Sphere { offset, radius, .. } => {
                offset.is_finite() && radius.is_finite() && radius >= R::ZERO
            }
            ColliderShape::Capsule { offset, tail, radius, .. } => {
                offset.is_finite() && tail.is_finite() && radius.is_finite() && radius >= R::ZERO
            }
            ColliderShape::Plane { offset, normal } => offset.is_finite() && normal.is_finite(),
        }
    }
}

/// A collider: a shape on a joint, which moves with it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringCollider<R> {
    /// The skeleton joint the shape is attached to.
    pub joint: u16,
    /// The shape, in the joint's local space.
    pub shape: ColliderShape<R>,
}

/// A character's spring bones: the joints in run order and the colliders they test.
#[derive(Clone, Copy, Debug)]
pub struct SpringBones<'a, R> {
    /// The spring joints in run order: each after the spring joints above it and after those
    /// that move its colliders (three-vrm's `_sortJoints`). The order decides which matrices
    /// a joint reads (see the [module](self)); any order runs.
    pub joints: &'a [SpringJoint<R>],
    /// Every collider.
    pub colliders: &'a [SpringCollider<R>],
    /// Indices into `colliders`: each joint's colliders (those of its spring's collider
    /// groups, in group order, repeats kept) are `joint_colliders[colliders_start..][..colliders_len]`.
    pub joint_colliders: &'a [u16],
}

impl<R: Real> SpringBones<'_, R> {
    /// Checks the indices and settings against a skeleton.
    ///
    /// # Errors
    ///
    /// [`JobError::JointIndexOutOfRange`] when a joint's `joint`, `child` or `center`, or a
    /// collider's `joint`, is not a joint of `skeleton` (`child` and `center` may be
    /// [`NO_JOINT`]);
    /// [`JobError::InvalidRange`] when a joint's collider range passes the end of
    /// `joint_colliders`, an entry of `joint_colliders` is not an index of `colliders`, or a
    /// joint's `child` is not below its `joint`;
    /// [`JobError::InvalidTransform`] when a setting, tail or shape is NaN or infinite, or a
    /// radius is negative.
    pub fn validate(&self, skeleton: &SkeletonView<'_, R>) -> Result<(), JobError> {
        let n = skeleton.num_joints();
        let joint_ok = |j: u16| usize::from(j) < n;
        let optional_ok = |j: u16| j == NO_JOINT || joint_ok(j);
        let indices_ok = self.joints.iter().all(|s| joint_ok(s.joint) && optional_ok(s.child) && optional_ok(s.center))
            && self.colliders.iter().all(|c| joint_ok(c.joint));
        if !indices_ok {
            return Err(JobError::JointIndexOutOfRange);
        }
        let range_ok = |s: &SpringJoint<R>| {
            usize::from(s.colliders_start) + usize::from(s.colliders_len) <= self.joint_colliders.len()
        };
        let below = |s: &SpringJoint<R>| {
            s.child == NO_JOINT || (s.child != s.joint && skeleton.is_in_subtree(s.child.into(), s.joint.into()))
        };
        let table_ok = self.joint_colliders.iter().all(|&c| usize::from(c) < self.colliders.len());
        if !table_ok || !self.joints.iter().all(|s| range_ok(s) && below(s)) {
            return Err(JobError::InvalidRange);
        }
        let settings_ok = |s: &SpringJoint<R>| {
            s.tail.is_finite()
                && s.hit_radius.is_finite()
                && s.hit_radius >= R::ZERO
                && s.stiffness.is_finite()
                && s.gravity_power.is_finite()
                && s.gravity_dir.is_finite()
                && s.drag_force.is_finite()
        };
        if !self.joints.iter().all(settings_ok) || !self.colliders.iter().all(|c| c.shape.is_valid()) {
            return Err(JobError::InvalidTransform);
        }
        Ok(())
    }
}

/// A spring joint's state, kept from one step to the next: its tail points (in its center's
/// space when the joint has a center, else in world space) and the local rotation the stage
/// gave the joint last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringTail<R> {
    /// The tail now.
    pub current: Vec3<R>,
    /// The tail one step before.
    pub prev: Vec3<R>,
    /// The joint's local rotation as the last step or reset left it (three-vrm's bone keeps its
    /// quaternion between updates): a step starts from it, whatever rotation `locals` holds
    /// for the joint.
    pub rotation: Quat<R>,
}

/// Both tail points at the origin and no rotation: a state to [`SpringBoneJob::reset`] before
/// the first step.
impl<R: Real> Default for SpringTail<R> {
    fn default() -> Self {
        SpringTail { current: Vec3::ZERO, prev: Vec3::ZERO, rotation: Quat::IDENTITY }
    }
}

/// What a step needs of a spring joint that does not change while its springs and skeleton
/// stay the same: the bone's axis and the joint's rest transform, as the step would compute
/// them from the [`SpringJoint`] and the skeleton's rest pose. A caller that steps the same
/// springs many times makes them once ([`SpringRest::fill`]) and passes them to
/// [`SpringBoneJob::step_validated_springs`]; [`SpringBoneJob::step`] makes each on its way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringRest<R> {
    /// `dir(tail)`: the bone's axis in the joint's space.
    axis: Vec3<R>,
    /// The rest axis before the parent's matrix (`rest_j₃ × tail`, or its direction in fixed
    /// point): step 3's `axis` is `dir(W_parent₃ × rest_axis)`.
    rest_axis: Vec3<R>,
    /// The joint's rest rotation.
    rotation: Quat<R>,
    /// The joint's rest translation.
    translation: Vec3<R>,
    /// The joint's rest scale.
    scale: Vec3<R>,
}

/// A joint without a length or a rest transform (every step skips it): zeros and no rotation.
impl<R: Real> Default for SpringRest<R> {
    fn default() -> Self {
        SpringRest {
            axis: Vec3::ZERO,
            rest_axis: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
            scale: Vec3::ZERO,
        }
    }
}

impl<R: Real> SpringRest<R> {
    /// Spring joint `s`'s constants on `skeleton`, or `None` when `s.joint` is not a joint of it.
    pub fn of(skeleton: &SkeletonView<'_, R>, s: &SpringJoint<R>) -> Option<Self> {
        let rest = skeleton.rest_transform(s.joint.into())?;
        let axis = dir(s.tail);
        // In `f32` the inner directions are left to the outer `dir` of step 3 (the same up to
        // rounding); fixed point keeps its precision with a unit vector at each stage.
        let rest_axis = if R::FIXED_POINT {
            dir(rest.rotation.rotate(rest.scale.mul_elem(axis)))
        } else {
            rest.rotation.rotate(rest.scale.mul_elem(s.tail))
        };
        Some(SpringRest { axis, rest_axis, rotation: rest.rotation, translation: rest.translation, scale: rest.scale })
    }

    /// Fills `out` (one entry per joint of `joints`, in their order) with the joints' constants
    /// on `skeleton`.
    ///
    /// # Errors
    ///
    /// [`JobError::ContextTooSmall`] when `out` is shorter than `joints`,
    /// [`JobError::JointIndexOutOfRange`] when a joint's `joint` is not a joint of `skeleton`;
    /// `out` is left as it was then.
    pub fn fill(skeleton: &SkeletonView<'_, R>, joints: &[SpringJoint<R>], out: &mut [Self]) -> Result<(), JobError> {
        let out = out.get_mut(..joints.len()).ok_or(JobError::ContextTooSmall)?;
        if joints.iter().any(|s| usize::from(s.joint) >= skeleton.num_joints()) {
            return Err(JobError::JointIndexOutOfRange);
        }
        for (s, o) in joints.iter().zip(out.iter_mut()) {
            *o = Self::of(skeleton, s).unwrap_or_default();
        }
        Ok(())
    }
}

/// What a step or a reset did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpringReport {
    /// Collider tests that found a tail inside a collider (and pushed it out): one per joint
    /// and collider, three-vrm's `calculateCollision` returning a negative distance.
    pub contacts: u32,
    /// Spring joints left as they were because their geometry was degenerate (a zero bone
    /// length, the tail on the joint, a singular matrix where one is inverted).
    pub skipped: u32,
}

/// Swings a pose's spring bones (see the [module](self) for the method).
///
/// # Examples
///
/// A bone hanging sideways from a root swings down under gravity:
///
/// ```
/// use sinew::job::spring::{SpringBoneJob, SpringBones, SpringJoint, SpringTail, NO_JOINT};
/// use sinew::job::LocalToModelJob;
/// use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};
/// use sinew::skeleton::{Skeleton, NO_PARENT};
///
/// let at = |x: f32| Transform::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
/// let skeleton = Skeleton::<f32, 1>::new(&[NO_PARENT, 0, 1], &[at(0.0), at(0.0), at(0.5)], &["root", "hair", "tip"])?;
/// let mut locals = [SoaTransform::IDENTITY];
/// locals.copy_from_slice(skeleton.rest_pose());
/// let mut models = [Mat4::IDENTITY; 3];
/// LocalToModelJob::new(skeleton.view(), &locals, &mut models).run()?;
///
/// let joints = [SpringJoint {
///     joint: 1,
///     child: 2,
///     tail: Vec3::new(0.5, 0.0, 0.0),
///     hit_radius: 0.0,
///     stiffness: 0.0,
///     gravity_power: 1.0,
///     gravity_dir: Vec3::new(0.0, -1.0, 0.0),
///     drag_force: 0.4,
///     center: NO_JOINT,
///     colliders_start: 0,
///     colliders_len: 0,
/// }];
/// let mut tails = [SpringTail::default()];
/// let mut job = SpringBoneJob {
///     skeleton: skeleton.view(),
///     springs: SpringBones { joints: &joints, colliders: &[], joint_colliders: &[] },
///     world: Mat4::IDENTITY,
///     locals: &mut locals,
///     models: &mut models,
///     tails: &mut tails,
/// };
/// job.reset()?;
/// for _ in 0..600 {
///     job.step(1.0 / 60.0)?;
/// }
/// // The tip hangs below the hair joint, half a metre down.
/// let tip = models[2].translation();
/// assert!((tip - Vec3::new(0.0, -0.5, 0.0)).length() < 0.01);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SpringBoneJob<'a, R: Real> {
    /// The hierarchy and its rest pose.
    pub skeleton: SkeletonView<'a, R>,
    /// The spring joints and colliders.
    pub springs: SpringBones<'a, R>,
    /// Model space to world space this frame (where the tails move and gravity points).
    pub world: Mat4<R>,
    /// The animated local pose, at least `skeleton.num_soa_joints()` elements; the spring
    /// joints' rotations are written (and on entry to a step replaced by their tails'
    /// rotations).
    pub locals: &'a mut [SoaTransform<R>],
    /// The pose's model matrices (from `LocalToModelJob` with no root), at least
    /// `skeleton.num_joints()`, up to date on entry and on return.
    pub models: &'a mut [Mat4<R>],
    /// One tail per spring joint (at least `springs.joints.len()`), in the order of `joints`.
    pub tails: &'a mut [SpringTail<R>],
}

impl<R: Real> SpringBoneJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `locals` has fewer than `num_soa_joints()` elements,
    /// [`JobError::OutputTooSmall`] when `models` has fewer than `num_joints()` matrices,
    /// [`JobError::ContextTooSmall`] when `tails` is shorter than `springs.joints`,
    /// [`JobError::InvalidTransform`] when `world` is not finite, and the errors of
    /// [`SpringBones::validate`].
    pub fn validate(&self) -> Result<(), JobError> {
        self.validate_buffers()?;
        self.springs.validate(&self.skeleton)?;
        self.validate_world()
    }

    /// The buffers' sizes: the first checks of [`validate`](Self::validate).
    fn validate_buffers(&self) -> Result<(), JobError> {
        let sk = &self.skeleton;
        if self.locals.len() < sk.num_soa_joints() {
            return Err(JobError::InputTooSmall);
        }
        if self.models.len() < sk.num_joints() {
            return Err(JobError::OutputTooSmall);
        }
        if self.tails.len() < self.springs.joints.len() {
            return Err(JobError::ContextTooSmall);
        }
        Ok(())
    }

    /// `world`: the last check of [`validate`](Self::validate).
    fn validate_world(&self) -> Result<(), JobError> {
        if !self.world.is_finite() {
            return Err(JobError::InvalidTransform);
        }
        Ok(())
    }

    /// Validates, then puts every spring joint back to its rest rotation and its tail at rest
    /// (three-vrm's `reset()`; see the [module](self)). `models` is up to date on return.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written then.
    pub fn reset(&mut self) -> Result<SpringReport, JobError> {
        self.validate()?;
        let (world, sk, springs) = (self.world, self.skeleton, self.springs);
        let plan = SpringPlan::new(&sk, springs.joints);
        let mut pose = Pose::new(sk, &plan, self.locals, self.models);
        let mut report = SpringReport::default();
        for (s, tail) in springs.joints.iter().zip(self.tails.iter_mut()) {
            let j = usize::from(s.joint);
            let Some(rest) = sk.rest_transform(j) else { continue };
            let mut local = pose.local(j);
            local.rotation = rest.rotation;
            let parent = sk.parent(j).map_or(Mat4::IDENTITY, |p| pose.stored(p));
            let model = pose::model_of(&parent, &local);
            pose.commit(j, local.rotation, model);
            tail.rotation = rest.rotation;
            let at = point(&world, point(&model, s.tail));
            let center = (s.center != NO_JOINT).then(|| product(&world, &pose.stored(s.center.into())));
            match center.map_or(Some(at), |c| inverse_point(&c, at)) {
                Some(p) => (tail.current, tail.prev) = (p, p),
                None => report.skipped = report.skipped.saturating_add(1),
            }
        }
        pose.finish();
        Ok(report)
    }

    /// Validates, then advances the spring bones by `dt` seconds (three-vrm's
    /// `update(delta)`; see the [module](self)): gives the spring joints the rotations of
    /// their [`SpringTail::rotation`] (recomputing the matrices below them when `locals` held
    /// others), runs the joints, writes their new rotations into `locals` and `tails`, brings
    /// `models` up to date and moves the tails. `dt ≤ 0` changes nothing.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate), and [`JobError::InvalidTransform`] when `dt`, a tail
    /// point or a tail's rotation is NaN or infinite; nothing is written then.
    pub fn step(&mut self, dt: R) -> Result<SpringReport, JobError> {
        self.validate()?;
        let plan = SpringPlan::new(&self.skeleton, self.springs.joints);
        self.step_checked(dt, &plan, None)
    }

    /// As [`step`](Self::step) for springs already checked against this skeleton by
    /// [`SpringBones::validate`], with their [`SpringPlan`] and their joints' [`SpringRest`]s
    /// (`rests`, from [`SpringRest::fill`]; a character checks its springs and makes both once,
    /// when it sets them up):
    /// the buffers' sizes, `world`, `dt` and the tails are checked as `step` checks them, the
    /// springs' indices and settings are not. Springs that `validate` would refuse, or a plan
    /// or rests made for other springs or another skeleton, give unspecified results, without a
    /// panic and without a write outside the buffers.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`], [`JobError::OutputTooSmall`] and
    /// [`JobError::ContextTooSmall`] as [`validate`](Self::validate) gives them
    /// ([`JobError::ContextTooSmall`] also when `rests` is shorter than the joints), and
    /// [`JobError::InvalidTransform`] when `world`, `dt`, a tail point or a tail's rotation is
    /// NaN or infinite; nothing is written then.
    pub fn step_validated_springs(
        &mut self,
        dt: R,
        plan: &SpringPlan,
        rests: &[SpringRest<R>],
    ) -> Result<SpringReport, JobError> {
        self.validate_buffers()?;
        if rests.len() < self.springs.joints.len() {
            return Err(JobError::ContextTooSmall);
        }
        self.validate_world()?;
        self.step_checked(dt, plan, Some(rests))
    }

    /// [`step`](Self::step) after the checks of [`validate`](Self::validate), with the joints'
    /// constants from `rests` (made on the way without).
    fn step_checked(
        &mut self,
        dt: R,
        plan: &SpringPlan,
        rests: Option<&[SpringRest<R>]>,
    ) -> Result<SpringReport, JobError> {
        let n = self.springs.joints.len();
        let finite = |t: &SpringTail<R>| t.current.is_finite() & t.prev.is_finite() & t.rotation.is_finite();
        let tails_ok = self.tails.get(..n).is_some_and(|t| t.iter().all(finite));
        if !dt.is_finite() || !tails_ok {
            return Err(JobError::InvalidTransform);
        }
        let mut report = SpringReport::default();
        if dt <= R::ZERO {
            return Ok(report);
        }
        let (world, sk, springs) = (self.world, self.skeleton, self.springs);
        let world_inverse = InverseDirection::of(&world);
        let mut pose = Pose::new(sk, plan, self.locals, self.models);
        let mut placed = Placements::default();
        pose.restore(springs.joints.iter().zip(self.tails.iter()).map(|(s, t)| (usize::from(s.joint), t.rotation)));
        let step = Step { world, world_inverse, dt, springs: &springs };
        for (i, (s, tail)) in springs.joints.iter().zip(self.tails.iter_mut()).enumerate() {
            let rest = match rests {
                Some(r) => r.get(i).copied(),
                None => SpringRest::of(&sk, s),
            };
            let ran = rest.and_then(|rest| step.run(s, &rest, &mut pose, tail, &mut placed, &mut report.contacts));
            if ran.is_none() {
                report.skipped = report.skipped.saturating_add(1);
            }
        }
        pose.finish();
        Ok(report)
    }
}

/// One spring joint's step.
struct Step<'s, 'a, R> {
    world: Mat4<R>,
    /// `world₃⁻¹` as a positive multiple (`None`: singular, every joint is skipped).
    world_inverse: Option<InverseDirection<R>>,
    dt: R,
    springs: &'s SpringBones<'a, R>,
}

impl<R: Real> Step<'_, '_, R> {
    /// Steps 1 to 6 of the method for joint `s` (its constants `rest`): its new local rotation and model matrix
    /// committed to `pose`, the tail moved in `tail`, contacts added to `contacts`; `None` (and
    /// the pose and `tail` untouched) when the geometry is degenerate.
    ///
    /// World-space points and directions are taken through `world` and the model matrices one
    /// after the other (`world × (M × p)`) rather than through their products, and `A⁻¹` of
    /// step 6 as `rest_j₃⁻¹ × parent₃⁻¹ × world₃⁻¹`: the same quantities, without a 4×4
    /// product per joint and collider.
    fn run(
        &self,
        s: &SpringJoint<R>,
        rest: &SpringRest<R>,
        pose: &mut Pose<'_, R>,
        tail: &mut SpringTail<R>,
        placed: &mut Placements<R>,
        contacts: &mut u32,
    ) -> Option<()> {
        let (world, dt) = (self.world, self.dt);
        let j = usize::from(s.joint);
        let parent = pose.skeleton().parent(j);

        // 1. The joint's matrix from its parent's as it is now (its translation, and the whole
        //    matrix where a virtual tail or the joint as center needs it).
        let parent_model = parent.map_or(Mat4::IDENTITY, |p| pose.stored(p));
        let local = pose.local(j);
        let model = || pose::model_of(&parent_model, &local);
        let at = point(&world, point(&parent_model, local.translation));

        // 2. The bone's length in the world.
        let end = match s.child {
            NO_JOINT => point(&world, point(&model(), s.tail)),
            c => point(&world, pose.stored(c.into()).translation()),
        };
        let bone = length(at - end);

        // 3. Inertia, stiffness and gravity, then back onto the bone's sphere.
        let axis = rest.axis;
        let axis_w = dir(vector(&world, vector(&parent_model, rest.rest_axis)));
        let center = match s.center {
            NO_JOINT => None,
            c if c == s.joint => Some(product(&world, &model())),
            c => Some(product(&world, &pose.stored(c.into()))),
        };
        let inertia = tail.current + (tail.current - tail.prev) * (R::ONE - s.drag_force);
        let mut next = center.map_or(inertia, |c| point(&c, inertia))
            + axis_w * (s.stiffness * dt)
            + s.gravity_dir * (s.gravity_power * dt);
        next = onto_sphere(at, next, bone)?;

        // 4. Collisions.
        let start = usize::from(s.colliders_start);
        let ids = self.springs.joint_colliders.get(start..start + usize::from(s.colliders_len)).unwrap_or(&[]);
        for &id in ids {
            let Some(c) = self.springs.colliders.get(usize::from(id)) else { continue };
            let shape = placed.get(id).unwrap_or_else(|| {
                let shape = place(&c.shape, &world, &pose.stored(c.joint.into()));
                if pose.fixed(c.joint.into()) {
                    placed.put(id, shape);
                }
                shape
            });
            if let Contact::Inside { depth, normal } = collide(&shape, next, s.hit_radius) {
                *contacts = contacts.saturating_add(1);
                if let Some(normal) = normal {
                    next = onto_sphere(at, next + normal * depth, bone)?;
                }
            }
        }

        // 5. The tail points, in the center's space.
        let current = match center {
            Some(c) => inverse_point(&c, next)?,
            None => next,
        };

        // 6. The rotation that turns the rest axis towards the tail: `A⁻¹ × (next − pos(A))`
        //    through the world's, the parent's and the rest transform's inverses in turn (each
        //    a positive multiple: only the direction is kept).
        //    `pos(A)` is `pos(W_j)` when the animated translation is the rest one, bit for bit.
        let a_at = if same(local.translation, rest.translation) {
            at
        } else {
            point(&world, point(&parent_model, rest.translation))
        };
        let u = self.world_inverse?.apply(next - a_at);
        let u = if R::FIXED_POINT { dir(u) } else { u };
        let u = InverseDirection::of(&parent_model)?.apply(u);
        let u = rest.rotation.conjugate().rotate(if R::FIXED_POINT { dir(u) } else { u });
        let scale = rest.scale;
        if scale.x == R::ZERO || scale.y == R::ZERO || scale.z == R::ZERO {
            return None;
        }
        let u = if scale == Vec3::ONE { u } else { Vec3::new(u.x / scale.x, u.y / scale.y, u.z / scale.z) };
        // In `f32` the rest rotation's product with the arc is not normalized again (three-vrm's
        // `premultiply`): both are unit quaternions, and the rotation is made anew each step.
        let rotation = if R::FIXED_POINT {
            let to = dir(u);
            if to == Vec3::ZERO {
                return None;
            }
            unit(rest.rotation * arc(axis, to))
        } else {
            rest.rotation * arc_toward(axis, u)?
        };
        let mut turned = local;
        turned.rotation = rotation;
        pose.commit(j, rotation, pose::model_of(&parent_model, &turned));
        *tail = SpringTail { current, prev: tail.current, rotation };
        Some(())
    }
}

/// Colliders placed in the world during a step, kept for the joints after: a few entries, each
/// for the colliders whose index is its own modulo their number; only colliders on joints whose
/// matrices the step does not change ([`Pose::fixed`]) are kept.
struct Placements<R> {
    entries: [Option<(u16, Placed<R>)>; PLACEMENTS],
}

/// Entries of [`Placements`].
const PLACEMENTS: usize = 4;

impl<R> Default for Placements<R> {
    fn default() -> Self {
        Placements { entries: [None, None, None, None] }
    }
}

impl<R: Real> Placements<R> {
    /// Collider `id` as placed earlier in the step, if kept.
    fn get(&self, id: u16) -> Option<Placed<R>> {
        match self.entries.get(usize::from(id) % PLACEMENTS) {
            Some(&Some((kept, shape))) if kept == id => Some(shape),
            _ => None,
        }
    }

    /// Keeps collider `id`'s placement.
    fn put(&mut self, id: u16, shape: Placed<R>) {
        if let Some(e) = self.entries.get_mut(usize::from(id) % PLACEMENTS) {
            *e = Some((id, shape));
        }
    }
}

/// True when `a` and `b` hold the same numbers bit for bit (zeros of either sign told apart).
fn same<R: Real>(a: Vec3<R>, b: Vec3<R>) -> bool {
    // Fixed point has one zero; in `f32` equal numbers differ only in a zero's sign.
    let sign = |x: R| !R::FIXED_POINT && x.to_f32().is_sign_negative();
    let signs = (sign(a.x) == sign(b.x)) & (sign(a.y) == sign(b.y)) & (sign(a.z) == sign(b.z));
    (a.x == b.x) & (a.y == b.y) & (a.z == b.z) & signs
}

/// `at + dir(p − at) × to`, or `None` when `p` is on `at` or `to` is 0.
fn onto_sphere<R: Real>(at: Vec3<R>, p: Vec3<R>, to: R) -> Option<Vec3<R>> {
    let d = p - at;
    let l = length(d);
    if l <= R::ZERO || to <= R::ZERO {
        return None;
    }
    Some(at + scale_to(d, l, to))
}

#[cfg(test)]
mod tests;
