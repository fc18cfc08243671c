//! The spring stage: the right arm swung as a spring chain against a sphere on the chest.

use super::*;

/// The spring chain, by joint name: the right arm's upper arm, forearm and hand (the fixture's
/// joints 11 to 13), each the parent of the next; the hand's bone ends at a virtual tail.
pub const SPRING_CHAIN: [&str; 3] = ["r_upper_arm", "r_forearm", "r_hand"];
/// Spring joints: one per joint of [`SPRING_CHAIN`].
pub const SPRING_JOINTS: usize = SPRING_CHAIN.len();
/// The joint the chain's collider sphere is on: the chest, the arm's neighbour.
pub const SPRING_COLLIDER: &str = "chest";

/// Seconds of one spring step: 1/60 (one step a frame).
#[must_use]
pub fn spring_dt<R: Real>() -> R {
    R::ratio(1, 60)
}

/// The spring chain's joints, its collider and the collider table, as [`SpringBones`] borrows
/// them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringChain<R> {
    /// The spring joints, in [`SPRING_CHAIN`] order (the run order: parents first).
    pub joints: [SpringJoint<R>; SPRING_JOINTS],
    /// The sphere on [`SPRING_COLLIDER`].
    pub colliders: [SpringCollider<R>; 1],
    /// Every joint's collider list: the one sphere.
    pub joint_colliders: [u16; 1],
}

impl<R: Scalar> SpringChain<R> {
    /// The chain of `skeleton`: each joint's tail is its child's rest translation, the hand's a
    /// virtual tail 7 cm along its rest translation (VRM's `dir(translation) × 0.07`); every
    /// joint has a hit radius of 4 cm, stiffness 1, gravity 6 straight down and drag 2/5, keeps
    /// its tail in world space and collides with a sphere of radius 3/10 m centred 1/4 m below
    /// the chest's origin (in the chest's space: about the belly). The arm starts straight out
    /// to the side (its rest pose), falls under gravity and from the third frame on rests
    /// against the sphere, the upper arm and then the forearm too.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Incomplete`] when the skeleton lacks a joint of [`SPRING_CHAIN`] or
    /// [`SPRING_COLLIDER`].
    pub fn new(skeleton: SkeletonView<'_, R>) -> Result<Self, ProbeError> {
        // Scene::new checked that the skeleton has at most Probe::JOINTS (< 2^16) joints.
        let find = |name: &str| skeleton.find(name).map(|j| j as u16).ok_or(ProbeError::Incomplete);
        let rest = |j: u16| skeleton.rest_transform(usize::from(j)).ok_or(ProbeError::Incomplete);
        let mut joints = [SpringJoint {
            joint: 0,
            child: NO_JOINT,
            tail: Vec3::ZERO,
            hit_radius: R::ratio(1, 25),
            stiffness: R::ONE,
            gravity_power: R::from_i32(6),
            gravity_dir: Vec3::new(R::ZERO, -R::ONE, R::ZERO),
            drag_force: R::ratio(2, 5),
            center: NO_JOINT,
            colliders_start: 0,
            colliders_len: 1,
        }; SPRING_JOINTS];
        for (k, (s, name)) in joints.iter_mut().zip(SPRING_CHAIN).enumerate() {
            s.joint = find(name)?;
            s.tail = match SPRING_CHAIN.get(k + 1) {
                Some(&child) => {
                    s.child = find(child)?;
                    rest(s.child)?.translation
                }
                None => rest(s.joint)?.translation.normalize_or_zero() * R::ratio(7, 100),
            };
        }
        let sphere = ColliderShape::Sphere {
            offset: Vec3::new(R::ZERO, R::ratio(-1, 4), R::ZERO),
            radius: R::ratio(3, 10),
            inside: false,
        };
        let colliders = [SpringCollider { joint: find(SPRING_COLLIDER)?, shape: sphere }];
        Ok(SpringChain { joints, colliders, joint_colliders: [0] })
    }

    /// The chain as the spring job reads it.
    #[must_use]
    pub fn bones(&self) -> SpringBones<'_, R> {
        SpringBones { joints: &self.joints, colliders: &self.colliders, joint_colliders: &self.joint_colliders }
    }
}

/// What the spring stage keeps from frame to frame: the tail of each joint of
/// [`SPRING_CHAIN`] (a static on the firmware).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringState<R> {
    /// The tails, in [`SPRING_CHAIN`] order.
    pub tails: [SpringTail<R>; SPRING_JOINTS],
}

impl<R: Scalar> SpringState<R> {
    /// Tails at the origin without rotation ([`SpringTail::default`]): the first frame resets
    /// them.
    pub const START: Self = SpringState {
        tails: [SpringTail { current: Vec3::ZERO, prev: Vec3::ZERO, rotation: Quat::IDENTITY }; SPRING_JOINTS],
    };
}

/// Swings [`SPRING_CHAIN`] in `pose` (the character's local pose) with [`SpringBoneJob`]:
/// resets the tails in `state` on frame 1, then steps the chain once by [`spring_dt`] in model
/// space (`world` the identity). `model` must hold `pose`'s model matrices on entry
/// ([`local_to_model`]); the step writes the chain's rotations into `pose` and brings `model`
/// up to date with them. Returns FNV-1a over the spring joints' model matrices after the step,
/// in [`SPRING_CHAIN`] order, and the step's report with the reset's skipped joints added. The
/// chain's data is on this function's stack; the job works in `pose` and `model` in place.
///
/// # Errors
///
/// [`ProbeError::Incomplete`] when the skeleton lacks a joint of [`SPRING_CHAIN`] or
/// [`SPRING_COLLIDER`], [`ProbeError::Job`] (`pose` or `model` too short, tails that are not
/// finite).
#[inline(never)]
pub fn spring<R: Scalar>(
    skeleton: SkeletonView<'_, R>,
    pose: &mut [SoaTransform<R>],
    model: &mut [Mat4<R>],
    state: &mut SpringState<R>,
    frame: usize,
) -> Result<(u32, SpringReport), ProbeError> {
    let chain = SpringChain::new(skeleton)?;
    let mut job = SpringBoneJob {
        skeleton,
        springs: chain.bones(),
        world: Mat4::IDENTITY,
        locals: pose,
        models: &mut *model,
        tails: &mut state.tails,
    };
    let reset = if frame <= 1 { spring_reset(&mut job)? } else { SpringReport::default() };
    let mut report = spring_step(&mut job)?;
    report.skipped = report.skipped.saturating_add(reset.skipped);
    let mut h = Fnv1a::new();
    for s in &chain.joints {
        h.mat4(model.get(usize::from(s.joint)).ok_or(ProbeError::Job(JobError::OutputTooSmall))?);
    }
    Ok((h.finish(), report))
}

/// [`SpringBoneJob::reset`], kept out of line: its working memory is off the stack when the
/// step runs, so the two do not add up.
#[inline(never)]
fn spring_reset<R: Scalar>(job: &mut SpringBoneJob<'_, R>) -> Result<SpringReport, JobError> {
    job.reset()
}

/// [`SpringBoneJob::step`] by [`spring_dt`], kept out of line like [`spring_reset`].
#[inline(never)]
fn spring_step<R: Scalar>(job: &mut SpringBoneJob<'_, R>) -> Result<SpringReport, JobError> {
    job.step(spring_dt())
}
