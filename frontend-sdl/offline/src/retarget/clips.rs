//! Whole clips retargeted: a source model's clips resampled as [`RigClip`]s of the target rig,
//! for the baker to compress like any imported clip.
//!
//! # Sampling
//!
//! Each clip is sampled (the source with exact slerp, then [`Retarget::pose`]) at every key time
//! of its source channels (the union over its channels, from the source [`Rig`] when given,
//! else a uniform grid of at most [`ResampleOptions::max_step`]) and at points between them.
//! Between two source key times the target pose is not a linear function of time (a target
//! joint's local rotation is a product of source slerps and constant offsets), so each interval
//! is cut into 1, 2, 4, ... equal parts until linear interpolation of the samples (slerp for
//! rotations, lerp for the hips' translation) stays within [`ResampleOptions::tolerance`] of the
//! exact retargeted pose at the middle of every part, measured as the baker measures its bound:
//! the displacement of virtual vertices at [`ResampleOptions::shell`] from every joint, in model
//! space, through the hierarchy. Parts are also never longer than
//! [`ResampleOptions::max_step`]. The baker then holds its own bound against these keys, so the
//! baked clip is within the sum of both bounds of the exact retarget.
//!
//! # Channels
//!
//! Every target joint gets a LINEAR rotation channel (the joints the retarget leaves at rest
//! stay constant and the baker collapses them to one key), and the hips a LINEAR translation
//! channel. Translations and scales of other joints stay at rest, as [`Retarget::pose`] leaves
//! them.

use std::fmt;

use sinew::clip::RotationInterpolation;
use sinew::math::{Mat4, Quat, SoaTransform, Transform, Vec3};

use super::{Retarget, RetargetError};
use crate::model::Model;
use crate::rig::{ChannelTarget, Interpolation, Rig, RigChannel, RigClip};

/// How densely [`retarget_clips`] samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResampleOptions {
    /// Largest displacement, in meters, of a virtual vertex between the linearly interpolated
    /// samples and the exact retargeted pose (default 1e-5: a tenth of the baker's default
    /// bound, so the baked clip stays within 1.1 times the bake's bound of the exact retarget).
    pub tolerance: f64,
    /// Distance of the virtual vertices from each joint, in meters (default 0.03, the
    /// baker's).
    pub shell: f64,
    /// Longest interval between two samples, in seconds (default 1/60).
    pub max_step: f64,
    /// Most parts the refinement cuts one source key interval into (default 64); an interval
    /// that needs more keeps that many (or as many as `max_step` alone asks, if more).
    pub max_parts: usize,
}

impl Default for ResampleOptions {
    fn default() -> Self {
        ResampleOptions { tolerance: 1.0e-5, shell: 0.03, max_step: 1.0 / 60.0, max_parts: 64 }
    }
}

/// Why [`retarget_clips`] failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RetargetClipsError {
    /// The source model has no clip of that index.
    UnknownClip {
        /// The index asked for.
        index: usize,
        /// The source's clip count.
        count: usize,
    },
    /// The target rig's joints are not the skeleton the retarget's target model has.
    TargetMismatch {
        /// Joints of the rig.
        rig: usize,
        /// Joints of the target model's skeleton.
        model: usize,
    },
    /// The source rig given for key times does not have the source model's clips.
    SourceMismatch {
        /// What differs.
        detail: String,
    },
    /// The options are not positive and finite.
    InvalidOptions,
    /// A clip would need more keys than a track holds (65,535).
    TooManyKeys {
        /// The clip's name.
        clip: String,
        /// The keys it would need.
        keys: usize,
    },
    /// Sampling or retargeting failed.
    Retarget(RetargetError),
}

impl fmt::Display for RetargetClipsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownClip { index, count } => write!(f, "no source clip {index} (the source has {count})"),
            Self::TargetMismatch { rig, model } => {
                write!(f, "the target rig has {rig} joints but the target model {model}")
            }
            Self::SourceMismatch { detail } => write!(f, "the source rig does not match the source model: {detail}"),
            Self::InvalidOptions => f.write_str("resampling tolerance, shell and step must be positive and finite"),
            Self::TooManyKeys { clip, keys } => {
                write!(f, "clip '{clip}' would need {keys} keys per track (at most 65535)")
            }
            Self::Retarget(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RetargetClipsError {}

impl From<RetargetError> for RetargetClipsError {
    fn from(e: RetargetError) -> Self {
        RetargetClipsError::Retarget(e)
    }
}

impl From<sinew::job::JobError> for RetargetClipsError {
    fn from(e: sinew::job::JobError) -> Self {
        RetargetClipsError::Retarget(RetargetError::Job(e))
    }
}

/// Most keys a baked track holds.
const MAX_KEYS: usize = u16::MAX as usize;

/// The source model's clips `clips` (indices, in that order) retargeted onto `target`, the rig
/// `retarget`'s target model was baked from (same joints, same order), as clips of that rig
/// with the source clips' names (see the [module documentation](self)).
///
/// `source_rig`, the rig the source model was baked from, gives the source key times; without
/// it (a `.sinew` source) the clips are sampled on a uniform grid of
/// [`ResampleOptions::max_step`], refined the same way.
///
/// # Errors
///
/// [`RetargetClipsError::UnknownClip`] for an index past the source's clips,
/// [`RetargetClipsError::TargetMismatch`] and [`RetargetClipsError::SourceMismatch`] when the
/// rigs do not fit the models, [`RetargetClipsError::InvalidOptions`],
/// [`RetargetClipsError::TooManyKeys`], and [`RetargetClipsError::Retarget`] when a pose cannot
/// be sampled or retargeted.
pub fn retarget_clips(
    target: &Rig,
    source: &Model,
    source_rig: Option<&Rig>,
    retarget: &Retarget<'_>,
    clips: &[usize],
    opts: &ResampleOptions,
) -> Result<Vec<RigClip>, RetargetClipsError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(opts.tolerance) || !positive(opts.shell) || !positive(opts.max_step) || opts.max_parts == 0 {
        return Err(RetargetClipsError::InvalidOptions);
    }
    let model = retarget.target();
    let n = model.skeleton().num_joints();
    if target.joints.len() != n {
        return Err(RetargetClipsError::TargetMismatch { rig: target.joints.len(), model: n });
    }
    let asset = source.asset();
    let count = asset.num_clips();
    if let Some(r) = source_rig {
        if r.clips.len() != count {
            return Err(RetargetClipsError::SourceMismatch {
                detail: format!("{} clips in the rig, {count} in the model", r.clips.len()),
            });
        }
    }
    let unit = target.meters_per_unit.filter(|u| *u > 0.0 && u.is_finite()).unwrap_or(1.0);
    let sampler = Sampler {
        source,
        retarget,
        model,
        tolerance: (opts.tolerance / unit) as f32,
        shell: (opts.shell / unit) as f32,
        cursor: Vec::new(),
        pose: Vec::new(),
    };
    let mut sampler = sampler;
    let mut out = Vec::with_capacity(clips.len());
    for &index in clips {
        let clip = asset.clip(index).ok_or(RetargetClipsError::UnknownClip { index, count })?;
        let name = clip.name().to_string();
        let keys = match source_rig.and_then(|r| r.clips.get(index)) {
            Some(rc) => key_times(rc),
            None => Vec::new(),
        };
        let keys = if keys.is_empty() { grid(clip.start(), clip.end(), opts.max_step) } else { keys };
        let samples = sampler.resample(index, &keys, opts)?;
        if samples.len() > MAX_KEYS {
            return Err(RetargetClipsError::TooManyKeys { clip: name, keys: samples.len() });
        }
        out.push(to_clip(name, &samples, retarget.hips().0, n));
    }
    Ok(out)
}

/// Every distinct key time of a rig clip's joint channels, sorted.
fn key_times(clip: &RigClip) -> Vec<f32> {
    let mut t: Vec<f32> =
        clip.channels.iter().flat_map(|c| c.times.iter().copied()).filter(|t| t.is_finite()).collect();
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

/// `start`, `end` and equal steps of at most `step` between them (`start` alone when they are
/// equal or not in order).
fn grid(start: f32, end: f32, step: f64) -> Vec<f32> {
    if !(start.is_finite() && end.is_finite() && end > start) {
        return vec![if start.is_finite() { start } else { 0.0 }];
    }
    let parts = (f64::from(end - start) / step).ceil().clamp(1.0, MAX_KEYS as f64) as usize;
    (0..=parts).map(|i| start + (end - start) * (i as f32 / parts as f32)).collect()
}

/// One sample: a time and the target's local transform of every joint.
struct Sample {
    time: f32,
    joints: Vec<Transform<f32>>,
}

/// Retargeted poses and their error against linear interpolation.
struct Sampler<'s, 'r, 'm> {
    source: &'s Model,
    retarget: &'r Retarget<'m>,
    model: &'m Model,
    /// The bound, in scene units.
    tolerance: f32,
    /// The shell, in scene units.
    shell: f32,
    cursor: Vec<u16>,
    pose: Vec<SoaTransform<f32>>,
}

impl Sampler<'_, '_, '_> {
    /// The exact retargeted target pose of clip `clip` at `time`.
    fn at(&mut self, clip: usize, time: f32) -> Result<Sample, RetargetClipsError> {
        self.source.sample(Some(clip), time, RotationInterpolation::Slerp, &mut self.cursor, &mut self.pose)?;
        let pose = self.retarget.pose(&self.pose)?;
        let n = self.model.skeleton().num_joints();
        let joints = (0..n).map(|k| pose.get(k / 4).map_or(Transform::IDENTITY, |s| s.lane(k % 4))).collect();
        Ok(Sample { time, joints })
    }

    /// Samples at `keys` and between them (see the [module documentation](self)).
    fn resample(
        &mut self,
        clip: usize,
        keys: &[f32],
        opts: &ResampleOptions,
    ) -> Result<Vec<Sample>, RetargetClipsError> {
        let mut out = Vec::new();
        let Some(&first) = keys.first() else { return Ok(out) };
        out.push(self.at(clip, first)?);
        for pair in keys.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let span = f64::from(b - a);
            // Parts of at most `max_step` first, then up to `max_parts` (or those, if more).
            let mut parts = ((span / opts.max_step).ceil() as usize).clamp(1, MAX_KEYS);
            let cap = parts.max(opts.max_parts);
            // Cut the interval until every part's middle is within the tolerance.
            let samples = loop {
                let samples = (1..=parts)
                    .map(|i| self.at(clip, a + (b - a) * (i as f32 / parts as f32)))
                    .collect::<Result<Vec<_>, _>>()?;
                if parts >= cap {
                    break samples;
                }
                let mut ok = true;
                let mut prev = out.last().map(|s| (s.time, s.joints.clone()));
                for s in &samples {
                    let Some((t0, j0)) = prev.take() else { break };
                    let mid = 0.5 * (t0 + s.time);
                    let exact = self.at(clip, mid)?;
                    let lerped: Vec<Transform<f32>> =
                        j0.iter().zip(&s.joints).map(|(x, y)| interpolate(x, y, 0.5)).collect();
                    if self.error(&exact.joints, &lerped)? > self.tolerance {
                        ok = false;
                        break;
                    }
                    prev = Some((s.time, s.joints.clone()));
                }
                if ok {
                    break samples;
                }
                parts = (parts * 2).min(cap);
            };
            out.extend(samples);
        }
        Ok(out)
    }

    /// The largest displacement of a joint or of a virtual vertex at the shell (along each of
    /// the joint's axes) between two local poses, in model space.
    fn error(&self, a: &[Transform<f32>], b: &[Transform<f32>]) -> Result<f32, RetargetClipsError> {
        let (wa, wb) = (self.world(a)?, self.world(b)?);
        let s = self.shell;
        let mut worst = 0.0f32;
        for (ma, mb) in wa.iter().zip(&wb) {
            let dp = ma.translation() - mb.translation();
            worst = worst.max(dp.length());
            for i in 0..3 {
                let (ca, cb) = (ma.col(i), mb.col(i));
                let dc = Vec3::new(ca.x - cb.x, ca.y - cb.y, ca.z - cb.z);
                worst = worst.max((dp + dc * s).length()).max((dp - dc * s).length());
            }
        }
        Ok(worst)
    }

    /// Model-space matrices of a local pose given per joint.
    fn world(&self, joints: &[Transform<f32>]) -> Result<Vec<Mat4<f32>>, RetargetClipsError> {
        let mut pose = vec![SoaTransform::IDENTITY; joints.len().div_ceil(4)];
        for (k, t) in joints.iter().enumerate() {
            if let Some(s) = pose.get_mut(k / 4) {
                s.set_lane(k % 4, t);
            }
        }
        let mut out = Vec::new();
        self.model.world(&pose, &mut out)?;
        Ok(out)
    }
}

/// `a` to `b` at `t`: rotations by shortest-path slerp (as LINEAR channels play), translations
/// and scales linearly.
fn interpolate(a: &Transform<f32>, b: &Transform<f32>, t: f32) -> Transform<f32> {
    Transform {
        translation: a.translation.lerp(b.translation, t),
        rotation: a.rotation.slerp(b.rotation, t),
        scale: a.scale.lerp(b.scale, t),
    }
}

/// The samples as a rig clip named `name`: a LINEAR rotation channel per joint (each key in the
/// hemisphere of the one before) and a LINEAR translation channel for `hips`.
fn to_clip(name: String, samples: &[Sample], hips: usize, joints: usize) -> RigClip {
    let times: Vec<f32> = samples.iter().map(|s| s.time).collect();
    let mut channels = Vec::with_capacity(joints + 1);
    for k in 0..joints {
        let mut values = Vec::with_capacity(4 * samples.len());
        let mut prev: Option<Quat<f32>> = None;
        for s in samples {
            let mut q = s.joints.get(k).map_or(Quat::IDENTITY, |t| t.rotation);
            if prev.is_some_and(|p| p.dot(q) < 0.0) {
                q = Quat { x: -q.x, y: -q.y, z: -q.z, w: -q.w };
            }
            values.extend([q.x, q.y, q.z, q.w]);
            prev = Some(q);
        }
        channels.push(RigChannel {
            joint: k,
            target: ChannelTarget::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values,
        });
        if k == hips {
            let values = samples
                .iter()
                .flat_map(|s| {
                    let t = s.joints.get(k).map_or(Vec3::ZERO, |t| t.translation);
                    [t.x, t.y, t.z]
                })
                .collect();
            channels.push(RigChannel {
                joint: k,
                target: ChannelTarget::Translation,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values,
            });
        }
    }
    RigClip { name, channels, weights: Vec::new() }
}
