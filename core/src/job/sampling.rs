//! Sampling: evaluates a clip at a time into a local pose.

use crate::asset::format::{TARGET_ROTATION, TARGET_TRANSLATION};
use crate::clip::{Clip, ClipTime, RotationInterpolation, TrackCache};
use crate::job::JobError;
use crate::math::SoaTransform;
use crate::real::Real;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u16 {}
    impl<R> Sealed for crate::clip::TrackCache<R> {}
}

/// Per-instance, per-track sampling state: a `u16` key cursor (2 bytes per track; decodes the
/// two surrounding keys on every call) or a [`TrackCache`] (decodes keys only when playback
/// crosses one; about 60 bytes per track for `f32`).
pub trait TrackState<R: Real>: sealed::Sealed + Copy + core::fmt::Debug {
    /// Samples track `i` of `clip` at `t`; returns (joint, target code, value).
    #[doc(hidden)]
    fn sample(
        &mut self,
        clip: &Clip<'_>,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]);
}

impl<R: Real> TrackState<R> for u16 {
    #[inline(always)]
    fn sample(
        &mut self,
        clip: &Clip<'_>,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]) {
        clip.sample_track(i, t, time, self, rot)
    }
}

impl<R: Real> TrackState<R> for TrackCache<R> {
    #[inline(always)]
    fn sample(
        &mut self,
        clip: &Clip<'_>,
        i: usize,
        t: R,
        time: &ClipTime<R>,
        rot: RotationInterpolation,
    ) -> (usize, u8, [R; 4]) {
        clip.sample_track_cached(i, t, time, self, rot)
    }
}

/// Samples every track of a clip at `time` into a SoA local pose; joints without tracks (and
/// untracked properties) keep the rest pose.
#[derive(Debug)]
pub struct SamplingJob<'a, R: Real, C: TrackState<R> = u16> {
    /// The clip.
    pub clip: Clip<'a>,
    /// Clip time in seconds; clamped into `[clip.start(), clip.end()]` (NaN reads as the start).
    pub time: R,
    /// How LINEAR rotation tracks are interpolated.
    pub rotation: RotationInterpolation,
    /// Rest pose of the skeleton (`Skeleton::rest_pose`); its length is the pose length.
    pub rest_pose: &'a [SoaTransform<R>],
    /// Per-instance track state, at least `clip.num_tracks()` entries: `u16` key cursors
    /// (start zeroed; any content is valid) or [`TrackCache`] entries (start
    /// [`TrackCache::EMPTY`]). Keep it between calls.
    pub cursor: &'a mut [C],
    /// The local pose, at least `rest_pose.len()` elements; extra elements are untouched.
    pub output: &'a mut [SoaTransform<R>],
}

impl<R: Real, C: TrackState<R>> SamplingJob<'_, R, C> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::ContextTooSmall`] when `cursor` is shorter than the track count,
    /// [`JobError::OutputTooSmall`] when `output` is shorter than `rest_pose`,
    /// [`JobError::JointIndexOutOfRange`] when a track animates a joint past the pose.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.cursor.len() < self.clip.num_tracks() {
            return Err(JobError::ContextTooSmall);
        }
        if self.output.len() < self.rest_pose.len() {
            return Err(JobError::OutputTooSmall);
        }
        if self.clip.joint_bound() > self.rest_pose.len() * 4 {
            return Err(JobError::JointIndexOutOfRange);
        }
        Ok(())
    }

    /// Validates, then samples.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.rest_pose.len();
        self.output[..n].copy_from_slice(self.rest_pose);
        let start = R::from_f32(self.clip.start());
        let end = R::from_f32(self.clip.end());
        // max/min in this order map NaN to the start for f32.
        let t = self.time.max(start).min(end);
        let time = ClipTime::new(&self.clip);
        for i in 0..self.clip.num_tracks() {
            let (joint, target, v) = self.cursor[i].sample(&self.clip, i, t, &time, self.rotation);
            let (g, l) = (joint / 4, joint % 4);
            let Some(out) = self.output.get_mut(g) else { continue };
            if target == TARGET_TRANSLATION {
                out.translation.x[l] = v[0];
                out.translation.y[l] = v[1];
                out.translation.z[l] = v[2];
            } else if target == TARGET_ROTATION {
                out.rotation.x[l] = v[0];
                out.rotation.y[l] = v[1];
                out.rotation.z[l] = v[2];
                out.rotation.w[l] = v[3];
            } else {
                out.scale.x[l] = v[0];
                out.scale.y[l] = v[1];
                out.scale.z[l] = v[2];
            }
        }
        Ok(())
    }
}
