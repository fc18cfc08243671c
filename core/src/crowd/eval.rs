//! Evaluating a crowd's planned poses: the rig they share, the per-thread work buffers, and the
//! batches over disjoint parts of the palette buffer.

use super::{CrowdError, CrowdEval, PoseKey, ROW_FLOATS};
use crate::clip::{Clip, RotationInterpolation, SoaTrackCache};
use crate::job::{BlendingJob, Layer, LocalToModelJob, SamplingJob, SkinMatrixJob};
use crate::limits::MAX_CROWD_LAYERS;
use crate::math::{Mat4, SoaTransform};
use crate::real::Real;
use crate::skeleton::SkeletonView;

/// What every instance of a crowd shares: the skeleton, the skin's joints and inverse binds
/// (the palette, in skin order), the rotation interpolation and the blending threshold.
#[derive(Debug, Clone, Copy)]
pub struct CrowdRig<'a, R: Real> {
    skeleton: SkeletonView<'a, R>,
    joints: &'a [u16],
    inverse_bind: &'a [Mat4<R>],
    /// How LINEAR rotation tracks are interpolated.
    pub rotation: RotationInterpolation,
    /// The blending job's threshold for two-layer poses.
    pub threshold: R,
}

impl<'a, R: Real> CrowdRig<'a, R> {
    /// The rig of `skeleton` with palette joint `i` being skeleton joint `joints[i]` bound by
    /// `inverse_bind[i]`; corrected nlerp and a blending threshold of 0.1.
    ///
    /// # Errors
    ///
    /// [`CrowdError::InvalidRig`] when the two lists differ in length, are empty, or a joint is
    /// past the skeleton.
    pub fn new(
        skeleton: SkeletonView<'a, R>,
        joints: &'a [u16],
        inverse_bind: &'a [Mat4<R>],
    ) -> Result<Self, CrowdError> {
        if joints.len() != inverse_bind.len()
            || joints.is_empty()
            || joints.iter().any(|&j| usize::from(j) >= skeleton.num_joints())
        {
            return Err(CrowdError::InvalidRig);
        }
        Ok(CrowdRig {
            skeleton,
            joints,
            inverse_bind,
            rotation: RotationInterpolation::default(),
            threshold: R::ratio(1, 10),
        })
    }

    /// Palette joints.
    #[must_use]
    pub fn palette_joints(&self) -> usize {
        self.joints.len()
    }

    /// The skeleton.
    #[must_use]
    pub fn skeleton(&self) -> SkeletonView<'a, R> {
        self.skeleton
    }

    /// Evaluates `key` into `out` (at least `12 × palette joints` floats): samples each layer
    /// at its frame (`frame / fps` seconds from the clip's start, at most its end), blends two
    /// layers by weight, walks the hierarchy and writes each palette joint's three skin-matrix
    /// rows.
    ///
    /// # Errors
    ///
    /// [`CrowdError::NoSuchClip`] (instance 0) for a clip past `clips`,
    /// [`CrowdError::PaletteTooSmall`], or a job's error.
    pub fn evaluate(
        &self,
        key: &PoseKey,
        clips: &[Clip<'_>],
        fps: f32,
        work: &mut CrowdWork<'_, R>,
        out: &mut [f32],
    ) -> Result<(), CrowdError> {
        let soa = self.skeleton.num_soa_joints();
        let rest = self.skeleton.rest_pose();
        let np = self.joints.len();
        let out = out.get_mut(..np * ROW_FLOATS).ok_or(CrowdError::PaletteTooSmall)?;
        let (poses, blended) = work.poses.split_at_mut((MAX_CROWD_LAYERS * soa).min(work.poses.len()));
        // The caches stay warm from one pose to the next (poses come sorted by clip and
        // frame, so most lanes stay in their key interval or move on by one key): a cache
        // gives the bits of an empty one whatever it sampled before, so a key's palette is
        // the same bits whichever thread, batch or earlier key evaluated it.
        let mut weights = [R::ZERO; MAX_CROWD_LAYERS];
        let mut n = 0;
        for ((layer, (clip, frame, weight)), (pose, cache)) in key
            .layers()
            .enumerate()
            .zip(poses.chunks_exact_mut(soa.max(1)).zip(work.caches.chunks_exact_mut(soa.max(1))))
        {
            let c = *clips.get(usize::from(clip)).ok_or(CrowdError::NoSuchClip { instance: 0, clip })?;
            let t = (c.start() + frame as f32 / fps).min(c.end());
            SamplingJob {
                clip: c,
                time: R::from_f32(t),
                rotation: self.rotation,
                rest_pose: rest,
                cursor: cache,
                output: pose,
            }
            .run()?;
            if let Some(w) = weights.get_mut(layer) {
                *w = R::from_f32(weight);
            }
            n = layer + 1;
        }
        let local: &[SoaTransform<R>] = match n {
            0 => rest,
            1 => poses.get(..soa).ok_or(CrowdError::Job(crate::job::JobError::ContextTooSmall))?,
            _ => {
                let (a, b) = poses.split_at(soa);
                let layers = [
                    Layer { transform: a, weight: weights[0], joint_weights: None },
                    Layer { transform: b, weight: weights[1], joint_weights: None },
                ];
                BlendingJob {
                    layers: &layers,
                    additive: &[],
                    rest_pose: rest,
                    threshold: self.threshold,
                    output: blended,
                }
                .run()?;
                blended
            }
        };
        LocalToModelJob { skeleton: self.skeleton, root: None, input: local, output: work.model, from: None, to: None }
            .run()?;
        SkinMatrixJob {
            model: work.model,
            inverse_bind: self.inverse_bind,
            joints: Some(self.joints),
            output: work.skin,
        }
        .run()?;
        for (m, rows) in work.skin.iter().zip(out.chunks_exact_mut(ROW_FLOATS)) {
            for (r, row) in rows.chunks_exact_mut(4).enumerate() {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = m.cols[c][r].to_f32();
                }
            }
        }
        Ok(())
    }
}

/// One thread's buffers for evaluating poses: sampling caches and poses per layer, the blended
/// pose, model matrices and the skin palette.
#[derive(Debug)]
pub struct CrowdWork<'w, R: Real> {
    caches: &'w mut [SoaTrackCache<R>],
    poses: &'w mut [SoaTransform<R>],
    model: &'w mut [Mat4<R>],
    skin: &'w mut [Mat4<R>],
}

impl<'w, R: Real> CrowdWork<'w, R> {
    /// The lengths the buffers need for `rig`: (caches, poses, model matrices, skin matrices)
    /// = (layers × SoA joints, (layers + 1) × SoA joints, joints, palette joints).
    #[must_use]
    pub fn sizes(rig: &CrowdRig<'_, R>) -> (usize, usize, usize, usize) {
        let soa = rig.skeleton.num_soa_joints();
        (MAX_CROWD_LAYERS * soa, (MAX_CROWD_LAYERS + 1) * soa, rig.skeleton.num_joints(), rig.joints.len())
    }

    /// Work over the caller's buffers, at least [`sizes`](Self::sizes) long. The caches stay
    /// warm from one pose to the next, and from one `CrowdWork` over them to the next: give
    /// them [`SoaTrackCache::EMPTY`] at first, and again when the clips' bytes are replaced
    /// (new bytes can reuse the address of freed ones); what they hold otherwise does not
    /// change a palette's bits. The other buffers may hold anything.
    #[must_use]
    pub fn new(
        caches: &'w mut [SoaTrackCache<R>],
        poses: &'w mut [SoaTransform<R>],
        model: &'w mut [Mat4<R>],
        skin: &'w mut [Mat4<R>],
    ) -> Self {
        CrowdWork { caches, poses, model, skin }
    }
}

/// The evaluations of one frame split into batches over disjoint parts of the palette buffer
/// ([`Crowd::batches`](super::Crowd::batches)).
#[derive(Debug)]
pub struct CrowdBatches<'p> {
    evals: &'p [CrowdEval],
    palette: &'p mut [f32],
    /// The slot `palette` starts at.
    base: usize,
    slot_floats: usize,
    /// Evaluations per batch (the last may have fewer).
    per: usize,
}

impl<'p> CrowdBatches<'p> {
    pub(super) fn new(evals: &'p [CrowdEval], palette: &'p mut [f32], slot_floats: usize, parts: usize) -> Self {
        let per = evals.len().div_ceil(parts.max(1)).max(1);
        CrowdBatches { evals, palette, base: 0, slot_floats, per }
    }
}

impl<'p> Iterator for CrowdBatches<'p> {
    type Item = CrowdBatch<'p>;

    fn next(&mut self) -> Option<CrowdBatch<'p>> {
        let (evals, rest) = self.evals.split_at(self.per.min(self.evals.len()));
        let last = evals.last()?.slot as usize;
        // A batch's part of the buffer runs from its first slot to the next batch's first slot
        // (the slots ascend), or to the buffer's end for the last.
        let end_slot = rest.first().map_or(last + 1, |e| e.slot as usize);
        let palette = core::mem::take(&mut self.palette);
        let split = if rest.is_empty() { palette.len() } else { (end_slot - self.base) * self.slot_floats };
        if split > palette.len() {
            self.evals = &[];
            return None;
        }
        let (mine, others) = palette.split_at_mut(split);
        let batch = CrowdBatch { evals, palette: mine, base: self.base, slot_floats: self.slot_floats };
        self.base = end_slot;
        self.palette = others;
        self.evals = rest;
        Some(batch)
    }
}

/// Some of a frame's evaluations and the part of the palette buffer their slots lie in.
#[derive(Debug)]
pub struct CrowdBatch<'p> {
    evals: &'p [CrowdEval],
    palette: &'p mut [f32],
    base: usize,
    slot_floats: usize,
}

impl CrowdBatch<'_> {
    /// The evaluations of the batch.
    #[must_use]
    pub fn evals(&self) -> &[CrowdEval] {
        self.evals
    }

    /// Evaluates each pose of the batch into its slot with `rig` (whose palette joints are the
    /// layout's), the crowd's `clips` and frame rate `fps`, and `work`.
    ///
    /// # Errors
    ///
    /// [`CrowdError::PaletteTooSmall`] when the buffer does not reach a slot (or the layout's
    /// slot is narrower than the rig's palette), or an evaluation's error; the slots before
    /// it are written.
    pub fn run<R: Real>(
        &mut self,
        rig: &CrowdRig<'_, R>,
        clips: &[Clip<'_>],
        fps: f32,
        work: &mut CrowdWork<'_, R>,
    ) -> Result<(), CrowdError> {
        if self.slot_floats < rig.palette_joints() * ROW_FLOATS {
            return Err(CrowdError::PaletteTooSmall);
        }
        for e in self.evals {
            let at = (e.slot as usize).checked_sub(self.base).ok_or(CrowdError::PaletteTooSmall)? * self.slot_floats;
            let out = self.palette.get_mut(at..at + self.slot_floats).ok_or(CrowdError::PaletteTooSmall)?;
            rig.evaluate(&e.key, clips, fps, work, out)?;
        }
        Ok(())
    }
}
