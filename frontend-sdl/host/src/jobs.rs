//! The core's jobs as the host layer runs them, each behind one out-of-line call: a job that
//! several paths run (a character's frame, a model's bounds at load) is compiled once, not
//! inlined into each.

use sinew::job::{JobError, LocalToModelJob};
use sinew::math::{Mat4, SoaTransform};
use sinew::skeleton::SkeletonView;

/// The model matrices of `pose` ([`LocalToModelJob`]).
///
/// # Errors
///
/// The job's refusal (a pose or an output shorter than the skeleton).
#[inline(never)]
pub fn local_to_model(
    skeleton: SkeletonView<'_, f32>,
    pose: &[SoaTransform<f32>],
    out: &mut [Mat4<f32>],
) -> Result<(), JobError> {
    LocalToModelJob::new(skeleton, pose, out).run()
}
