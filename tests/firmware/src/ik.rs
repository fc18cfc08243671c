//! The chain IK stage: the left leg solved by FABRIK towards a moving target, hashed.

use super::*;

/// The IK chain, by joint name: the left leg's thigh, shin, foot and toe (the fixture's joints
/// 14 to 17), each the parent of the next; the toe is the end effector.
pub const IK_CHAIN: [&str; 4] = ["l_thigh", "l_shin", "l_foot", "l_toe"];
/// The most FABRIK iterations of a solve.
pub const IK_ITERATIONS: u32 = 16;

/// The solve stops once the effector is this close to the target: 1 mm. In [`Q16`] a distance
/// is the square root of a sum of squares each rounded to 2^-16, so the solve stops once the
/// effector is within 2^-8.5 m (2.76 mm) of the target in every axis.
#[must_use]
pub fn ik_tolerance<R: Real>() -> R {
    R::ratio(1, 1000)
}

/// The IK target at frame `frame` (from 1), as an offset from the thigh's model position:
/// 1/10 m out to the left (+X), 7/10 m down, and from 3/4 m behind (−Z) to 3/4 m ahead in
/// [`FRAMES`] equal steps. The leg (thigh 0.42 m, shin 0.40 m, foot to toe 0.139 m) reaches
/// 0.959 m: the targets of the first and last frames, 1.031 m away, are out of reach; the
/// others (at most 0.917 m away) are within it.
#[must_use]
pub fn ik_offset<R: Real>(frame: usize) -> Vec3<R> {
    let step = frame.saturating_sub(1).min(FRAMES - 1) as i32;
    let span = (FRAMES - 1) as i32;
    Vec3::new(R::ratio(1, 10), R::ratio(-7, 10), R::ratio(-3, 4) + R::ratio(3 * step, 2 * span))
}

/// Solves [`IK_CHAIN`] in `pose` (the character's local pose) with [`IkChainJob`]'s FABRIK
/// towards the thigh's model position plus [`ik_offset`]`(frame)`, at most [`IK_ITERATIONS`]
/// iterations, to within [`ik_tolerance`], at full weight and without limits; applies the
/// corrections to a copy of `pose` and writes that copy's model matrices to `model`. Returns
/// the solve's report. The chain's joints, the copy, the solver's positions and the
/// corrections are arrays on this function's stack.
///
/// # Errors
///
/// [`ProbeError::Incomplete`] when the skeleton lacks a joint of [`IK_CHAIN`],
/// [`ProbeError::Job`] (`pose` or `model` too short, joints that are not a chain).
#[inline(never)]
pub fn ik_pose<R: Scalar>(
    skeleton: SkeletonView<'_, R>,
    pose: &[SoaTransform<R>],
    frame: usize,
    model: &mut [Mat4<R>],
) -> Result<ChainReport<R>, ProbeError> {
    let mut chain = [0u16; IK_CHAIN.len()];
    for (j, name) in chain.iter_mut().zip(IK_CHAIN) {
        // Scene::new checked that the skeleton has at most Probe::JOINTS (< 2^16) joints.
        *j = skeleton.find(name).ok_or(ProbeError::Incomplete)? as u16;
    }
    local_to_model(skeleton, pose, model)?;
    let hip = model.get(usize::from(chain[0])).ok_or(ProbeError::Job(JobError::OutputTooSmall))?.translation();
    let mut positions = [Vec3::ZERO; IK_CHAIN.len()];
    let mut corrections = [Quat::IDENTITY; IK_CHAIN.len() - 1];
    let report = IkChainJob {
        solver: ChainSolver::Fabrik,
        skeleton,
        models: model,
        chain: &chain,
        target: hip + ik_offset(frame),
        tolerance: ik_tolerance(),
        max_iterations: IK_ITERATIONS,
        weight: R::ONE,
        limits: &[],
        pole: None,
        positions: &mut positions,
        corrections: &mut corrections,
    }
    .run()?;
    let mut local = [SoaTransform::IDENTITY; Probe::SOA];
    let copy = local.get_mut(..pose.len()).ok_or(ProbeError::Job(JobError::InputTooSmall))?;
    copy.copy_from_slice(pose);
    apply_chain_corrections(copy, &chain, &corrections)?;
    local_to_model(skeleton, copy, model)?;
    Ok(report)
}

/// Solves the left leg towards frame `frame`'s target ([`ik_pose`]) and hashes the model
/// matrices of the corrected pose. The model matrices are an array on this function's stack,
/// like [`retarget`]'s: nothing lives in statics.
///
/// # Errors
///
/// As [`ik_pose`].
#[inline(never)]
pub fn ik<R: Scalar>(skeleton: SkeletonView<'_, R>, pose: &[SoaTransform<R>], frame: usize) -> Result<u32, ProbeError> {
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    ik_pose(skeleton, pose, frame, &mut model)?;
    let mut h = Fnv1a::new();
    model.iter().take(skeleton.num_joints()).for_each(|m| h.mat4(m));
    Ok(h.finish())
}
