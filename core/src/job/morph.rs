//! Morph targets: [`MorphWeightsJob`] samples a mesh's weights from a clip's morph-weight track
//! (or gives its default weights), [`MorphJob`] adds the weighted deltas of a mesh part's
//! targets to its bind-pose vertices, before skinning.
//!
//! Both work in place on caller memory: no allocation, no scratch. `MorphJob` copies the input
//! streams to the outputs, then visits only the targets whose weight is not zero and, of each,
//! only the vertices it moves (targets are stored sparse), so its cost is the number of active
//! deltas. Normals and tangents are not renormalized, as glTF 2.0 defines the morphed
//! attributes (a plain weighted sum); skinning and shaders normalize as they do for unmorphed
//! normals.

use crate::job::{check_streams, JobError};
use crate::math::{Vec3, Vec4};
use crate::morph::{MorphPart, MorphTargets, WeightTracks};
use crate::real::Real;

/// Samples the morph weights of one mesh at a clip time: the mesh's track in the clip's
/// [`WeightTracks`] when it has one (STEP, LINEAR or CUBICSPLINE keys, clamped to the first and
/// last key), else the mesh's default weights.
///
/// # Examples
///
/// ```
/// # fn demo(asset: sinew::asset::Asset<'_>) -> Result<(), sinew::job::JobError> {
/// use sinew::job::MorphWeightsJob;
/// # let (mesh, clip) = (0, 0);
/// if let Some(targets) = asset.morph_targets(mesh) {
///     let mut cursor = 0u16; // kept from frame to frame
///     let mut weights = [0.0f32; 8];
///     MorphWeightsJob::new(targets, asset.morph_weights(clip), 1.25, &mut cursor, &mut weights).run()?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MorphWeightsJob<'a, R: Real> {
    /// The mesh's morph targets ([`Asset::morph_targets`](crate::asset::Asset::morph_targets)).
    pub targets: MorphTargets<'a>,
    /// The clip's morph-weight tracks ([`Asset::morph_weights`](crate::asset::Asset::morph_weights));
    /// `None`, or tracks without one for this mesh, give the default weights.
    pub tracks: Option<WeightTracks<'a>>,
    /// Clip time in seconds; clamped into the clip's range (NaN reads as the start).
    pub time: R,
    /// Key cursor of the mesh's track, kept between calls (any value is a valid hint).
    pub cursor: &'a mut u16,
    /// One weight per target (at least `targets.num_targets()`; extra entries are untouched).
    pub output: &'a mut [R],
}

impl<'a, R: Real> MorphWeightsJob<'a, R> {
    /// The job sampling the weights of `targets`' mesh from `tracks` at `time` into `output`.
    #[must_use]
    pub fn new(
        targets: MorphTargets<'a>,
        tracks: Option<WeightTracks<'a>>,
        time: R,
        cursor: &'a mut u16,
        output: &'a mut [R],
    ) -> Self {
        MorphWeightsJob { targets, tracks, time, cursor, output }
    }
}

impl<R: Real> MorphWeightsJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::OutputTooSmall`] when `output` has fewer entries than the mesh has targets.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.output.len() < self.targets.num_targets() {
            return Err(JobError::OutputTooSmall);
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
        let n = self.targets.num_targets();
        let out = &mut self.output[..n];
        let track = self.tracks.and_then(|w| Some((w, w.track_of_mesh(self.targets.mesh())?)));
        match track {
            Some((w, i)) => {
                // max/min in this order map NaN to the start for f32.
                let t = self.time.max(R::from_f32(w.start())).min(R::from_f32(w.end()));
                w.sample(i, t, self.cursor, out);
            }
            None => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = self.targets.default_weight(i);
                }
            }
        }
        Ok(())
    }
}

/// Applies morph weights to one mesh part's vertex stream: each output is its input plus the
/// sum over targets of `weight × delta` (positions, and normals and tangents when both the
/// streams and the deltas are there; a tangent's w is kept). Run it on the bind-pose vertices,
/// then skin the outputs.
///
/// # Examples
///
/// ```
/// # fn demo(asset: sinew::asset::Asset<'_>) -> Result<(), sinew::job::JobError> {
/// use sinew::job::MorphJob;
/// use sinew::math::Vec3;
/// # let (mesh, weights) = (0, [0.5f32; 2]);
/// if let (Some(m), Some(targets)) = (asset.mesh(mesh), asset.morph_targets(mesh)) {
///     for (part, morph) in m.parts().zip(targets.parts()) {
///         let n = part.num_vertices();
///         let mut bind = vec![Vec3::ZERO; n];
///         let bind = part.read_positions(&mut bind)?;
///         let mut morphed = vec![Vec3::ZERO; n];
///         MorphJob::new(morph, &weights, bind, &mut morphed).run()?;
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MorphJob<'a, R: Real> {
    /// The part's targets ([`MorphTargets::parts`]).
    pub part: MorphPart<'a>,
    /// One weight per target (from [`MorphWeightsJob`]); finite.
    pub weights: &'a [R],
    /// Bind-pose positions, at least the part's vertex count.
    pub positions: &'a [Vec3<R>],
    /// Bind-pose normals, with `out_normals`.
    pub normals: Option<&'a [Vec3<R>]>,
    /// Bind-pose tangents (w: handedness), with `out_tangents`.
    pub tangents: Option<&'a [Vec4<R>]>,
    /// Morphed positions (at least the part's vertex count; extra entries are untouched).
    pub out_positions: &'a mut [Vec3<R>],
    /// Morphed normals.
    pub out_normals: Option<&'a mut [Vec3<R>]>,
    /// Morphed tangents.
    pub out_tangents: Option<&'a mut [Vec4<R>]>,
}

impl<'a, R: Real> MorphJob<'a, R> {
    /// The job morphing `positions` of `part` with `weights` into `out_positions`.
    #[must_use]
    pub fn new(
        part: MorphPart<'a>,
        weights: &'a [R],
        positions: &'a [Vec3<R>],
        out_positions: &'a mut [Vec3<R>],
    ) -> Self {
        MorphJob {
            part,
            weights,
            positions,
            normals: None,
            tangents: None,
            out_positions,
            out_normals: None,
            out_tangents: None,
        }
    }

    /// The job with normals from `normals` to `out`.
    #[must_use]
    pub fn with_normals(self, normals: &'a [Vec3<R>], out: &'a mut [Vec3<R>]) -> Self {
        MorphJob { normals: Some(normals), out_normals: Some(out), ..self }
    }

    /// The job with tangents (xyz morphed, w kept) from `tangents` to `out`.
    #[must_use]
    pub fn with_tangents(self, tangents: &'a [Vec4<R>], out: &'a mut [Vec4<R>]) -> Self {
        MorphJob { tangents: Some(tangents), out_tangents: Some(out), ..self }
    }
}

impl<R: Real> MorphJob<'_, R> {
    /// Checks the job's inputs.
    ///
    /// # Errors
    ///
    /// [`JobError::InputTooSmall`] when `weights` has fewer entries than the part has targets
    /// or an input stream fewer than its vertices; [`JobError::MismatchedStreams`] when normals
    /// or tangents are given without their output or the reverse;
    /// [`JobError::OutputTooSmall`] when an output is shorter than the part;
    /// [`JobError::InvalidWeight`] when a weight is NaN or infinite.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.part.num_vertices();
        let short = self.weights.len() < self.part.num_targets() || self.positions.len() < n;
        check_streams(
            n,
            short,
            (self.normals, self.out_normals.as_deref()),
            (self.tangents, self.out_tangents.as_deref()),
            self.out_positions,
        )?;
        if !self.weights[..self.part.num_targets()].iter().all(|w| w.is_finite()) {
            return Err(JobError::InvalidWeight);
        }
        Ok(())
    }

    /// Validates, then morphs.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate); nothing is written on error.
    pub fn run(&mut self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.part.num_vertices();
        self.out_positions[..n].copy_from_slice(&self.positions[..n]);
        if let (Some(src), Some(dst)) = (self.normals, self.out_normals.as_deref_mut()) {
            dst[..n].copy_from_slice(&src[..n]);
        }
        if let (Some(src), Some(dst)) = (self.tangents, self.out_tangents.as_deref_mut()) {
            dst[..n].copy_from_slice(&src[..n]);
        }
        let positions = &mut self.out_positions[..n];
        let mut normals = self.out_normals.as_deref_mut().map(|s| &mut s[..n]);
        let mut tangents = self.out_tangents.as_deref_mut().map(|s| &mut s[..n]);
        for (target, &w) in self.part.targets().zip(self.weights) {
            if w == R::ZERO {
                continue;
            }
            // One pass over the moved vertices, every stored attribute at once.
            let nrm = normals.as_deref_mut().filter(|_| target.has_normals());
            let tan = tangents.as_deref_mut().filter(|_| target.has_tangents());
            match (nrm, tan) {
                (None, None) => {
                    for k in 0..target.len() {
                        if let Some(p) = positions.get_mut(target.vertex(k)) {
                            *p += target.position::<R>(k) * w;
                        }
                    }
                }
                (nrm, tan) => {
                    let (mut nrm, mut tan) = (nrm, tan);
                    for k in 0..target.len() {
                        let v = target.vertex(k);
                        let Some(p) = positions.get_mut(v) else { continue };
                        *p += target.position::<R>(k) * w;
                        if let Some(o) = nrm.as_deref_mut().and_then(|o| o.get_mut(v)) {
                            *o += target.normal::<R>(k) * w;
                        }
                        if let Some(t) = tan.as_deref_mut().and_then(|o| o.get_mut(v)) {
                            let d = target.tangent::<R>(k) * w;
                            *t = Vec4::new(t.x + d.x, t.y + d.y, t.z + d.z, t.w);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
