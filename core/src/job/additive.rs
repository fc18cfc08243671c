//! Additive deltas: [`make_additive`] and [`MakeAdditiveJob`] turn a pose into the delta from a
//! reference pose that [`BlendingJob`]'s additive layers apply.

use crate::job::JobError;
use crate::math::{SoaTransform, Transform, Vec3};
use crate::real::Real;

#[cfg(doc)]
use crate::job::BlendingJob;

/// The additive delta that turns `reference` into `pose`: translation `t − t_ref`, rotation
/// `q · conj(q_ref)` (so that `delta.rotation · q_ref = q`, matching the blend's
/// `rotation = d · rotation`), scale `s / s_ref` per axis (1 where `s_ref` is 0).
///
/// Applied with weight 1 onto `reference` by [`BlendingJob`], it gives back `pose`.
#[must_use]
pub fn make_additive<R: Real>(pose: &Transform<R>, reference: &Transform<R>) -> Transform<R> {
    let div = |a: R, b: R| if b == R::ZERO { R::ONE } else { a / b };
    Transform {
        translation: pose.translation - reference.translation,
        rotation: (pose.rotation * reference.rotation.conjugate()).normalize(),
        scale: Vec3::new(
            div(pose.scale.x, reference.scale.x),
            div(pose.scale.y, reference.scale.y),
            div(pose.scale.z, reference.scale.z),
        ),
    }
}

/// Builds additive deltas for a whole pose: `output[j] = make_additive(pose[j], reference[j])`.
///
/// # Examples
///
/// A nod made into a delta from its reference pose, then added at half weight onto another
/// pose by a [`BlendingJob`]:
///
/// ```
/// use sinew::job::{BlendingJob, Layer, MakeAdditiveJob};
/// use sinew::math::{Quat, SoaTransform, Transform, Vec3};
///
/// let pose = |t: Vec3<f32>, pitch: f32| {
///     let joint = Transform::new(t, Quat::from_axis_angle(Vec3::X, pitch), Vec3::ONE);
///     [SoaTransform::from_transforms([joint; 4])]
/// };
/// let reference = pose(Vec3::new(0.0, 1.5, 0.0), 0.0);
/// let nod = pose(Vec3::new(0.0, 1.5, 0.1), 0.4); // forward and down
/// let mut delta = [SoaTransform::IDENTITY];
/// MakeAdditiveJob { pose: &nod, reference: &reference, output: &mut delta }.run()?;
///
/// let base = pose(Vec3::new(2.0, 1.5, 0.0), 0.0);
/// let mut out = [SoaTransform::IDENTITY];
/// BlendingJob {
///     layers: &[Layer::new(&base, 1.0)],
///     additive: &[Layer::new(&delta, 0.5)],
///     rest_pose: &reference,
///     threshold: 0.1,
///     output: &mut out,
/// }
/// .run()?;
/// let joint = out[0].lane(0);
/// assert!((joint.translation - Vec3::new(2.0, 1.5, 0.05)).length() < 1e-6);
/// assert!((joint.rotation.angle_between(Quat::IDENTITY) - 0.2).abs() < 1e-3); // half the nod
/// # Ok::<(), sinew::job::JobError>(())
/// ```
#[derive(Debug)]
pub struct MakeAdditiveJob<'a, R: Real> {
    /// The pose to turn into a delta, SoA; its length is the number of elements processed.
    pub pose: &'a [SoaTransform<R>],
    /// The reference pose (often the first frame of the additive clip), at least as long as `pose`.
    pub reference: &'a [SoaTransform<R>],
    /// The deltas, at least as long as `pose`; extra elements are untouched.
    pub output: &'a mut [SoaTransform<R>],
}

impl<R: Real> MakeAdditiveJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `reference` is shorter than `pose`,
    /// [`JobError::OutputTooSmall`] when `output` is.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.reference.len() < self.pose.len() {
            return Err(JobError::InputTooSmall);
        }
        if self.output.len() < self.pose.len() {
            return Err(JobError::OutputTooSmall);
        }
        Ok(())
    }

    /// Validates, then builds the deltas.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        for ((out, p), r) in self.output.iter_mut().zip(self.pose).zip(self.reference) {
            for l in 0..4 {
                out.set_lane(l, &make_additive(&p.lane(l), &r.lane(l)));
            }
        }
        Ok(())
    }
}
