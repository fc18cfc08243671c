//! Sampling: evaluates a clip at a time into a local pose.

use crate::clip::{soa, Clip, ClipTime, RotationInterpolation, SoaTrackCache, TrackCache};
use crate::format::{TARGET_ROTATION, TARGET_TRANSLATION};
use crate::job::JobError;
use crate::math::SoaTransform;
use crate::platform::dispatch::{dispatch, PerSet};
use crate::real::Real;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u16 {}
    impl<R> Sealed for crate::clip::TrackCache<R> {}
    impl<R> Sealed for crate::clip::SoaTrackCache<R> {}
}

/// Per-instance sampling state, kept between calls:
/// - `u16`: a key cursor per track (2 bytes per track; decodes the two surrounding keys on
///   every call);
/// - [`TrackCache`]: a cache per track (decodes keys only when playback crosses one; about 60
///   bytes per track for `f32`);
/// - [`SoaTrackCache`]: a cache per SoA element of the pose, four joints' tracks in lanes
///   (decodes keys only when playback crosses one and interpolates four joints per
///   operation; about 580 bytes per four joints for `f32`). The fastest.
pub trait TrackState<R: Real>: sealed::Sealed + Copy + core::fmt::Debug {
    /// Entries needed to sample `clip` into a pose of `soa_len` elements: one per track
    /// unless the state says otherwise.
    #[doc(hidden)]
    fn needed(clip: &Clip<'_>, _soa_len: usize) -> usize {
        clip.num_tracks()
    }

    /// Samples `job.clip` at `t` (already clamped) into `job.output` (as long as
    /// `job.rest_pose`); `job.cursor` has at least [`needed`](Self::needed) entries.
    #[doc(hidden)]
    fn sample_pose(job: &mut SamplingJob<'_, R, Self>, t: R);
}

/// The per-track loop shared by cursors and per-track caches.
#[inline(always)]
fn sample_tracks<R: Real, C: TrackState<R>>(
    job: &mut SamplingJob<'_, R, C>,
    t: R,
    sample: impl Fn(&mut C, &Clip<'_>, usize, R, &ClipTime<R>, RotationInterpolation) -> (usize, u8, [R; 4]),
) {
    let SamplingJob { clip, rotation: rot, rest_pose: rest, cursor: states, output: out, .. } = job;
    let (rot, rest) = (*rot, *rest);
    let n = rest.len();
    out[..n].copy_from_slice(rest);
    let time = ClipTime::new(clip);
    for (i, state) in states.iter_mut().enumerate().take(clip.num_tracks()) {
        let (joint, target, v) = sample(state, clip, i, t, &time, rot);
        let (g, l) = (joint / 4, joint % 4);
        let Some(out) = out[..n].get_mut(g) else { continue };
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
}

impl<R: Real> TrackState<R> for u16 {
    fn sample_pose(job: &mut SamplingJob<'_, R, Self>, t: R) {
        sample_tracks(job, t, |c, clip, i, t, time, rot| clip.sample_track(i, t, time, c, rot));
    }
}

impl<R: Real> TrackState<R> for TrackCache<R> {
    fn sample_pose(job: &mut SamplingJob<'_, R, Self>, t: R) {
        sample_tracks(job, t, |c, clip, i, t, time, rot| clip.sample_track_cached(i, t, time, c, rot));
    }
}

impl<R: Real> TrackState<R> for SoaTrackCache<R> {
    fn needed(_clip: &Clip<'_>, soa_len: usize) -> usize {
        soa_len
    }
    fn sample_pose(job: &mut SamplingJob<'_, R, Self>, t: R) {
        dispatch(SoaSample { job, t });
    }
}

/// Sampling through [`SoaTrackCache`]s as a dispatched kernel.
struct SoaSample<'j, 'a, R: Real> {
    job: &'j mut SamplingJob<'a, R, SoaTrackCache<R>>,
    t: R,
}

impl<R: Real> PerSet for SoaSample<'_, '_, R> {
    type Output = ();
    #[inline(always)]
    fn build(self) {
        let SamplingJob { clip, rotation, rest_pose, cursor, output, .. } = self.job;
        soa::build::sample_pose(clip, self.t, *rotation, rest_pose, cursor, output);
    }
    #[cfg(sinew_dispatch)]
    #[inline(always)]
    fn v3(self) {
        let SamplingJob { clip, rotation, rest_pose, cursor, output, .. } = self.job;
        soa::v3::sample_pose(clip, self.t, *rotation, rest_pose, cursor, output);
    }
}

/// Samples every track of a clip at `time` into a SoA local pose; joints without tracks (and
/// untracked properties) keep the rest pose.
///
/// # Examples
///
/// The baked character's walk, whose root moves forward at 1.2 m/s, sampled with `u16` key
/// cursors (kept from frame to frame by the caller), then with the faster [`SoaTrackCache`]:
///
/// ```
/// use sinew::asset::Asset;
/// use sinew::clip::{RotationInterpolation, SoaTrackCache};
/// use sinew::job::SamplingJob;
/// use sinew::math::SoaTransform;
/// use sinew::skeleton::Skeleton;
///
/// # let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/character.sinew"));
/// let asset = Asset::parse(bytes)?;
/// let skeleton: Skeleton<f32, 6> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
/// let walk = asset.clip_by_name("walk").ok_or("no walk")?;
///
/// let mut cursors = vec![0u16; walk.num_tracks()];
/// let mut pose = [SoaTransform::IDENTITY; 6];
/// for time in [0.25, 0.5] {
///     SamplingJob {
///         clip: walk,
///         time,
///         rotation: RotationInterpolation::default(),
///         rest_pose: skeleton.rest_pose(),
///         cursor: &mut cursors,
///         output: &mut pose,
///     }
///     .run()?;
/// }
/// // Joint 0 (the root) is lane 0 of element 0: 0.6 m forward after 0.5 s.
/// let root = pose[0].lane(0);
/// assert!((root.translation.z - 0.6).abs() < 1e-4);
///
/// // A cache per SoA element: keys are decoded only when playback crosses them.
/// let mut caches = [SoaTrackCache::EMPTY; 6];
/// let mut cached = [SoaTransform::IDENTITY; 6];
/// SamplingJob {
///     clip: walk,
///     time: 0.5,
///     rotation: RotationInterpolation::default(),
///     rest_pose: skeleton.rest_pose(),
///     cursor: &mut caches,
///     output: &mut cached,
/// }
/// .run()?;
/// assert!((cached[0].lane(0).translation - root.translation).length() < 1e-5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// Per-instance sampling state (see [`TrackState`]); keep it between calls. `u16` key
    /// cursors (start zeroed; any content is valid) or [`TrackCache`] entries (start
    /// [`TrackCache::EMPTY`]): at least `clip.num_tracks()` entries. [`SoaTrackCache`] entries
    /// (start [`SoaTrackCache::EMPTY`]): at least `rest_pose.len()` entries.
    pub cursor: &'a mut [C],
    /// The local pose, at least `rest_pose.len()` elements; extra elements are untouched.
    pub output: &'a mut [SoaTransform<R>],
}

impl<'a, R: Real, C: TrackState<R>> SamplingJob<'a, R, C> {
    /// The job sampling `clip` at `time` into `output`, over `rest_pose` (the skeleton's), with
    /// the per-instance state `cursor` and the default rotation interpolation
    /// ([`RotationInterpolation::NlerpCorrected`]).
    #[must_use]
    pub fn new(
        clip: Clip<'a>,
        time: R,
        rest_pose: &'a [SoaTransform<R>],
        cursor: &'a mut [C],
        output: &'a mut [SoaTransform<R>],
    ) -> Self {
        SamplingJob { clip, time, rotation: RotationInterpolation::default(), rest_pose, cursor, output }
    }
}

impl<R: Real, C: TrackState<R>> SamplingJob<'_, R, C> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::ContextTooSmall`] when `cursor` has fewer entries than its type needs,
    /// [`JobError::OutputTooSmall`] when `output` is shorter than `rest_pose`,
    /// [`JobError::JointIndexOutOfRange`] when a track animates a joint past the pose.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.cursor.len() < C::needed(&self.clip, self.rest_pose.len()) {
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
        let start = R::from_f32(self.clip.start());
        let end = R::from_f32(self.clip.end());
        // max/min in this order map NaN to the start for f32.
        let t = self.time.max(start).min(end);
        C::sample_pose(self, t);
        Ok(())
    }
}
