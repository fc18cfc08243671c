//! The retarget stage: the character's pose retargeted onto its own skeleton, hashed.

use super::*;

/// The retarget root: the character's `hips`.
pub const RETARGET_HIPS: usize = 1;

/// Retargets `pose` (the character's local pose) onto the character's own skeleton with its
/// hips' displacement scaled by 5/4 (a user's scale, as for a taller character), every joint
/// following the joint of the same index, and hashes the result's model matrices. The
/// retarget's constants (rest world rotations, offsets, root) are computed here each frame, so
/// the stage keeps nothing in statics: the Cortex-M0 has no RAM to spare. The model matrices,
/// rotations, offsets and poses are arrays on this function's stack.
///
/// # Errors
///
/// [`ProbeError::Job`] (not expected for the fixture: a hips height ≤ 0 or a bad matrix).
#[inline(never)]
pub fn retarget<R: Scalar>(skeleton: SkeletonView<'_, R>, pose: &[SoaTransform<R>]) -> Result<u32, ProbeError> {
    let n = skeleton.num_joints();
    let mut model = [Mat4::IDENTITY; Probe::JOINTS];
    local_to_model(skeleton, skeleton.rest_pose(), &mut model)?;
    let mut rest = [Quat::IDENTITY; Probe::JOINTS];
    world_rotations(&model[..n], &mut rest)?;
    let mut map = [NO_SOURCE; Probe::JOINTS];
    for (k, m) in map.iter_mut().enumerate().take(n) {
        *m = k as u16;
    }
    let mut joints = [RetargetJoint::UNMAPPED; Probe::JOINTS];
    RetargetJoint::offsets(&map[..n], &rest[..n], &rest[..n], &mut joints)?;
    let root =
        RetargetRoot::new(RETARGET_HIPS, RETARGET_HIPS, skeleton, &model[..n], &model[..n], Some(R::ratio(5, 4)))?;
    local_to_model(skeleton, pose, &mut model)?;
    let mut target = [SoaTransform::IDENTITY; Probe::SOA];
    RetargetJob {
        target: skeleton,
        joints: &joints,
        root: Some(root),
        source: &model[..n],
        world: &mut rest,
        output: &mut target,
    }
    .run()?;
    local_to_model(skeleton, &target, &mut model)?;
    let mut h = Fnv1a::new();
    model.iter().take(n).for_each(|m| h.mat4(m));
    Ok(h.finish())
}
