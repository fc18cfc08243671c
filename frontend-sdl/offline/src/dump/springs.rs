//! `sinew dump --springs`: the pose after the model's spring bones played from time 0 to the
//! dump's time at a fixed rate.
//!
//! The rule: the pose at time 0 (the clip's, or the rest pose) initializes the springs (their
//! rotations at rest, their tails from that pose: [`SpringBoneJob::reset`]); step
//! `k = 1 … round(T · rate)` poses the clip at `k / rate`, edits it (`edit`: `--ground`,
//! `--ik`), then advances the springs by `1 / rate`; the result is the pose after the last
//! step. The springs run in the dump's space (`joint_world`: the model's, no world matrix).

use sinew::job::spring::{SpringBoneJob, SpringTail};
use sinew::math::{Mat4, SoaTransform};
use sinew_host::SpringSet;

use super::{blended_pose, DumpOptions};
use crate::model::Model;

/// What the run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpringRun {
    /// Steps run after the reset.
    pub steps: usize,
    /// Joint-collider contacts over them.
    pub contacts: u64,
}

/// The most steps a dump runs (a day at 60 Hz): a larger `time × rate` is refused.
pub const MAX_STEPS: f64 = 5_184_000.0;

/// The pose at `opts.time` with the springs played to it at `rate` steps per second (see the
/// [module](self)), and what the run did.
///
/// # Errors
///
/// One line: the model has no spring bones, the rate is not a positive finite number, the
/// run would take more than [`MAX_STEPS`] steps, or a pose or a job fails (`edit`'s own
/// message for an edit).
pub fn spring_pose(
    model: &Model,
    opts: &DumpOptions,
    rate: f32,
    mut edit: impl FnMut(&mut Vec<SoaTransform<f32>>) -> Result<(), String>,
) -> Result<(Vec<SoaTransform<f32>>, SpringRun), String> {
    let set = SpringSet::from_asset(&model.asset()).ok_or("the model has no spring bones")?;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("the spring rate must be a positive number of steps per second, not {rate}"));
    }
    let steps = (f64::from(opts.time) * f64::from(rate)).round();
    if !(steps.is_finite() && steps <= MAX_STEPS) {
        return Err(format!("{} s at {rate} Hz is more than {MAX_STEPS} steps", opts.time));
    }
    let steps = steps.max(0.0) as usize;
    let springs = set.bones();
    let mut tails = vec![SpringTail::default(); set.joints.len()];
    let mut models: Vec<Mat4<f32>> = Vec::new();
    let mut run = SpringRun::default();
    let mut pose = Vec::new();
    for k in 0..=steps {
        let at = DumpOptions { time: (k as f64 / f64::from(rate)) as f32, ..opts.clone() };
        pose = blended_pose(model, &at)?;
        edit(&mut pose)?;
        model.world(&pose, &mut models).map_err(|e| e.to_string())?;
        let mut job = SpringBoneJob {
            skeleton: model.skeleton(),
            springs,
            world: Mat4::IDENTITY,
            locals: &mut pose,
            models: &mut models,
            tails: &mut tails,
        };
        if k == 0 {
            job.reset().map_err(|e| e.to_string())?;
        } else {
            let report = job.step(1.0 / rate).map_err(|e| e.to_string())?;
            run.steps += 1;
            run.contacts += u64::from(report.contacts);
        }
    }
    Ok((pose, run))
}
